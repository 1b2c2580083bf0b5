"""Duplicate-seed duels without a referee: the forward model plays the match, and each seat's
SDK bot is handed the Decision (its view, every legal move) and the public events the referee
would send it (docs/research/search-bot.md).

:func:`play` plays one match among SDK bots in process. :func:`duel` pits one bot (the ISMCTS
bot) against the greedy reference bot of the game in every other seat: each seed is played once
with the bot in each seat (seats rotated), so the luck of a seed is spread over every seat. The
bot's score in a match is its share of first place (1 when it wins alone, 1/k when k seats tie
for first, 0 otherwise); :class:`DuelReport` gives the win rate with its 95% Wilson interval,
beside what an equal player would get (1/seats).
"""
from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from referee_client.bot import Bot
from referee_client.bots import BOTS, GREEDY_FOR_GAME

from referee.core.contract import Event, Result
from referee.sim import Simulation
from referee.v1 import referee_pb2

from .ismcts import Budget, Settings
from .ismcts_bot import ISMCTSBot

#: Makes the bot of one seat of one match: (seat, seed) -> Bot.
BotFactory = Callable[[int, int], Bot]


def decision_message(sim: Simulation, seat: int, kind: str, moves: list[Any], version: int,
                     prompt: str = "") -> referee_pb2.Decision:
    """The Decision the referee would push to ``seat``: its view and every legal move."""
    name = sim.game.spec.name
    message = referee_pb2.Decision(match_id="duel", state_version=version, seat=seat, kind=kind,
                                   prompt=prompt)
    getattr(message.view, name).CopyFrom(sim.view(seat))
    for m in moves:
        getattr(message.legal_moves.add(), name).CopyFrom(sim.move_to_proto(m))
    return message


def event_message(event: Event, version: int) -> referee_pb2.MatchEvent:
    """A public event as the referee sends it (``Join.events``)."""
    return referee_pb2.MatchEvent(
        state_version=version, seat=event.seat, kind=event.kind, text=event.text,
        data_json=json.dumps(event.data, separators=(",", ":")) if event.data else "{}")


def play(sim: Simulation, bots: list[Bot], options: Mapping[str, str] | None = None) -> Result:
    """Play ``sim`` to its end (in place), each seat's decisions answered by its bot as through a
    referee: a Welcome first, then a Decision per move, and the public events to the bots that
    ask for them. A bot answering with a move that is not legal raises ValueError."""
    game = sim.game
    name = game.spec.name
    seats = sim.seat_count
    for seat, bot in enumerate(bots):
        bot.on_welcome(referee_pb2.Welcome(
            match_id="duel", game=name, seat=seat, seat_count=seats,
            options={k: str(v) for k, v in (options or {}).items()}))
    listening = [b for b in bots if b.wants_events()]
    version = 0
    while (d := sim.decision()) is not None:
        bot = bots[d.seat]
        message = decision_message(sim, d.seat, d.kind, list(d.moves), version, d.prompt)
        answer = bot.choose(message)
        if inspect.isawaitable(answer):
            raise TypeError(f"{bot.name}: an async choose() cannot play in process")
        move = game.move_from_proto(getattr(answer, name))
        if move not in d.moves:
            raise ValueError(f"{bot.name} (seat {d.seat}) answered a move that is not legal: "
                             f"{move!r}")
        events = sim.apply(move, d.seat)
        version += 1
        for e in events:
            msg = event_message(e, version)
            for b in listening:
                b.on_event(msg)
    result = sim.result()
    assert result is not None
    return result


