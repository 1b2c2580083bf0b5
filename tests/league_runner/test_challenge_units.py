"""Issue 33 item 2 in pieces: the league file's ``rate_challenges``, how a challenge's signed
record is read (referee_tournament.league.challenges), the store taking it in once, and the
standings' ``challenges`` section (none without ``challenges``; the schema describes it)."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from openskill.models import PlackettLuce
from referee_tournament.config import ConfigError
from referee_tournament.ladder import Rating
from referee_tournament.league import challenges, standings
from referee_tournament.league.config import parse
from referee_tournament.league.store import LeagueStore

from referee.server.base.signing import RecordSigner, key_id

from .test_units import MINIMAL

ROOT = Path(__file__).resolve().parents[2]
LEAGUE = "l1"


def _signer(tmp_path: Path) -> RecordSigner:
    """The referee's own signer (referee.server.base.signing) on a fresh key: the runner's check
    must accept exactly what the referee signs."""
    from cryptography.hazmat.primitives import serialization
    private = Ed25519PrivateKey.generate()
    raw = private.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
    return RecordSigner(private, raw, key_id(raw), tmp_path / "k")


def _record(league: str = LEAGUE, rated: bool = True, ranks=(2, 1)) -> dict:
    return {"format": "referee-record/2", "game": "goa", "seats": 2, "match_id": "m1",
            "seat_names": ["ada", "champ"], "seat_bots": ["", "champ"],
            "result": {"scores": [3, 9], "ranks": list(ranks)},
            "lobby": {"seek": "s1", "rated": rated, "challenged": "champ", "preset": "bot",
                      "league": league}, "note": "é"}


def test_rate_challenges_is_the_organizers_and_needs_challenges():
    lg = MINIMAL["league"]
    assert parse(MINIMAL).rate_challenges is False
    cfg = parse({**MINIMAL, "league": {**lg, "challenges": True, "rate_challenges": True}})
    assert cfg.rate_challenges is True and cfg.public_settings()["rate_challenges"] is True
    with pytest.raises(ConfigError, match=r"^league\.rate_challenges: "):
        parse({**MINIMAL, "league": {**lg, "rate_challenges": True}})
    with pytest.raises(ConfigError, match=r"^league\.rate_challenges: "):
        parse({**MINIMAL, "league": {**lg, "challenges": True, "rate_challenges": 1}})


def test_a_challenge_is_rateable_only_when_its_record_is_the_referees_and_says_so(tmp_path):
    signer = _signer(tmp_path)
    key = signer.public_raw
    good = challenges.read("m1", signer.sign(_record()), LEAGUE, {"champ"}, key)
    assert good.rateable and not good.problem
    assert good.seating == [challenges.POOL, "champ"] and good.result["ranks"] == [2, 1]
    # changed after signing: the ranks turned round
    forged = signer.sign(_record())
    forged["result"]["ranks"] = [1, 2]
    bad = challenges.read("m1", forged, LEAGUE, {"champ"}, key)
    assert not bad.rateable and "does not match" in bad.problem
    unsigned = challenges.read("m1", _record(), LEAGUE, {"champ"}, key)
    assert not unsigned.rateable and "no signature" in unsigned.problem
    other_key = _signer(tmp_path).public_raw
    assert "another key" in challenges.read("m1", signer.sign(_record()), LEAGUE, {"champ"},
                                            other_key).problem
    assert "not a challenge of league" in challenges.read(
        "m1", signer.sign(_record(league="other")), LEAGUE, {"champ"}, key).problem
    assert "not a challenge of league" in challenges.read(
        "m2", signer.sign(_record()), LEAGUE, {"champ"}, key).problem
    # the challenger opened it unrated: never rated, though nothing is wrong with it
    casual = challenges.read("m1", signer.sign(_record(rated=False)), LEAGUE, {"champ"}, key)
    assert not casual.rateable and not casual.problem
    # no entrant of this league in it (the bot left the league)
    assert "no entrant" in challenges.read("m1", signer.sign(_record()), LEAGUE, set(),
                                           key).problem


def _taken(tmp_path: Path, rated: bool) -> tuple[LeagueStore, dict[str, Rating]]:
    tmp_path.mkdir(exist_ok=True)
    s = LeagueStore(tmp_path / "league.sqlite")
    signer = _signer(tmp_path)
    ch = challenges.read("m1", signer.sign(_record()), LEAGUE, {"champ"}, signer.public_raw)
    ratings: dict[str, Rating] = {"champ": Rating("champ", 30.0, 5.0, 4, 2.0)}
    model = PlackettLuce()
    changed = challenges.take_in(s, model, ratings, ch, 1_000, rated=rated)
    assert bool(changed) is rated
    # taken in again (a restarted runner, the same match listed again): nothing moves
    assert challenges.take_in(s, model, ratings, ch, 1_000, rated=rated) == []
    return s, ratings


def test_a_challenge_is_taken_in_once_and_rated_only_when_the_league_says_so(tmp_path):
    s, ratings = _taken(tmp_path / "a", rated=True)
    got = s.ratings()
    assert got["champ"].matches == 5 and got["champ"].mu > 30.0  # it beat its challenger
    assert got[challenges.POOL].matches == 1 and ratings == got
    assert len(s.challenge_rows()) == 1 and s.challenge_cursor() == 1_000
    assert s.count() == 0 and s.rows() == []  # no league match: max_matches, report, h2h
    s.close()
    s, ratings = _taken(tmp_path / "b", rated=False)
    assert s.ratings() == {} and ratings == {"champ": Rating("champ", 30.0, 5.0, 4, 2.0)}
    assert [rated for _, rated in s.challenge_rows()] == [False]
    s.close()


def test_standings_show_challenges_apart_and_only_when_the_league_takes_them(tmp_path):
    s, _ = _taken(tmp_path, rated=True)
    plain = standings.build(s, LEAGUE, ["goa"], running=0, paused=False)
    assert "challenges" not in plain  # a league without challenges: as before
    doc = standings.build(s, LEAGUE, ["goa"], running=0, paused=False, challenge_mode=True)
    assert [e["bot"] for e in doc["entries"]] == ["champ"]  # the pool is no entrant
    ch = doc["challenges"]
    assert ch["rated"] is True and ch["matches"] == 1 and ch["pool"]["matches"] == 1
    assert ch["by_entrant"] == [{"bot": "champ", "matches": 1, "wins": 1, "losses": 0,
                                 "draws": 0}]
    assert ch["recent"][0]["entrants"] == {"champ": "win"}
    schema = json.loads((ROOT / "referee" / "schema" / "standings.schema.json").read_text())
    jsonschema.validate(doc, schema)
    off = standings.build(s, LEAGUE, ["goa"], running=0, paused=False, challenge_mode=False)
    assert off["challenges"]["pool"] is None and off["challenges"]["rated"] is False
    jsonschema.validate(off, schema)
    s.close()


def test_the_league_report_names_no_pool_entrant(tmp_path):
    """The league's report (``referee-tournament report``) is about its own matches: the
    challengers' pool is no entrant of it."""
    from referee_tournament.league.report import report_only
    s, _ = _taken(tmp_path, rated=True)
    s.set_meta({"name": LEAGUE, "format": "league", "settings": json.dumps(
        {"games": [{"name": "goa", "seats": 2, "options": {}}], "time_policy": {}})})
    s.close()
    got = report_only(tmp_path)
    text = json.dumps(got)
    assert challenges.POOL not in text
