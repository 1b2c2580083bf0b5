"""The league events' planning (issue 35, item 4) on stored rows, without a referee: each
format through the tournament's planners, the same plan from the same rows (what a restarted
runner relies on), and results filling the rounds in."""
from __future__ import annotations

from referee_tournament.league.events import LeagueEvent, Plan
from referee_tournament.store import Row


def _ev(fmt: str, seats: int = 2, **kw) -> LeagueEvent:
    return LeagueEvent(name="e", format=fmt, start_unix=0.0, game="g", seats=seats, seed=7,
                       **kw)


def _row(idx: int, seating: tuple[str, ...], ranks: list[int] | None, t: float) -> Row:
    return Row(idx=idx, round=0, group="g", table=tuple(sorted(seating)), seating=seating,
               seed=1, status="done" if ranks else "running", attempts=1, match_id=f"m{idx}",
               referee=None, seconds=None, scores=None, ranks=ranks, outcome=None,
               record_path=None, error=None, finished=t if ranks else None)


def _play(plan: Plan, rounds: int = 10) -> list[Row]:
    """Play the event to its end, the first seat always winning."""
    rows: list[Row] = []
    for _ in range(rounds * 10):
        specs, complete, _ = plan.state(rows)
        if complete:
            return rows
        new = [p for p in specs if p.idx not in {r.idx for r in rows}]
        assert new, "an incomplete event with nothing to play"
        for p in new:
            rows.append(_row(p.idx, p.seating, [1] + [2] * (len(p.seating) - 1), len(rows)))
    raise AssertionError("the event never ended")


def test_knockout_of_four_plays_to_a_final_with_a_bracket():
    names = ["a", "b", "c", "d"]
    plan = Plan(_ev("knockout", best_of=1), names)
    rows = _play(plan)
    specs, complete, summary = plan.state(rows)
    assert complete
    assert [s["place"] for s in summary["standings"]] == [1, 2, 3, 4]
    assert len(summary["bracket"]) == 2  # semi-finals, final
    assert len({r.idx for r in rows}) == len(rows) == len(specs)


def test_round_robin_plays_every_table_once_with_balanced_seats():
    names = ["a", "b", "c", "d"]
    plan = Plan(_ev("round_robin"), names)
    specs, complete, _ = plan.state([])
    assert not complete and len(specs) == 6
    assert {frozenset(p.seating) for p in specs} == {frozenset(x) for x in
                                                     [("a", "b"), ("a", "c"), ("a", "d"),
                                                      ("b", "c"), ("b", "d"), ("c", "d")]}
    firsts = {n: sum(p.seating[0] == n for p in specs) for n in names}
    assert max(firsts.values()) - min(firsts.values()) <= 1, firsts
    rows = _play(plan)
    _, complete, summary = plan.state(rows)
    assert complete and {"buchholz", "direct"} <= set(summary["standings"][0])


def test_the_same_rows_give_the_same_plan():
    """A restarted runner derives the same matches (indices, seatings, seeds) from the store."""
    names = ["a", "b", "c", "d", "e"]
    ev = _ev("swiss", seats=2, rounds=3)
    rows = _play(Plan(ev, names))[:4]
    assert Plan(ev, names).state(rows)[0] == Plan(ev, names).state(rows)[0]


def test_arena_forms_tables_from_free_entrants_only():
    plan = Plan(_ev("arena", duration_s=60.0), ["a", "b", "c"])
    t = plan.arena_table(["a", "b", "c"], [])
    assert t is not None and len(t) == 2
    assert plan.arena_table(["c"], []) is None  # one free entrant: no table
    rows = [_row(0, t, [1, 2], 1.0)]
    _, complete, summary = plan.state(rows)
    assert not complete  # an arena ends by its time, not its matches
    assert summary["standings"][0]["name"] == t[0]
