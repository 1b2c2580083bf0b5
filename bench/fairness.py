"""Bench phase: does a duplicate seed give every seat the same luck? (docs/fair-chance.md)

``fairness.<game>.shared_chance``
    Pairs of matches with the same seed, seat count and options in which only seat 0's policy
    differs (seat 0 plays uniformly at random from two different streams of choices; every other
    seat plays uniformly at random from its own stream, the same in both matches, so it still
    answers what it is shown). Every chance event of the game is recorded under its key (what
    it is: ``("die", 3)``, ``("blue", 2, 1, 0)`` = year 2, seat 1, blue die 0, ...) with the
    draws it made (each ``below(n)`` and its value). The figure is the fraction of the events
    that happen in both matches of a pair, shared events and events of seats other than 0, whose
    draws are identical. Events that happen in one match only (a die unlocked in one of them, a
    pile reshuffled once more) are counted apart (``events_in_one_only``), not in the fraction.
    Seat counts rotate over the game's range (2 seats at least); options are the game's
    defaults, and each edition of a game that has several is measured apart
    (``fairness.goa.shared_chance`` is the default 2012 edition, ``fairness.goa_2004...`` the
    other). ``legacy_shared_chance`` is the same measure with the single running stream of
    record format ``referee-record/1`` (what the referee did before keyed streams).
"""
from __future__ import annotations

import random
from collections.abc import Iterator, MutableSequence
from dataclasses import dataclass
from typing import Any

from referee.core.contract import Game
from referee.core.match import LEGACY_RECORD_FORMAT, RECORD_FORMAT, match_chance
from referee.core.rng import Chance, Key, Rng, SingleStream
from referee.sim import playout

#: Chance events owned by one seat, by the first part of their key: where the seat is in the
#: key. Every other event is shared (a deck, the white dice, the round's die).
SEAT_OWNED = {"blue": 2}
#: Every key kind the games draw under (a test checks none is missing, so a new kind of event
#: is classified here when it is added).
KNOWN_KINDS = {
    "blue", "white", "die", "expedition_deck", "expedition_reshuffle", "lay_out",
    "ship_cards", "ship_cards_reshuffle", "stall_track", "colony_boards", "starting_ships",
    "ship_pile", "scholars", "bishops", "development_doubles", "development_triples",
    "town_halls", "lot_scholars",
}
MAX_DECISIONS = 200_000
GOAL = 0.95  # issue 21: at least 95% of chance events alike across divergent play


class _Tap(Rng):
    """A stream that logs every draw: each ``below(n)`` as ``(n, value)`` (``randint`` and
    ``shuffle`` go through it), each raw 64-bit draw as ``(0, value)`` (``shuffle_cards`` draws
    one, the luck of the whole pile: the cards two piles share then come out alike)."""

    __slots__ = ("inner", "log")

    def __init__(self, inner: Rng, log: list[tuple[int, int]]):
        super().__init__(0)
        self.inner, self.log = inner, log

    def next64(self) -> int:
        v = self.inner.next64()
        self.log.append((0, v))
        return v

    def below(self, n: int) -> int:
        v = self.inner.below(n)
        self.log.append((n, v))
        return v

    def shuffle_cards(self, items: MutableSequence[int]) -> None:
        if isinstance(self.inner, SingleStream):  # record /1: a plain shuffle
            self.shuffle(items)
        else:
            super().shuffle_cards(items)


class Recorder:
    """A chance source that passes every draw through to the real one and records it under the
    event's key (a repeatable event under its key and occurrence number)."""

    def __init__(self, inner: Chance):
        self.inner = inner
        self.events: dict[tuple[Key, ...], list[tuple[int, int]]] = {}
        self._occurrences: dict[tuple[Key, ...], int] = {}

    @property
    def state(self) -> int:
        return self.inner.state

    def stream(self, *key: Key) -> Rng:
        return _Tap(self.inner.stream(*key), self.events.setdefault(key, []))

    def next_stream(self, *key: Key) -> Rng:
        n = self._occurrences.get(key, 0)
        self._occurrences[key] = n + 1
        return _Tap(self.inner.next_stream(*key), self.events.setdefault((*key, n), []))

    def hash_key(self) -> Any:
        return self.inner.hash_key()


@dataclass
class Variant:
    label: str  # the name in fairness.<label>.shared_chance
    game: Game
    options: dict[str, Any]


