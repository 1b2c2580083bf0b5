"""The league runner's parts that need no referee: its file, who is eligible, the choice of
game, balanced seats, crash streaks, the hosted archive's second check, its durable store and
the standings it builds (issue 19, item 1)."""
from __future__ import annotations

import io
import json
import os
import random
import stat
import tarfile
import textwrap
from pathlib import Path

import pytest
from referee_tournament.config import ConfigError
from referee_tournament.ladder import Rating
from referee_tournament.league import hosted, standings
from referee_tournament.league.config import load, parse
from referee_tournament.league.serve import (
    balanced,
    choose_game,
    eligible,
    next_streaks,
    seat_incidents,
)
from referee_tournament.league.store import LeagueStore, key_of, split_key

from referee.v1 import referee_pb2 as pb

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = {"league": {"name": "l1"}, "games": [{"name": "batavia", "seats": 3}]}


# ---------------------------------------------------------------- the league file

def test_example_league_file_parses_with_its_documented_defaults():
    cfg = load(ROOT / "examples" / "leagues" / "league.toml")
    assert cfg == parse({"league": {"name": "batavia-open", "title": "Batavia open league",
                                    "description": cfg.description},
                         "games": [{"name": "batavia", "seats": 3}]},
                        base_dir=cfg.base_dir, source=cfg.source)


def test_a_token_in_the_file_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"referee\.admin_token: a secret never goes"):
        parse({**MINIMAL, "referee": {"admin_token": "s3cret"}})


@pytest.mark.parametrize("raw, key", [
    ({"league": {"name": "a b"}, "games": [{"name": "goa"}]}, "league.name"),
    ({"league": {"name": "x"}}, "games"),
    ({**MINIMAL, "schedule": {"concurrency": 0}}, "schedule.concurrency"),
    ({**MINIMAL, "schedule": {"pairing": "elo"}}, "schedule.pairing"),
    ({**MINIMAL, "schedule": {"rotaton": "shuffle"}}, "schedule.rotaton"),
    ({**MINIMAL, "league": {"name": "x", "registration": "anyone"}}, "league.registration"),
    ({**MINIMAL, "smoke": {"game": "goa"}}, "smoke.game"),
    ({**MINIMAL, "time": {"on_expiry": "never"}}, "time.on_expiry"),
])
def test_bad_files_name_the_key(raw, key):
    with pytest.raises(ConfigError, match=f"^{key.replace('.', '[.]')}: "):
        parse(raw)


def test_public_settings_hold_no_path_nor_address(tmp_path):
    cfg = parse({**MINIMAL, "referee": {"address": "10.1.2.3:9", "unix_socket": "/s/x.sock",
                                        "admin_token_file": "tok"}})
    text = json.dumps(cfg.public_settings())
    assert "10.1.2.3" not in text and "/s/x.sock" not in text and "tok" not in text
    assert json.loads(text)["time_policy"]["join_ms"] == 10000


def test_a_league_file_lets_people_challenge_its_entrants():
    """league.challenges (issue 33) reaches the referee in the league's settings, which its
    lobby reads ("play the champion")."""
    assert parse(MINIMAL).public_settings()["challenges"] is False
    cfg = parse({**MINIMAL, "league": {**MINIMAL["league"], "challenges": True}})
    assert cfg.public_settings()["challenges"] is True
    with pytest.raises(ConfigError, match=r"^league\.challenges: "):
        parse({**MINIMAL, "league": {**MINIMAL["league"], "challenges": "yes"}})


# ---------------------------------------------------------------- scheduling

def _bot(name, kind=pb.BOT_KIND_REMOTE, status=pb.BOT_ACTIVE, connected=False, current=0,
         versions=()):
    return pb.LeagueBot(name=name, kind=kind, status=status, connected=connected,
                        current_version=current,
                        versions=[pb.BotVersion(bot=name, version=v, status=st)
                                  for v, st in versions])


def test_eligible_bots_are_active_and_connected_or_ready():
    bots = [
        _bot("remote-on", connected=True),
        _bot("remote-off"),
        _bot("remote-disabled", status=pb.BOT_DISABLED, connected=True),
        _bot("remote-pending", status=pb.BOT_PENDING, connected=True),
        _bot("hosted-ready", pb.BOT_KIND_HOSTED, current=2,
             versions=[(1, pb.VERSION_READY), (2, pb.VERSION_READY)]),
        _bot("hosted-new", pb.BOT_KIND_HOSTED, current=0, versions=[(1, pb.VERSION_PENDING)]),
        _bot("hosted-failed", pb.BOT_KIND_HOSTED, current=1, versions=[(1, pb.VERSION_FAILED)]),
    ]
    got = [(e.bot, e.version, e.hosted, e.key) for e in eligible(bots)]
    assert got == [("remote-on", 0, False, "remote-on"),
                   ("hosted-ready", 2, True, "hosted-ready@2")]


