"""The santa_maria protocol: every decision kind has its move, every field is documented."""
from pathlib import Path

from referee.v1 import santa_maria_pb2 as pb

PROTO = Path(__file__).resolve().parents[2] / "proto" / "referee" / "v1" / "santa_maria.proto"


def test_move_oneof_has_every_kind():
    kinds = set(pb.Move.DESCRIPTOR.oneofs_by_name["kind"].fields and
                [f.name for f in pb.Move.DESCRIPTOR.oneofs_by_name["kind"].fields])
    assert {
        "draft_lot", "expand", "place_tile", "activate_building", "use_die", "retreat", "sell",
        "buy", "move_die", "end_turn", "exchange", "ship", "shift_ship", "religion",
        "recruit_monk", "place_die", "place_road", "recover_coins", "decline", "choose_board",
    } <= kinds


def test_every_move_message_is_commented():
    text = PROTO.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(text):
        if line.startswith("message ") and i > 0:
            assert text[i - 1].startswith("//") or text[i - 1].strip() == "" or "}" in text[i - 1]
    for field in pb.Move.DESCRIPTOR.oneofs_by_name["kind"].fields:
        name = field.message_type.name
        idx = next(i for i, ln in enumerate(text) if ln.startswith(f"message {name} "))
        assert text[idx - 1].startswith("//"), f"message {name} has no comment"


def test_malformed_moves_are_refused():
    import pytest

    from referee.core.contract import MalformedMove
    from referee.games.santa_maria import GAME

    bad = [
        pb.Move(),
        pb.Move(place_tile=pb.PlaceTile(row=0, col=3)),
        pb.Move(place_tile=pb.PlaceTile(row=1, col=1, rotation=4)),
        pb.Move(use_die=pb.UseDie(color=pb.WHITE, face=7, line=pb.COLUMN, target=1)),
        pb.Move(use_die=pb.UseDie(face=3, line=pb.ROW, target=1)),
        pb.Move(sell=pb.Sell()),
        pb.Move(expand=pb.Expand(slot=1, pay=pb.Goods(coins=2))),
        pb.Move(activate_building=pb.ActivateBuilding(row=7, col=1)),
    ]
    for message in bad:
        with pytest.raises(MalformedMove):
            GAME.move_from_proto(message)
    with pytest.raises(MalformedMove):
        GAME.move_from_proto(pb.View())
