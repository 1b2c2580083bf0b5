window.RefereeBoards.goa = null;
