"""Events for tables of 2-5 seats: Swiss, knockout and arena (issue 35).

Pure logic, no I/O: a format object takes the results so far and yields the next round's
tables, so the tournament runner (and, later, a league that schedules events) drives every
format the same way and a killed runner derives the same rounds again from its store.

The rules, in the words of ``docs/organizer/tournaments.md``:

* **Table points.** A match ranks its seats (1 = best, ties share a rank). A seat whose bot did
  not play (it crashed, never joined or never moved: :func:`report.did_not_play`) *forfeits*:
  it ranks below every seat that played, the others keep their order. Rank points come from
  ``format.points`` (default ``k-1, ..., 1, 0`` for k seats); seats tied over several places
  share those places' points equally.
* **Withdrawal.** An entrant that did not play ``format.withdraw_after`` matches in a row
  (default 2) is withdrawn: it is seated no more (Swiss, arena) and loses its knockout table.
  A crashing or absent bot never stalls an event: its matches end (the referee plays its timed
  out decisions) and it forfeits them.
* **Swiss.** Round r seats the active entrants in standing order at tables of k: the highest
  unseated entrant anchors a table and the k-1 others come from the next ``2k`` in standing
  order, choosing those it (and they) met least, then the closest in standing. Seats go to the
  order that gives every entrant the seats it held least (sum of squared seat counts). A field
  that does not divide into tables gives ``n mod k`` byes a round: to the entrants with the
  fewest byes, then the lowest standing; a bye scores the mean of the rank points (what an
  average table gives). A table whose match failed (no result) gives each of its entrants the
  bye score. Standings: points, then *Buchholz* (the sum of every table-mate's points, once
  per table), then *direct results* (among the entrants tied so far: +1 for each tied
  table-mate it finished above, -1 below), then seed.
* **Knockout.** Entrants are seeded (file order or a previous run's ratings). A round with m > k
  entrants plays as many tables of k as it can while leaving at least k for the final; if that
  leaves r more to eliminate than a table of ``advance`` winners can, one table advances
  ``k - r``. The top seeds get the byes; the others are dealt to the tables snake-wise
  (1st, 2nd, ..., T-th, T-th, ..., 1st seed by seed). Each table plays ``best_of`` matches on
  one seed, the seats rotated; its entrants rank by total rank points, then total game score,
  then seed; the top ``advance`` go on. The final table's order is the event's top places; the
  others place by the round they went out in, then their points at that table, then seed.
* **Arena.** For ``duration_s`` seconds, whenever k entrants are free a table is formed: the one
  who has played least anchors it, the others are the free entrants closest to it in arena
  score that did not sit at its last table and have not played over one match more than it
  (where the free field allows); seats as in a Swiss. Every finished match
  scores its rank points; after two wins in a row (a rank 1 not shared) an entrant is *on fire*
  and scores double until a match it does not win (doubled too). When the time is up no table
  is formed; the matches under way finish and count.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, permutations
from typing import Any

STAGED = ("swiss", "knockout")  # rounds derived from the results of the rounds before
EVENTS = (*STAGED, "arena")


def default_points(seats: int) -> tuple[float, ...]:
    """Rank points when ``format.points`` is not given: k-1 for first down to 0 for last."""
    return tuple(float(seats - 1 - i) for i in range(seats))


def default_swiss_rounds(n: int) -> int:
    """Swiss rounds when ``format.rounds`` is not given: as many as a chess Swiss (log2 n),
    at least 3, so that standings separate."""
    return max(3, math.ceil(math.log2(max(n, 2))))


def table_seed(event_seed: int, rnd: int, table: int, duplicate: bool) -> int:
    """The seed of a table: one per round when ``duplicate_seeds`` (every table of the round
    deals the same cards), else one per table (63 bits, from SHA-256)."""
    key = f"referee-tournament:{event_seed}:{rnd}" if duplicate else \
        f"referee-tournament:{event_seed}:{rnd}:t{table}"
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


# ---------------------------------------------------------------------- one match's points

@dataclass(frozen=True)
class Played:
    """A match as the events see it: who sat where and how it ended (``ranks`` None: the
    match failed and has no result)."""

    index: int
    round: int
    table: int
    seating: tuple[str, ...]
    ranks: tuple[int, ...] | None
    no_play: tuple[bool, ...] = ()
    scores: tuple[float, ...] = ()


def positions(ranks: Sequence[int], no_play: Sequence[bool] = ()) -> list[int]:
    """Each seat's place after forfeits (1 = best; ties share the best place they span): a seat
    that did not play ranks below every seat that did."""
    forfeit = list(no_play) or [False] * len(ranks)
    keys = [(bool(f), r) for f, r in zip(forfeit, ranks, strict=True)]
    return [1 + sum(other < key for other in keys) for key in keys]


def rank_points(places: Sequence[int], points: Sequence[float]) -> list[float]:
    """Points per seat: a place's points, tied seats sharing the places they span equally."""
    out = []
    for p in places:
        tied = sum(q == p for q in places)
        span = points[p - 1: p - 1 + tied]
        out.append(sum(span) / len(span))
    return out