def test_a_0_1_0_referees_remote_bot_is_remote():
    """A 0.1.0 referee numbered BOT_KIND_REMOTE 0 (docs/releases.md): its connected remote
    bot still plays, not taken for a hosted bot without a ready version."""
    old = _bot("old-remote", kind=pb.BOT_KIND_UNSPECIFIED, connected=True)
    assert [(e.bot, e.hosted) for e in eligible([old])] == [("old-remote", False)]


def test_games_are_played_in_proportion_to_their_weight():
    cfg = parse({"league": {"name": "x"}, "games": [
        {"name": "batavia", "seats": 3, "weight": 2}, {"name": "santa_maria", "seats": 2}]})
    played: dict[str, int] = {}
    for _ in range(30):
        g = choose_game(cfg.games, played, available=5)
        assert g is not None
        played[g.name] = played.get(g.name, 0) + 1
    assert played == {"batavia": 20, "santa_maria": 10}
    # two bots available: only the two-seat game fits; one: none
    assert choose_game(cfg.games, {}, 2).name == "santa_maria"
    assert choose_game(cfg.games, {}, 1) is None


def test_balanced_rotation_gives_each_bot_its_least_played_seat():
    counts = {"a": [5, 0, 5], "b": [0, 5, 5], "c": [5, 5, 0]}
    for seed in range(5):
        assert balanced(["a", "b", "c"], counts, random.Random(seed)) == ["b", "a", "c"]


def test_key_round_trip():
    assert key_of("bot", 0) == "bot" and key_of("bot", 3) == "bot@3"
    assert split_key("bot@3") == ("bot", 3) and split_key("bot") == ("bot", 0)


def _seat(entrant, seat=0, **kw):
    return {"seat": seat, "entrant": entrant, "moves": 0, "timeouts": 0, **kw}


def test_start_crashes_count_in_a_row_and_a_played_match_resets_them():
    crash = {"seats": [_seat("h@1", crashed=True, exit_code=1, error="ImportError: x"),
                       _seat("remote", 1, moves=10)]}
    assert next_streaks({}, crash) == {"h@1": 1}
    assert next_streaks({"h@1": 2}, crash) == {"h@1": 3}
    played = {"seats": [_seat("h@1", moves=12, timeouts=1)]}
    assert next_streaks({"h@1": 2}, played) == {"h@1": 0}
    # a crash after moves of its own is a crash, not a start crash: the streak is left alone
    late = {"seats": [_seat("h@1", moves=5, crashed=True, exit_code=1)]}
    assert next_streaks({"h@1": 2}, late) == {}


def test_seat_incidents_carry_the_error_line():
    out = seat_incidents({"seats": [
        _seat("h@1", crashed=True, exit_code=1, error="ValueError: boom"),
        _seat("r", 1, moves=9, timeouts=2, rejected=1, refusal="move rejected: ILLEGAL_MOVE"),
        _seat("s", 2, forfeited=True)]})
    assert ("h@1", "crash", "ValueError: boom") in out
    assert ("r", "timeout", "2 move(s) played by the time policy") in out
    assert ("r", "refused", "move rejected: ILLEGAL_MOVE") in out
    assert ("s", "forfeit", "forfeited") in out


# ---------------------------------------------------------------- hosted archives

def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    return info, data


