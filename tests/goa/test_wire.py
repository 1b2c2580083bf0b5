"""The wire boundary: every legal move maps to its goa.Move and back unchanged (also through the
proto3 JSON of records); malformed moves are refused; a whole match is recorded and replayed."""
from __future__ import annotations

import random

import pytest
from google.protobuf import json_format

from referee.core.contract import MalformedMove
from referee.core.match import Match, replay
from referee.games.goa import moves
from referee.games.goa.catalog import EFFECT_COLONY_EXTRA
from referee.games.goa.state import ACTIONS
from referee.v1 import goa_pb2 as pb
from tests.goa.helpers import (
    GAME,
    card_ids,
    new_game,
    play,
    random_until,
    refresh,
    stack_deck,
)


@pytest.mark.parametrize("options", [{}, {"edition": "2004", "colony_card_timing": "before"},
                                     {"quick_starter": True, "bonanza": True}])
def test_every_legal_move_round_trips_through_proto_and_json(options):
    kinds = set()
    for seed in range(6):
        state = new_game(2 + seed % 3, seed, **options)
        rnd = random.Random(seed)
        while (d := GAME.decision(state)) is not None:
            for m in d.moves:
                msg = GAME.move_to_proto(m)
                back = GAME.move_from_proto(msg)
                assert (back == m and back is m) or back == m
                parsed = pb.Move()
                json_format.ParseDict(json_format.MessageToDict(msg), parsed)
                assert GAME.move_from_proto(parsed) == m
                kinds.add(msg.WhichOneof("kind"))
            GAME.apply(state, d.seat, rnd.choice(d.moves))
    assert len(kinds) >= 25


def test_malformed_moves_are_refused():
    with pytest.raises(MalformedMove):
        GAME.move_from_proto(pb.Move())
    with pytest.raises(MalformedMove):
        GAME.move_from_proto(pb.Move(found_colony=pb.FoundColony(colony=0)))
    with pytest.raises(MalformedMove):
        GAME.move_from_proto(pb.Move(place_flag=pb.PlaceFlag(cell=pb.Cell(row=7, col=0))))
    with pytest.raises(MalformedMove):
        GAME.move_from_proto(pb.Move(pay_spice=pb.PaySpice(land=0, spice=0)))


def test_match_record_replays():
    m = Match.create(GAME, {"edition": "2012", "bonanza": True}, 3, 1234)
    rnd = random.Random(3)
    while (d := m.decision()) is not None:
        m.submit(d.seat, rnd.choice(d.moves))
    rec = m.record()
    again = replay(GAME, rec)
    assert again.result() is not None and rec["result"]["scores"] == again.result().scores


def test_component_sheets_validate_and_count_provenance():
    for edition in ("2012", "2004"):
        sheet = GAME.default_components({"edition": edition})
        counts = sheet.provenance_counts
        assert sum(counts.values()) == len(sheet.values)
        assert counts["rulebook"] > 10
    doc = dict(GAME.default_components({"edition": "2012"}).document)
    values = dict(doc["values"])
    values["yield.ships.1"] = {"value": -1, "provenance": "rulebook", "source": "x"}
    with pytest.raises(ValueError):
        GAME.parse_components({**doc, "values": values})
    values = dict(doc["values"])
    values["typo"] = {"value": 1, "provenance": "provisional"}
    with pytest.raises(ValueError):
        GAME.parse_components({**doc, "values": values})


def test_colony_card_before_reveal_option():
    """2004 FR, Fonder une colonie card: 'Les joueurs doivent se mettre d'accord en début de
    partie, si cette carte expédition doit obligatoirement être jouée avant de retourner la
    première carte' (option colony_card_timing = before)."""
    state = new_game(3, 1, edition="2004", colony_card_timing="before")
    d = random_until(state, lambda s, d: d.kind == "goa.action", random.Random(0))
    p = d.seat
    rules = state.rules
    extra = card_ids(rules, EFFECT_COLONY_EXTRA)[0]
    state.deck = [c for c in state.deck if c != extra]
    state.discard = [c for c in state.discard if c != extra]
    for h in state.hands:
        if extra in h:
            h.remove(extra)
    state.hands[p] = [extra]
    stack_deck(state, card_ids(rules, colonists=1)[:3])
    refresh(state)
    play(state, p, moves.found_colony(0, extra))
    d = GAME.decision(state)
    assert d.kind == "goa.colony" and not any(isinstance(m, moves.RevealMore) for m in d.moves)
    assert state.stack[-1].revealed == 3, "three cards revealed"


def test_every_decision_kind_is_documented_in_the_proto():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "proto/referee/v1/goa.proto").read_text()
    seen = set()
    for seed, options in enumerate([{}, {"quick_starter": True}, {"edition": "2004"}] * 3):
        state = new_game(2 + seed % 3, seed, **options)
        rnd = random.Random(seed)
        while (d := GAME.decision(state)) is not None:
            seen.add(d.kind)
            GAME.apply(state, d.seat, rnd.choice(d.moves))
    missing = [k for k in seen if f"//   {k} " not in text]
    assert not missing and len(seen) >= 15


def test_view_shows_own_hand_and_ducats_only_sizes_of_others():
    state = new_game(3, 4)
    random_until(state, lambda s, d: s.phase == ACTIONS and any(s.hands), random.Random(2))
    for seat in range(3):
        view = GAME.view(state, seat)
        assert view.my_ducats == state.ducats[seat]
        assert sorted(c.id for c in view.my_hand) == sorted(state.hands[seat])
        assert [p.hand_size for p in view.players] == [len(h) for h in state.hands]
        assert len(view.grid) == 25 and view.board.columns[0].column == pb.SHIPS
        assert view.most_ducats_vp == 3 and view.single_plantation_vp == 1 and view.box_count == 4


def test_registered_under_its_name():
    from referee.core import registry

    assert registry.get("goa") is GAME and GAME.spec.name == "goa"
    assert GAME.spec.min_seats == 2 and GAME.spec.max_seats == 4


def test_events_report_free_lots_new_rounds_and_final_scoring():
    state = new_game(2, 3)
    kinds = set()
    rnd = random.Random(4)
    while (d := GAME.decision(state)) is not None:
        kinds.update(e.kind for e in GAME.apply(state, d.seat, rnd.choice(d.moves)))
    assert {"goa.round", "goa.phase_laid_out", "goa.final_scoring"} <= kinds