def match_points(m: Played, points: Sequence[float]) -> dict[str, float]:
    """Points per entrant for one finished match (an entrant in several seats sums them)."""
    assert m.ranks is not None
    out: dict[str, float] = {}
    for name, pts in zip(m.seating, rank_points(positions(m.ranks, m.no_play), points),
                         strict=True):
        out[name] = out.get(name, 0.0) + pts
    return out


def withdrawn(matches: Iterable[Played], names: Sequence[str], after: int) -> set[str]:
    """Entrants whose last ``after`` matches (in index order) all went unplayed by their bot."""
    streak = dict.fromkeys(names, 0)
    for m in sorted(matches, key=lambda x: x.index):
        if m.ranks is None:
            continue
        for name, gone in zip(m.seating, m.no_play or [False] * len(m.seating), strict=True):
            streak[name] = streak[name] + 1 if gone else 0
    return {n for n, s in streak.items() if after and s >= after}


# ---------------------------------------------------------------------- seats

def balanced_seating(members: Sequence[str], counts: dict[str, list[int]],
                     ) -> tuple[str, ...]:
    """The order of ``members`` over the seats that gives each the seats it held least: the
    permutation minimising the sum of squared seat counts after the match (the first of the
    permutations of ``members`` as given, on a tie)."""
    k = len(members)
    best: tuple[str, ...] = tuple(members)
    best_cost = None
    for perm in permutations(members):
        cost = sum((counts.get(n, [0] * k)[s] + 1) ** 2 for s, n in enumerate(perm))
        if best_cost is None or cost < best_cost:
            best, best_cost = perm, cost
    return best


def seat_counts(matches: Iterable[Played], names: Sequence[str], k: int) -> dict[str, list[int]]:
    counts = {n: [0] * k for n in names}
    for m in matches:
        for s, n in enumerate(m.seating):
            counts.setdefault(n, [0] * k)[s] += 1
    return counts


# ---------------------------------------------------------------------- a round

@dataclass
class TablePlan:
    """One table of a round: its entrants (seed order), the seatings of its matches, its seed
    and (knockout) how many of it advance."""

    number: int
    members: tuple[str, ...]
    seatings: list[tuple[str, ...]]
    seed: int
    advance: int = 0


@dataclass
class RoundPlan:
    number: int
    tables: list[TablePlan]
    byes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------- Swiss

@dataclass
class SwissStanding:
    name: str
    seed: int
    points: float = 0.0
    buchholz: float = 0.0
    direct: float = 0.0
    tables: int = 0
    byes: int = 0
    withdrawn: bool = False
    mates: list[list[str]] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)

    def as_json(self, place: int) -> dict[str, Any]:
        return {"place": place, "name": self.name, "points": round(self.points, 3),
                "buchholz": round(self.buchholz, 3), "direct": round(self.direct, 3),
                "seed": self.seed + 1, "tables": self.tables, "byes": self.byes,
                "withdrawn": self.withdrawn, "seat_counts": self.seats}