def variants(games: dict[str, Game]) -> Iterator[Variant]:
    """Each game with its default options, and once more per other edition it has."""
    for name in sorted(games):
        game = games[name]
        yield Variant(name, game, {})
        for opt in game.spec.options:
            if opt.name == "edition":
                for choice in opt.choices:
                    if choice != opt.default:
                        yield Variant(f"{name}_{choice}", game, {"edition": choice})


def play(game: Game, options: dict[str, Any], seats: int, seed: int, seat0: int,
         record_format: str) -> dict[tuple[Key, ...], list[tuple[int, int]]]:
    """One match, every seat choosing uniformly at random from its own stream of choices (seat
    0's from stream ``seat0``); the chance events it drew."""
    parsed = game.spec.parse_options(options)
    recorder = Recorder(match_chance(seed, record_format))
    state = game.setup(parsed, seats, recorder, game.default_components(parsed))
    choosers = [random.Random(f"{seed}/{s}/{seat0 if s == 0 else 0}") for s in range(seats)]
    playout(game, state, lambda d: d.moves[choosers[d.seat].randrange(len(d.moves))],
            MAX_DECISIONS)
    return recorder.events


def counted(key: tuple[Key, ...]) -> bool:
    """Shared events and those of seats other than 0 (seat 0's own luck is not compared)."""
    at = SEAT_OWNED.get(str(key[0]))
    return at is None or key[at] != 0


def compare(a: dict, b: dict) -> tuple[int, int, int]:
    """(events in both, identical among them, events in one match only), counted events only."""
    ka = {k for k in a if counted(k)}
    kb = {k for k in b if counted(k)}
    both = ka & kb
    return len(both), sum(1 for k in both if a[k] == b[k]), len(ka ^ kb)


def measure(variant: Variant, pairs: int, record_format: str = RECORD_FORMAT,
            first_seed: int = 1) -> dict[str, Any]:
    spec = variant.game.spec
    seat_counts = list(range(max(2, spec.min_seats), spec.max_seats + 1))
    both = same = one_only = 0
    kinds: set[str] = set()
    for i in range(pairs):
        seed = first_seed + i
        seats = seat_counts[i % len(seat_counts)]
        a = play(variant.game, variant.options, seats, seed, 1, record_format)
        b = play(variant.game, variant.options, seats, seed, 2, record_format)
        kinds |= {str(k[0]) for k in (*a, *b)}
        n, s, o = compare(a, b)
        both, same, one_only = both + n, same + s, one_only + o
    return {
        "shared_chance": round(same / both, 4) if both else None,
        "events_compared": both,
        "events_identical": same,
        "events_in_one_only": one_only,
        "pairs": pairs,
        "seat_counts": seat_counts,
        "options": variant.options,
        "record_format": record_format,
        "kinds": sorted(kinds),
    }


def run_phase(games: dict[str, Game], pairs: int) -> dict[str, Any]:
    """``results["fairness"]``: per variant, the keyed figure and the legacy one beside it."""
    out: dict[str, Any] = {}
    for v in variants(games):
        r = measure(v, pairs)
        r["legacy_shared_chance"] = measure(v, pairs, LEGACY_RECORD_FORMAT)["shared_chance"]
        out[v.label] = r
    return out


def flat(results: dict[str, Any]) -> dict[str, Any]:
    return {f"fairness.{label}.shared_chance": r["shared_chance"]
            for label, r in results.get("fairness", {}).items()}


def target(results: dict[str, Any]) -> dict[str, Any]:
    return {f"fairness.{label}.shared_chance >= {GOAL}": (
        r["shared_chance"] >= GOAL if r["shared_chance"] is not None else None)
        for label, r in results.get("fairness", {}).items()}


def table_rows(results: dict[str, Any], table) -> None:
    for label, r in results.get("fairness", {}).items():
        table.add_row(f"fairness.{label}.shared_chance", f"{r['shared_chance']}",
                      f"{r['events_identical']}/{r['events_compared']} chance events alike over "
                      f"{r['pairs']} duplicate pairs (seat 0's play differs); one stream for "
                      f"the match (record /1): {r['legacy_shared_chance']}")


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    from referee.core import registry

    parser = argparse.ArgumentParser(prog="python -m bench.fairness", description=__doc__)
    parser.add_argument("--pairs", type=int, default=20, help="duplicate pairs per game")
    args = parser.parse_args(argv)
    games = registry.games()
    print(json.dumps(run_phase(games, args.pairs), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