def _special(name: str, kind: bytes, target: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


GOOD = [_file("bot.toml", b'runtime = "python"\ncommand = ["bot.py", "--fast"]\n'),
        _file("bot.py", b"print('hi')\n")]


def test_a_good_archive_unpacks_and_its_manifest_names_the_command(tmp_path):
    dest = tmp_path / "b" / "v1"
    hosted.unpack(_tar(GOOD), dest, max_bytes=1 << 20, max_files=10)
    argv = hosted.command(dest, "python")
    assert argv[1:] == [str((dest / "bot.py").resolve()), "--fast"]
    assert stat.S_IMODE(os.stat(dest / "bot.py").st_mode) == 0o644


@pytest.mark.parametrize("members, problem", [
    ([_file("../evil.py")], "leaves the archive"),
    ([_file("/etc/evil.py")], "leaves the archive"),
    ([*GOOD, _special("link", tarfile.SYMTYPE, "/etc/passwd")], "not a regular file"),
    ([*GOOD, _special("hard", tarfile.LNKTYPE, "bot.py")], "not a regular file"),
    ([*GOOD, _special("dev", tarfile.CHRTYPE)], "not a regular file"),
    ([*GOOD, _special("fifo", tarfile.FIFOTYPE)], "not a regular file"),
    ([*GOOD, _file("bot.py", b"again")], "duplicate"),
    ([*GOOD, _file("a\nb.py")], "bad file name"),
    ([_file(f"f{i}") for i in range(12)], "more than 10 files"),
    ([_file("big", b"0" * 5000)], "more than 4096 bytes"),
])
def test_the_runner_refuses_a_bad_archive_again_and_keeps_nothing(tmp_path, members, problem):
    dest = tmp_path / "b" / "v1"
    with pytest.raises(hosted.BadArchive, match=problem):
        hosted.unpack(_tar(members), dest, max_bytes=4096, max_files=10)
    assert not dest.exists() and list((tmp_path / "b").iterdir()) == []


def test_not_an_archive_is_refused(tmp_path):
    with pytest.raises(hosted.BadArchive, match=r"not a \.tar\.gz"):
        hosted.unpack(b"PK\x03\x04 zip", tmp_path / "v1", max_bytes=100, max_files=1)


@pytest.mark.parametrize("manifest, problem", [
    (b'command = ["missing.py"]\n', "not in the archive"),
    (b'command = ["../bot.py"]\n', "leaves the archive"),
    (b'command = ["bot.py", "{token}"]\n', "may not contain"),
    (b'runtime = "java"\ncommand = ["bot.py"]\n', "runtime must be"),
    (b'command = 3\n', "command must be"),
])
def test_bad_manifests_are_refused(tmp_path, manifest, problem):
    dest = tmp_path / "v1"
    hosted.unpack(_tar([_file("bot.toml", manifest), _file("bot.py")]), dest,
                  max_bytes=1 << 20, max_files=10)
    with pytest.raises(hosted.BadArchive, match=problem):
        hosted.command(dest, "python")


def test_a_single_python_file_needs_no_manifest(tmp_path):
    dest = tmp_path / "v1"
    hosted.unpack(_tar([_file("mybot.py")]), dest, max_bytes=1 << 20, max_files=10)
    assert hosted.command(dest, "python")[1] == str((dest / "mybot.py").resolve())


# ---------------------------------------------------------------- store and standings

def test_a_league_database_from_before_request_ids_gains_the_column(tmp_path):
    """A match an older runner was creating has no request_id: the restarted runner cannot ask
    for it again, and marks it lost (as before)."""
    import sqlite3

    path = tmp_path / "league.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE matches (idx INTEGER PRIMARY KEY, match_id TEXT, game TEXT NOT"
                " NULL, seating TEXT NOT NULL, seed TEXT NOT NULL, status TEXT NOT NULL, started"
                " REAL NOT NULL, finished REAL, scores TEXT, ranks TEXT, outcome TEXT,"
                " record_path TEXT, error TEXT, hosted_tokens TEXT)")  # as it was
    con.execute("INSERT INTO matches (idx, game, seating, seed, status, started)"
                " VALUES (1, 'batavia', '[\"a\", \"b\"]', '5', 'creating', 0)")
    con.commit()
    con.close()
    s = LeagueStore(path)
    assert [(c.idx, c.request_id) for c in s.creating()] == [(1, "")]
    assert len(s.intend(2, "batavia", ["b", "a"], 6)) == 32  # new ones get one
    s.close()


def _result(mid, ranks, outcome=None):
    return {"match_id": mid, "scores": [10 - r for r in ranks], "ranks": ranks,
            "outcome": outcome or {"seats": []}}