class Swiss:
    """Swiss rounds for tables of ``seats``; see the module docstring for the rules."""

    def __init__(self, names: Sequence[str], seats: int, rounds: int, event_seed: int,
                 points: Sequence[float] | None = None, duplicate_seeds: bool = False,
                 withdraw_after: int = 2):
        if len(names) < seats:
            raise ValueError(f"a Swiss needs at least {seats} entrants (one table)")
        self.names = list(names)
        self.k = seats
        self.rounds = rounds
        self.event_seed = event_seed
        self.points = tuple(points) if points else default_points(seats)
        self.duplicate_seeds = duplicate_seeds
        self.withdraw_after = withdraw_after

    @property
    def bye_points(self) -> float:
        return sum(self.points) / len(self.points)

    # -- standings
    def standings(self, plans: Sequence[RoundPlan], matches: Sequence[Played],
                  ) -> list[SwissStanding]:
        """Standings after the matches given (byes from ``plans``), best first."""
        st = {n: SwissStanding(n, i, seats=[0] * self.k) for i, n in enumerate(self.names)}
        for p in plans:
            for n in p.byes:
                st[n].points += self.bye_points
                st[n].byes += 1
        for m in matches:
            for seat, n in enumerate(m.seating):
                st[n].tables += 1
                st[n].seats[seat] += 1
                st[n].mates.append([x for x in m.seating if x != n])
            if m.ranks is None:
                for n in m.seating:
                    st[n].points += self.bye_points
                continue
            for n, pts in match_points(m, self.points).items():
                st[n].points += pts
        for n in withdrawn(matches, self.names, self.withdraw_after):
            st[n].withdrawn = True
        for e in st.values():
            e.buchholz = sum(st[x].points for mates in e.mates for x in mates)
        # direct results among the entrants still tied on points and Buchholz
        groups: dict[tuple[float, float], list[str]] = {}
        for e in st.values():
            groups.setdefault((round(e.points, 9), round(e.buchholz, 9)), []).append(e.name)
        for tied in groups.values():
            if len(tied) < 2:
                continue
            for m in matches:
                if m.ranks is None:
                    continue
                places = positions(m.ranks, m.no_play)
                for a, pa in zip(m.seating, places, strict=True):
                    if a not in tied:
                        continue
                    for b, pb in zip(m.seating, places, strict=True):
                        if b in tied and b != a:
                            st[a].direct += (pa < pb) - (pa > pb)
        return sorted(st.values(), key=lambda s: (-s.points, -s.buchholz, -s.direct, s.seed))

    # -- pairing
    def plan_round(self, r: int, plans: Sequence[RoundPlan], matches: Sequence[Played],
                   ) -> RoundPlan:
        """Round ``r``'s tables from the rounds before (``plans``) and their ``matches``."""
        standing = self.standings(plans, matches)
        order = [s.name for s in standing if not s.withdrawn]
        k = self.k
        n_byes = len(order) % k
        byes: list[str] = []
        if n_byes:
            by = {s.name: s for s in standing}
            # fewest byes first, then the lowest standing
            rank = {n: i for i, n in enumerate(order)}
            byes = sorted(order, key=lambda n: (by[n].byes, -rank[n]))[:n_byes]
        field_ = [n for n in order if n not in byes]
        met: dict[frozenset[str], int] = {}
        for m in matches:
            for a, b in combinations(set(m.seating), 2):
                key = frozenset((a, b))
                met[key] = met.get(key, 0) + 1
        counts = seat_counts(matches, self.names, k)
        tables: list[TablePlan] = []
        pos = {n: i for i, n in enumerate(field_)}
        while field_:
            anchor, rest = field_[0], field_[1:]
            window = rest[: 2 * k]

            def cost(group: tuple[str, ...], anchor: str = anchor) -> tuple[int, int]:
                members = (anchor, *group)
                repeats = sum(met.get(frozenset(p), 0) for p in combinations(members, 2))
                return repeats, sum(pos[x] for x in group)

            best = min(combinations(window, k - 1), key=cost)
            members = (anchor, *best)
            members = tuple(sorted(members, key=self.names.index))
            seating = balanced_seating(_rotate(members, r), counts)
            t = len(tables)
            tables.append(TablePlan(t, members, [seating],
                                    table_seed(self.event_seed, r, t, self.duplicate_seeds)))
            field_ = [x for x in rest if x not in best]
        return RoundPlan(r, tables, sorted(byes, key=self.names.index))


