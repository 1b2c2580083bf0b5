window.RefereeBoards.santa_maria = null;
