"""What each seat sees. Written for the view, not filtered from a dump: a seat gets its own hand;
of others only what the table shows (hand sizes, bills, laid cards, tiles). Never the draw pile's
order, face-down stall tiles or the RNG."""
from __future__ import annotations

from referee.v1 import batavia_pb2 as pb

from . import rules as R


def _counts(values) -> pb.CompanyCounts:
    return pb.CompanyCounts(count=values)


def _tile(tile: int) -> pb.Tile:
    return pb.Tile(company=tile // R.N_GOODS + 1, good=tile % R.N_GOODS + 1)


def build_view(state: R.State, seat: int | None) -> pb.View:
    n = state.n
    over = state.phase == R.OVER
    holders = [R.seal_holder(state, c) for c in range(R.N_COMPANIES)]
    stalls = []
    for space, tile in enumerate(state.track, start=1):
        if tile < 0:
            stalls.append(pb.Stall(space=space, state=pb.TAKEN))
        elif space <= state.revealed:
            stalls.append(
                pb.Stall(
                    space=space,
                    state=pb.FACE_UP,
                    company=tile // R.N_GOODS + 1,
                    good=tile % R.N_GOODS + 1,
                )
            )
        else:
            stalls.append(pb.Stall(space=space, state=pb.FACE_DOWN))
    players = []
    for s in range(n):
        players.append(
            pb.PlayerPublic(
                seat=s,
                merchant_space=state.merchant[s],
                hand_size=sum(state.hands[s]),
                bills=state.bills[s],
                gold=state.final[s]["total"] if over else state.gold[s],
                face_up=_counts(state.face_up[s]),
                seals=[c + 1 for c in range(R.N_COMPANIES) if holders[c] == s],
                tiles=[_tile(t) for t in state.tiles[s]],
                crates_left=state.crates_left[s],
                has_arrival_tile=state.arrival_holder == s,
                in_auction=state.phase == R.AUCTION and state.in_auction[s],
            )
        )
    houses = [
        pb.CountingHouse(
            good=g + 1,
            crate_owner=[state.crate_owner[c * R.N_GOODS + g] for c in range(R.N_COMPANIES)],
        )
        for g in range(R.N_GOODS)
    ]
    total = R.face_up_total(state)
    view = pb.View(
        seat=-1 if seat is None else seat,
        seat_count=n,
        phase=state.phase,
        round=state.round,
        first_player=state.first_player,
        current_seat=state.current if not over else -1,
        stalls=stalls,
        players=players,
        counting_houses=houses,
        draw_pile_size=len(state.draw_pile),
        discards=_counts(state.discards),
        cannon=min(total, state.rules.cannon_max),
        face_up_total=total,
        pirate_threshold=R.pirate_threshold(state),
        played_this_turn=_counts(state.played),
        arrival_holder=state.arrival_holder,
        final_round=state.arrival_holder >= 0 and not over,
    )
    if state.phase == R.AUCTION:
        view.auction.CopyFrom(
            pb.Auction(
                die=state.die,
                lot=_counts(state.lot),
                high_bid=state.high_bid,
                high_bidder=state.high_bidder,
                auctioneer=state.auctioneer,
                to_act=state.current,
            )
        )
    if seat is not None:
        view.my_hand.CopyFrom(_counts(state.hands[seat]))
    if state.pending_tile >= 0:
        view.pending_tile.CopyFrom(_tile(state.pending_tile))
    return view
