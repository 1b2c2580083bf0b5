"""Batavia's observation planes say what their meanings say (referee/games/batavia/planes.py):
on random positions of every seat count and option set, each plane is decoded back and compared
with the seat's View message, the reference for what the seat sees. The generic contract (no
leak, fixed width, equal views give equal vectors) is tests/research/test_planes.py's."""
from __future__ import annotations

import numpy as np
import pytest

from referee.core import registry
from referee.games.batavia.catalog import ARRIVAL, MAX_SEATS, MIN_SEATS, N_COMPANIES, N_GOODS
from tests.research.helpers import positions

GAME = registry.get("batavia")


def _counts(message) -> list[int]:
    return list(message.count) or [0] * N_COMPANIES


def test_each_plane_decodes_to_the_view():
    planes = GAME.observation_planes()
    assert planes is not None
    layout = planes.planes
    total = 0
    for sim in positions("batavia", 120, 8, every=5):
        rules = sim.state.rules
        cards = rules.cards_per_company
        for seat in range(sim.seat_count):
            view = sim.view(seat)
            out = np.zeros(layout.width, dtype=np.float64)
            planes.encode(sim.state, seat, out)

            def plane(name: str, out=out) -> np.ndarray:
                p = layout[name]
                return out[p.start:p.stop]

            n = view.seat_count
            assert plane("seat").tolist() == [float(s == seat) for s in range(MAX_SEATS)]
            assert plane("seat_count")[n - MIN_SEATS] == 1 and plane("seat_count").sum() == 1
            assert plane("phase")[view.phase - 1] == 1 and plane("phase").sum() == 1
            rel = [(seat + k) % n for k in range(n)]
            current = plane("current_seat")
            if view.current_seat >= 0:
                assert current[rel.index(view.current_seat)] == 1 and current.sum() == 1
            else:
                assert not current.any()
            stalls = plane("stalls").reshape(len(view.stalls), -1)
            for stall, row in zip(view.stalls, stalls):
                want = np.zeros(row.shape)
                if stall.state == 2:  # FACE_DOWN
                    want[0] = 1
                elif stall.state == 3:  # TAKEN
                    want[1] = 1
                else:
                    want[1 + stall.company] = 1
                    want[1 + N_COMPANIES + stall.good] = 1
                assert np.array_equal(row, want), stall
            for k, s in enumerate(rel):
                player = view.players[s]
                assert plane("seated")[k] == 1
                assert plane("merchant")[k] == pytest.approx(player.merchant_space / ARRIVAL)
                assert plane("hand_size")[k] == pytest.approx(player.hand_size / sum(cards))
                assert plane("bills")[k] == pytest.approx(player.bills / rules.bills_per_player)
                assert plane("crates_left")[k] == pytest.approx(
                    player.crates_left / rules.crates_per_player)
                face_up = plane("face_up")[k * N_COMPANIES:(k + 1) * N_COMPANIES]
                assert face_up * np.array(cards) == pytest.approx(_counts(player.face_up))
                seals = plane("seals")[k * N_COMPANIES:(k + 1) * N_COMPANIES]
                assert sorted(np.flatnonzero(seals) + 1) == sorted(player.seals)
                by_good = plane("tiles_by_good")[k * N_GOODS:(k + 1) * N_GOODS] * N_COMPANIES
                assert by_good.round().sum() == len(player.tiles)
                assert plane("arrival_tile")[k] == float(player.has_arrival_tile)
                assert plane("in_auction")[k] == float(player.in_auction)
            assert not plane("seated")[n:].any()
            assert plane("my_hand") * np.array(cards) == pytest.approx(_counts(view.my_hand))
            assert plane("discards") * np.array(cards) == pytest.approx(_counts(view.discards))
            assert plane("draw_pile")[0] * sum(cards) == pytest.approx(view.draw_pile_size)
            cannon = plane("cannon") * rules.cannon_max
            assert cannon == pytest.approx([view.cannon, view.face_up_total,
                                            view.pirate_threshold])
            auction = plane("auction")
            if view.HasField("auction"):
                lot = auction[1:1 + N_COMPANIES] * np.array(cards)
                assert lot == pytest.approx(_counts(view.auction.lot))
                assert auction[1 + N_COMPANIES] * rules.bills_per_player == pytest.approx(
                    view.auction.high_bid)
            else:
                assert not auction.any()
            pending = plane("pending_tile")
            if view.HasField("pending_tile"):
                assert pending[view.pending_tile.company - 1] == 1
                assert pending[N_COMPANIES + view.pending_tile.good - 1] == 1
            else:
                assert not pending.any()
            assert plane("final_round")[0] == float(view.final_round)
            total += 1
    assert total > 300