def test_the_store_keeps_finished_results_and_ratings_across_a_reopen(tmp_path):
    path = tmp_path / "league.sqlite"
    s = LeagueStore(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # it holds running seat tokens
    s.intend(1, "batavia", ["a", "b@1"], 7)
    s.start(1, "m1", {0: "tok-a", 1: "tok-b"})
    s.intend(2, "batavia", ["b@1", "a"], 8)
    s.start(2, "m2", {0: "tok-c", 1: "tok-d"})
    assert [r.hosted_tokens for r in s.running()] == [{0: "tok-a", 1: "tok-b"},
                                                      {0: "tok-c", 1: "tok-d"}]
    s.finish(1, _result("m1", [1, 2]), [Rating("a", 27.0, 8.0, 1, 1.0),
                                        Rating("b@1", 23.0, 8.0, 1, 0.0)],
             [("b@1", "crash", "ValueError: boom")], {"b@1": 1})
    rid = s.intend(3, "batavia", ["a", "b@1"], 9)  # killed before CreateMatch answered
    s.close()
    s = LeagueStore(path)  # what a restarted runner (after kill -9) reads
    # the match being created, with the request_id its CreateMatch was sent with
    assert [(c.idx, c.seating, c.seed, c.request_id) for c in s.creating()] == [
        (3, ["a", "b@1"], 9, rid)] and len(rid) == 32
    assert [r.idx for r in s.running()] == [2]
    s.lose(3, "refused")
    assert s.creating() == [] and s.count("lost") == 1 and s.count() == 3
    assert s.ratings()["a"].mu == 27.0 and s.ratings()["b@1"].matches == 1
    assert s.streaks() == {"b@1": 1}
    assert s.db.execute("SELECT hosted_tokens FROM matches WHERE idx=1").fetchone() == (None,)
    assert s.incidents()["b@1"][0]["message"] == "ValueError: boom"
    assert [h["match"] for h in s.history()["a"]] == ["m1"]
    s.close()


def test_standings_per_version_with_incidents_history_and_head_to_head(tmp_path):
    s = LeagueStore(tmp_path / "league.sqlite")
    crash = {"seats": [_seat("a", 0, moves=5), _seat("b@1", 1, crashed=True, exit_code=1,
                                                        error="ImportError: no numpy")]}
    s.intend(1, "batavia", ["a", "b@1"], 1)
    s.start(1, "m1", {})
    s.finish(1, _result("m1", [1, 2], crash), [Rating("a", 27, 8, 1, 1), Rating("b@1", 23, 8,
                                                                                 1, 0)],
             seat_incidents(crash), {"b@1": 1})
    s.intend(2, "batavia", ["b@2", "a"], 2)
    s.start(2, "m2", {})
    s.finish(2, _result("m2", [1, 2]), [Rating("b@2", 28, 7, 1, 1), Rating("a", 26, 7.5, 2, 1)],
             [], {})
    doc = standings.build(s, "l1", ["batavia"], running=0, paused=False,
                          current={"b": 2})
    by = {(e["bot"], e["version"]): e for e in doc["entries"]}
    # the version that plays now stands for its bot; version 1's crash stays with version 1
    assert [(e["bot"], e["version"]) for e in doc["entries"]] == [("b", 2), ("a", 0)]
    assert by[("b", 2)]["incidents"]["crashes"] == 0 and by[("b", 2)]["wins"] == 1
    assert by[("a", 0)]["matches"] == 2 and len(by[("a", 0)]["history"]) == 2
    assert by[("a", 0)]["wins"] == 1 and by[("a", 0)]["win_rate"] == 0.5
    assert by[("a", 0)]["rating"] == pytest.approx(26 - 3 * 7.5)
    old = standings.build(s, "l1", ["batavia"], running=0, paused=False, current={"b": 1})
    b1 = next(e for e in old["entries"] if e["bot"] == "b")
    assert b1["version"] == 1 and b1["incidents"]["crashes"] == 1
    assert b1["recent_incidents"][0]["message"] == "ImportError: no numpy"
    h2h = {(h["bot"], h["opponent"]): h for h in doc["head_to_head"]}
    assert h2h[("a", "b")] == {"bot": "a", "opponent": "b", "matches": 2, "wins": 1,
                               "losses": 1, "draws": 0}
    assert doc["health"]["matches_total"] == 2
    schema = ROOT / "referee" / "schema" / "standings.schema.json"
    if schema.exists():  # the referee's schema (leagueweb): what PublishStandings accepts
        import jsonschema

        jsonschema.validate(doc, json.loads(schema.read_text()))
    s.close()


def test_league_cli_takes_no_token_on_the_command_line(tmp_path):
    from .. import tournament  # noqa: F401 - the runner's test helpers
    from ..tournament.conftest import run_cli

    f = tmp_path / "l.toml"
    f.write_text(textwrap.dedent("""
        [league]
        name = "x"
        [[games]]
        name = "batavia"
        seats = 3
    """))
    got = run_cli("league", "status", str(f), "--admin-token", "s3cret")
    assert got.returncode == 2 and "unrecognized arguments: --admin-token s3cret" in got.stderr
    old = os.environ.pop("REFEREE_ADMIN_TOKEN", None)
    try:
        got = run_cli("league", "status", str(f))
    finally:
        if old is not None:
            os.environ["REFEREE_ADMIN_TOKEN"] = old
    assert got.returncode == 2 and "no admin token" in got.stderr


def test_report_works_on_a_league_folder(tmp_path):
    from .helpers import finished_league_folder

    out = finished_league_folder(tmp_path)
    got = run_report(out)
    assert got.returncode == 0, got.stderr
    html = (out / "index.html").read_text()
    assert "league" in html and "b@1" in html and "Head to head" in html
    assert "sandboxed" in html  # the hosted version ran sandboxed
    data = json.loads((out / "results.json").read_text())
    assert {e["name"] for e in data["leaderboard"]} == {"a", "b@1"}
    assert next(e for e in data["leaderboard"] if e["name"] == "a")["mu"] == 27.0


def run_report(out: Path):
    from ..tournament.conftest import run_cli

    return run_cli("report", str(out))
