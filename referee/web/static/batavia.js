window.RefereeBoards.batavia = null;