def first_share(result: Result, seat: int) -> float:
    """``seat``'s share of first place: 1 alone, 1/k in a k-way tie, else 0."""
    if result.ranks[seat] != 1:
        return 0.0
    return 1.0 / sum(1 for r in result.ranks if r == 1)


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) with no trial."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(slots=True)
class DuelReport:
    """One bot against the game's greedy bot: matches, its first-place shares, its scores."""

    game: str
    seats: int
    iterations: int | None
    settings: dict[str, Any] = field(default_factory=dict)
    matches: int = 0
    wins: float = 0.0
    score_diff: float = 0.0  # sum over matches of (its score - the best other seat's)
    per_seed: list[float] = field(default_factory=list)

    def add(self, result: Result, seat: int) -> float:
        share = first_share(result, seat)
        self.matches += 1
        self.wins += share
        others = [s for i, s in enumerate(result.scores) if i != seat]
        self.score_diff += result.scores[seat] - max(others, default=0)
        return share

    @property
    def win_rate(self) -> float:
        return self.wins / self.matches if self.matches else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.wins, self.matches)

    @property
    def baseline(self) -> float:
        """What a player as strong as greedy would win: one seat's share."""
        return 1.0 / self.seats

    def as_dict(self) -> dict[str, Any]:
        lo, hi = self.interval
        return {"game": self.game, "seats": self.seats, "iterations": self.iterations,
                "settings": self.settings,
                "matches": self.matches, "win_rate": round(self.win_rate, 4),
                "interval": [round(lo, 4), round(hi, 4)], "baseline": round(self.baseline, 4),
                "mean_score_margin": round(self.score_diff / self.matches, 2)
                if self.matches else 0.0}

    def line(self) -> str:
        lo, hi = self.interval
        return (f"{self.game} {self.seats} seats: ismcts wins {self.win_rate:.1%} of "
                f"{self.matches} matches vs greedy (95% {lo:.1%}-{hi:.1%}; an equal player "
                f"{self.baseline:.1%})")


def greedy_factory(game: str) -> BotFactory:
    """The greedy reference bot of ``game`` (the SDK's ``GREEDY_FOR_GAME``)."""
    make = BOTS[GREEDY_FOR_GAME[game]]
    return lambda seat, seed: make(seed * 8 + seat)


def ismcts_factory(iterations: int | None, seconds: float | None = None,
                   **knobs: Any) -> BotFactory:
    """The ISMCTS bot with this budget (and Settings knobs), seeded per match and seat."""
    settings = Settings(budget=Budget(iterations=iterations, seconds=seconds), **knobs)
    return lambda seat, seed: ISMCTSBot(seed * 8 + seat, settings)


def schedule(seeds: int, seats: int, first_seed: int = 1) -> Iterator[tuple[int, int]]:
    """(seed, the bot's seat) of a duplicate-seed duel: every seed with the bot in each seat."""
    for seed in range(first_seed, first_seed + seeds):
        for seat in range(seats):
            yield seed, seat


def duel_match(game: str, seats: int, seed: int, seat: int, challenger: BotFactory,
               opponent: BotFactory, options: Mapping[str, Any] | None = None) -> Result:
    """One match on ``seed``: ``challenger`` in ``seat``, ``opponent`` in the others."""
    sim = Simulation.new(game, seats, seed, options)
    bots = [challenger(s, seed) if s == seat else opponent(s, seed) for s in range(seats)]
    return play(sim, bots, {k: str(v) for k, v in (options or {}).items()})


def _run_one(job: tuple[str, int, int, int, int | None, float | None, dict[str, Any]]
             ) -> tuple[int, int, Result]:
    game, seats, seed, seat, iterations, seconds, knobs = job
    result = duel_match(game, seats, seed, seat, ismcts_factory(iterations, seconds, **knobs),
                        greedy_factory(game))
    return seed, seat, result


def duel(game: str, seats: int, matches: int, iterations: int | None,
         seconds: float | None = None, jobs: int = 1, first_seed: int = 1,
         progress: Callable[[DuelReport], None] | None = None,
         **knobs: Any) -> DuelReport:
    """ISMCTS (``iterations`` per move) against greedy on ``game`` with ``seats`` seats, over
    ``matches`` matches rounded up to whole seeds (each seed played with the bot in every seat),
    on ``jobs`` processes. ``progress`` is called after every match."""
    report = DuelReport(game, seats, iterations, dict(knobs))
    seeds = max(1, -(-matches // seats))
    work = [(game, seats, seed, seat, iterations, seconds, dict(knobs))
            for seed, seat in schedule(seeds, seats, first_seed)]
    if jobs <= 1:
        outcomes: Iterator[tuple[int, int, Result]] = map(_run_one, work)
        for _seed, seat, result in outcomes:
            report.add(result, seat)
            if progress:
                progress(report)
        return report
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for _seed, seat, result in pool.imap_unordered(_run_one, work):
            report.add(result, seat)
            if progress:
                progress(report)
    return report


__all__ = [
    "BotFactory",
    "DuelReport",
    "decision_message",
    "duel",
    "duel_match",
    "event_message",
    "first_share",
    "greedy_factory",
    "ismcts_factory",
    "play",
    "schedule",
    "wilson",
]
