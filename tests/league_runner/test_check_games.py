"""Before any match, a league's games are checked against the referee's (issue 19 item 1: one
or more games with their options), and a game whose component sheet still holds provisional
values warns the organizer (item 6: "Opening a league on a game whose component sheet still
holds provisional values (Goa 2012: 71 of 106) warns the organizer")."""
from __future__ import annotations

import os
import subprocess
import textwrap

from referee_tournament.procs import LocalReferee

from ..tournament.conftest import cli_command


def _serve(tmp_path, ref, games: str) -> subprocess.CompletedProcess:
    f = tmp_path / "league.toml"
    f.write_text(textwrap.dedent(f"""
        [league]
        name = "checked"
        [referee]
        address = "{ref.address}"
    """) + textwrap.dedent(games))
    env = {**os.environ, "REFEREE_ADMIN_TOKEN": ref.admin_token}
    return subprocess.run([*cli_command(), "league", "serve", str(f), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


def test_bad_games_stop_the_league_and_provisional_sheets_warn(tmp_path):
    with LocalReferee(tmp_path / "ref") as ref:
        got = _serve(tmp_path, ref, """
            [[games]]
            name = "santa_maria"
            seats = 2
            [[games]]
            name = "batavia"
            seats = 9
            options = { colour = "red" }
            [[games]]
            name = "goa"
            seats = 2
            options = { edition = "2012" }
        """)
        said = " ".join(got.stderr.split())  # the console wraps long lines
        assert got.returncode == 1
        assert "games[1].seats: Batavia (Queen Games, 2008) takes 3-5 seats, not 9" in said
        assert "games[1].options.colour: batavia has no such option" in said
        # nothing was opened: the league does not exist on the referee
        status = subprocess.run([*cli_command(), "league", "status", str(tmp_path /
                                                                          "league.toml")],
                                capture_output=True, text=True, timeout=60, check=False,
                                env={**os.environ, "REFEREE_ADMIN_TOKEN": ref.admin_token})
        assert status.returncode == 1 and "NOT_FOUND" in status.stderr
        assert "Goa" in said and "provisional" in said and "referee sheet verify goa" in said
