"""Schedules: which entrants sit where, on which seed.

Vocabulary:

* a **table** is the multiset of entrants that meet in a match (``("greedy", "random",
  "random")`` when two entrants fill three seats);
* a **seating** is one order of a table's entrants over seats 0..k-1;
* a **group** is one table played on one seed in every seating (``seating = "all"``: every
  distinct permutation; ``"rotate"``: the distinct cyclic rotations). Every match of a group has
  the same seed (*duplicate seeds*): the cards, tiles and dice are the same and only the seats
  change hands, so luck cancels within a group and seat advantage cancels by rotation;
* a **round** is one group per table; round r uses seed ``round_seed(tournament_seed, r)`` for
  all of its tables.

Formats:

* ``round_robin``: the tables are every k-subset of the n entrants (k = seats). With fewer
  entrants than seats, the tables are every multiset of size k that contains each entrant at
  least once (2 entrants on 3 seats: AAB and ABB).
* ``gauntlet``: the challenger plus every (k-1)-subset of the field (or, with a small field,
  every multiset of size k-1 of the field containing each of it at least once).
* ``pairs``: every pair of entrants, the pair filling all k seats (both at least once).

``rounds`` sets the number of groups per table; ``matches_per_pairing = M`` instead plays
``ceil(M / seatings)`` rounds of each table (whole seating cycles, so every table gets at least
M matches and seat rotation stays complete).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from itertools import combinations, combinations_with_replacement, permutations

from .config import Format, TournamentConfig


@dataclass(frozen=True, slots=True)
class MatchSpec:
    index: int  # position in the schedule (stable across resumes)
    round: int
    table: tuple[str, ...]  # canonical (sorted by entrant order) multiset of entrants
    group: str  # "r<round>:<table>"; every match of a group shares the seed
    seating: tuple[str, ...]  # entrant name per seat
    seed: int

    @property
    def table_key(self) -> str:
        return "|".join(self.table)

    @property
    def distinct(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.table))


def round_seed(tournament_seed: int, rnd: int) -> int:
    """The match seed of every match in round ``rnd`` (63 bits, from SHA-256)."""
    digest = hashlib.sha256(f"referee-tournament:{tournament_seed}:{rnd}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def bot_seed(match_seed: int, seat: int) -> int:
    """The ``{seed}`` placeholder for a seat: reproducible, different per seat."""
    digest = hashlib.sha256(f"bot:{match_seed}:{seat}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def covering_multisets(names: list[str], size: int) -> list[tuple[str, ...]]:
    """Multisets of ``size`` items from ``names`` (in their order) containing every name."""
    if size < len(names):
        return []
    return [c for c in combinations_with_replacement(names, size) if set(c) == set(names)]


def tables_for(fmt: Format, names: list[str], seats: int) -> list[tuple[str, ...]]:
    order = {n: i for i, n in enumerate(names)}

    def canon(t) -> tuple[str, ...]:
        return tuple(sorted(t, key=order.__getitem__))

    if fmt.type == "round_robin":
        if len(names) >= seats:
            return [canon(c) for c in combinations(names, seats)]
        return [canon(c) for c in covering_multisets(names, seats)]
    if fmt.type == "gauntlet":
        challenger = fmt.challenger
        field = [n for n in names if n != challenger]
        if seats < 2:
            raise ValueError("a gauntlet needs at least 2 seats")
        if len(field) >= seats - 1:
            rest = list(combinations(field, seats - 1))
        else:
            rest = covering_multisets(field, seats - 1)
        return [canon((challenger, *r)) for r in rest]
    if fmt.type == "pairs":
        out: list[tuple[str, ...]] = []
        for a, b in combinations(names, 2):
            out.extend(canon(c) for c in covering_multisets([a, b], seats))
        return out
    raise ValueError(f"unknown format {fmt.type!r}")


def seatings_for(table: tuple[str, ...], how: str) -> list[tuple[str, ...]]:
    """Distinct seat orders of a table: every permutation ("all") or its rotations ("rotate")."""
    if how == "all":
        return list(dict.fromkeys(permutations(table)))
    if how == "rotate":
        k = len(table)
        return list(dict.fromkeys(table[i:] + table[:i] for i in range(k)))
    raise ValueError(f"unknown seating {how!r}")


def schedule(cfg: TournamentConfig) -> list[MatchSpec]:
    """Every match of the tournament, round-major, a group's seatings consecutive."""
    names = cfg.names
    fmt = cfg.format
    tables = tables_for(fmt, names, cfg.seats)
    if not tables:
        raise ValueError("the format yields no table (check entrants and game.seats)")
    seatings = {t: seatings_for(t, fmt.seating) for t in tables}
    if fmt.matches_per_pairing:
        rounds_of = {t: math.ceil(fmt.matches_per_pairing / len(seatings[t])) for t in tables}
    else:
        rounds_of = dict.fromkeys(tables, fmt.rounds)
    out: list[MatchSpec] = []
    for r in range(max(rounds_of.values())):
        seed = round_seed(cfg.seed, r)
        for t in tables:
            if r >= rounds_of[t]:
                continue
            group = f"r{r}:{'|'.join(t)}"
            for s in seatings[t]:
                out.append(MatchSpec(len(out), r, t, group, s, seed))
    return out


def seat_counts(specs: list[MatchSpec], names: list[str]) -> dict[str, list[int]]:
    """How many times each entrant sits in each seat (rotation check)."""
    k = max(len(s.seating) for s in specs)
    counts = {n: [0] * k for n in names}
    for s in specs:
        for seat, n in enumerate(s.seating):
            counts[n][seat] += 1
    return counts