def _rotate(members: Sequence[str], r: int) -> tuple[str, ...]:
    """``members`` rotated by ``r`` (which order wins a tie between equally balanced seatings
    changes from round to round)."""
    i = r % len(members)
    return tuple(members[i:]) + tuple(members[:i])


# ---------------------------------------------------------------------- knockout

@dataclass
class TableOutcome:
    """A knockout table's result: its entrants best first, with their points and scores."""

    order: list[str]
    points: dict[str, float]
    scores: dict[str, float]
    advanced: list[str]


class Knockout:
    """A knockout of tables of ``seats``; see the module docstring for the bracket rules."""

    def __init__(self, seeds: Sequence[str], seats: int, advance: int, best_of: int,
                 event_seed: int, points: Sequence[float] | None = None,
                 duplicate_seeds: bool = False):
        if len(seeds) < seats:
            raise ValueError(f"a knockout needs at least {seats} entrants (one table)")
        if not 1 <= advance < seats:
            raise ValueError("advance must be at least 1 and less than the seats")
        self.seeds = list(seeds)
        self.k = seats
        self.advance = advance
        self.best_of = best_of
        self.event_seed = event_seed
        self.points = tuple(points) if points else default_points(seats)
        self.duplicate_seeds = duplicate_seeds

    def shape(self, m: int) -> tuple[int, list[int]]:
        """For a round of ``m`` entrants: (byes, how many advance from each table)."""
        k, a = self.k, self.advance
        if m <= k:
            return 0, [0]  # the final
        t_full = min(m // k, (m - k) // (k - a))
        adv = [a] * t_full
        left = (m - k) - t_full * (k - a)
        if 0 < left < k - a and t_full < m // k:
            adv.append(k - left)
        return m - len(adv) * k, adv

    def plan_round(self, r: int, field_: Sequence[str]) -> RoundPlan:
        """Round ``r`` of the entrants ``field_`` (in seed order)."""
        field_ = sorted(field_, key=self.seeds.index)
        n_byes, adv = self.shape(len(field_))
        byes, playing = field_[:n_byes], field_[n_byes:]
        t = len(adv)
        members: list[list[str]] = [[] for _ in range(t)]
        for i, name in enumerate(playing):  # snake: 1..T, T..1, ...
            lap, j = divmod(i, t)
            members[j if lap % 2 == 0 else t - 1 - j].append(name)
        tables = []
        for j, mem in enumerate(members):
            mem_t = tuple(mem)
            seatings = [_rotate(mem_t, g) for g in range(self.best_of)]
            tables.append(TablePlan(j, mem_t, seatings,
                                    table_seed(self.event_seed, r, j, self.duplicate_seeds),
                                    advance=adv[j]))
        return RoundPlan(r, tables, list(byes))

    def outcome(self, table: TablePlan, matches: Sequence[Played]) -> TableOutcome:
        pts = dict.fromkeys(table.members, 0.0)
        scores = dict.fromkeys(table.members, 0.0)
        for m in matches:
            if m.ranks is None:
                continue
            for n, p in match_points(m, self.points).items():
                pts[n] += p
            for n, s in zip(m.seating, m.scores or [0] * len(m.seating), strict=True):
                scores[n] += float(s)
        order = sorted(table.members, key=lambda n: (-pts[n], -scores[n], self.seeds.index(n)))
        return TableOutcome(order, pts, scores, order[: table.advance])


# ---------------------------------------------------------------------- deriving the event

@dataclass
class EventState:
    """What the results so far make of an event: its rounds (each with its tables' match
    indices), whether it is over, and its standings."""

    rounds: list[RoundPlan]
    indices: list[list[list[int]]]  # round -> table -> match indices
    complete: bool
    standings: list[dict[str, Any]]
    bracket: list[dict[str, Any]] = field(default_factory=list)


def derive(planner: Swiss | Knockout, matches: dict[int, Played],
           resolved: set[int]) -> EventState:
    """Every round the results allow: round r+1 is planned once every match of round r is
    resolved (finished or failed). Deterministic, so a resumed runner finds the same rounds
    (and the same match indices) as the one it replaces. ``matches`` holds the stored matches
    by index (their results if resolved)."""
    rounds: list[RoundPlan] = []
    indices: list[list[list[int]]] = []
    nxt = 0
    played: list[Played] = []
    if isinstance(planner, Swiss):
        for r in range(planner.rounds):
            plan = planner.plan_round(r, rounds, played)
            idx = _number(plan, nxt)
            nxt += sum(len(t) for t in idx)
            rounds.append(plan)
            indices.append(idx)
            if not all(i in resolved for t in idx for i in t):
                return EventState(rounds, indices, False,
                                  _swiss_json(planner, rounds[:-1], played))
            played.extend(_played(plan, idx, matches))
        return EventState(rounds, indices, True, _swiss_json(planner, rounds, played))
    field_ = list(planner.seeds)
    out_round: dict[str, tuple[int, float]] = {}
    bracket: list[dict[str, Any]] = []
    r = 0
    while True:
        plan = planner.plan_round(r, field_)
        idx = _number(plan, nxt)
        nxt += sum(len(t) for t in idx)
        rounds.append(plan)
        indices.append(idx)
        done = all(i in resolved for t in idx for i in t)
        entry: dict[str, Any] = {"round": r, "byes": plan.byes, "tables": []}
        bracket.append(entry)
        nxt_field = list(plan.byes)
        for table, tidx in zip(plan.tables, idx, strict=True):
            tm = [matches[i] for i in tidx if i in resolved and i in matches]
            oc = planner.outcome(table, tm)
            entry["tables"].append({
                "table": table.number, "members": list(table.members), "seed": str(table.seed),
                "advance": table.advance, "matches": tidx, "finished": done,
                "order": oc.order if done else [], "points": oc.points,
                "advanced": oc.advanced if done else []})
            if done:
                nxt_field.extend(oc.advanced)
                for n in oc.order[table.advance:] if table.advance else oc.order:
                    out_round[n] = (r, oc.points[n])
        if not done:
            return EventState(rounds, indices, False, [], bracket)
        if not plan.tables[0].advance:  # the final is over
            final = entry["tables"][0]["order"]
            rest = sorted((n for n in planner.seeds if n not in final),
                          key=lambda n: (-out_round[n][0], -out_round[n][1],
                                         planner.seeds.index(n)))
            standings = [{"place": i + 1, "name": n, "out_in_round": out_round[n][0],
                          "points_at_last_table": round(out_round[n][1], 3),
                          "seed": planner.seeds.index(n) + 1}
                         for i, n in enumerate([*final, *rest])]
            return EventState(rounds, indices, True, standings, bracket)
        field_ = nxt_field
        r += 1


def _number(plan: RoundPlan, start: int) -> list[list[int]]:
    out, i = [], start
    for t in plan.tables:
        out.append(list(range(i, i + len(t.seatings))))
        i += len(t.seatings)
    return out


def _played(plan: RoundPlan, idx: list[list[int]], matches: dict[int, Played]) -> list[Played]:
    return [matches[i] for t in idx for i in t if i in matches]


def _swiss_json(planner: Swiss, rounds: list[RoundPlan], played: list[Played]) -> list[dict]:
    return [s.as_json(i + 1) for i, s in enumerate(planner.standings(rounds, played))]


# ---------------------------------------------------------------------- arena

@dataclass
class ArenaEntry:
    name: str
    seed: int
    score: float = 0.0
    matches: int = 0
    wins: int = 0
    streak: int = 0
    on_fire: bool = False
    last_mates: tuple[str, ...] = ()
    history: list[float] = field(default_factory=list)

    def as_json(self, place: int) -> dict[str, Any]:
        return {"place": place, "name": self.name, "score": round(self.score, 3),
                "matches": self.matches, "wins": self.wins, "on_fire": self.on_fire,
                "seed": self.seed + 1, "points": [round(p, 3) for p in self.history]}


class Arena:
    """Arena scores and table forming; see the module docstring for the rules."""

    def __init__(self, names: Sequence[str], seats: int, points: Sequence[float] | None = None,
                 withdraw_after: int = 2):
        if len(names) < seats:
            raise ValueError(f"an arena needs at least {seats} entrants (one table)")
        self.names = list(names)
        self.k = seats
        self.points = tuple(points) if points else default_points(seats)
        self.withdraw_after = withdraw_after

    def scores(self, matches: Sequence[Played]) -> dict[str, ArenaEntry]:
        """Scores after ``matches`` in the order they finished."""
        st = {n: ArenaEntry(n, i) for i, n in enumerate(self.names)}
        for m in matches:
            if m.ranks is None:
                continue
            places = positions(m.ranks, m.no_play)
            pts = rank_points(places, self.points)
            for s, n in enumerate(m.seating):
                e = st[n]
                win = places[s] == 1 and places.count(1) == 1
                gain = pts[s] * (2 if e.on_fire else 1)
                e.score += gain
                e.history.append(gain)
                e.matches += 1
                e.wins += win
                e.streak = e.streak + 1 if win else 0
                e.on_fire = e.streak >= 2
                e.last_mates = tuple(x for x in m.seating if x != n)
        return st

    def standings(self, matches: Sequence[Played]) -> list[dict[str, Any]]:
        st = self.scores(matches)
        order = sorted(st.values(), key=lambda e: (-e.score, -e.wins, e.seed))
        return [e.as_json(i + 1) for i, e in enumerate(order)]

    def form_table(self, free: Sequence[str], matches: Sequence[Played],
                   ) -> tuple[str, ...] | None:
        """A seating of k of the ``free`` entrants, or None (fewer than k free and active)."""
        gone = withdrawn(matches, self.names, self.withdraw_after)
        avail = [n for n in free if n not in gone]
        if len(avail) < self.k:
            return None
        st = self.scores(matches)
        anchor = min(avail, key=lambda n: (st[n].matches, st[n].seed))
        last = set(st[anchor].last_mates)

        def key(n: str) -> tuple[bool, bool, float, int]:
            # no immediate rematch, no one far ahead in matches played, then the closest score
            return (n in last or anchor in st[n].last_mates,
                    st[n].matches > st[anchor].matches + 1,
                    abs(st[n].score - st[anchor].score), st[n].seed)

        others = sorted((n for n in avail if n != anchor), key=key)[: self.k - 1]
        members = tuple(sorted((anchor, *others), key=self.names.index))
        return balanced_seating(members, seat_counts(matches, self.names, self.k))


def active(names: Sequence[str], matches: Sequence[Played], after: int) -> list[str]:
    """The entrants not withdrawn."""
    gone = withdrawn(matches, names, after)
    return [n for n in names if n not in gone]
