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
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from referee_client.bot import Bot
from referee_client.bots import BOTS, GREEDY_FOR_GAME
from referee_tournament.ratings import wilson

from referee.core.contract import Result
from referee.sim import Simulation
from referee.v1 import referee_pb2

from .ismcts import PROFILES, Budget
from .ismcts_bot import DEFAULT_PROFILE, ISMCTSBot
from .messages import decision_message, event_message

#: Makes the bot of one seat of one match: (seat, seed) -> Bot.
BotFactory = Callable[[int, int], Bot]


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


@dataclass(slots=True)
class DuelReport:
    """One bot against the game's greedy bot: matches, its first-place shares, its scores."""

    game: str
    seats: int
    iterations: int | None
    settings: dict[str, Any] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)  # the game's, beyond its defaults
    matches: int = 0
    wins: float = 0.0
    score_diff: float = 0.0  # sum over matches of (its score - the best other seat's)
    per_seed: list[float] = field(default_factory=list)
    sprt: Sprt | None = None
    searches: int = 0  # decisions the bot searched (more than one legal move)
    search_seconds: float = 0.0  # wall time of those searches (CPU time with a CPU budget)
    search_iterations: int = 0  # iterations of those searches
    #: one row per match played, in order: (seed, the bot's seat, its share of first place, its
    #: score margin, searches, search seconds, iterations): what a stopped duel resumes from
    played: list[tuple[int, int, float, float, int, float, int]] = field(default_factory=list)

    def add(self, result: Result, seat: int, searches: int = 0,
            search_seconds: float = 0.0, search_iterations: int = 0, seed: int = 0) -> float:
        share = first_share(result, seat)
        others = [s for i, s in enumerate(result.scores) if i != seat]
        margin = result.scores[seat] - max(others, default=0)
        self.record((seed, seat, share, margin, searches, search_seconds, search_iterations))
        return share

    def record(self, row: tuple[int, int, float, float, int, float, int]) -> None:
        """Count one match from its row (:attr:`played`), as :meth:`add` does from a Result."""
        _seed, _seat, share, margin, searches, seconds, iterations = row
        self.played.append(row)
        self.matches += 1
        self.wins += share
        self.score_diff += margin
        self.searches += searches
        self.search_seconds += seconds
        self.search_iterations += iterations
        if self.sprt is not None:
            self.sprt.add(share)

    @property
    def seconds_per_move(self) -> float:
        """Mean wall time of one searched decision (this machine, its load at the time)."""
        return self.search_seconds / self.searches if self.searches else 0.0

    @property
    def win_rate(self) -> float:
        return self.wins / self.matches if self.matches else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.wins, self.matches, z=1.96)  # the z its published figures used

    @property
    def baseline(self) -> float:
        """What a player as strong as greedy would win: one seat's share."""
        return 1.0 / self.seats

    def as_dict(self) -> dict[str, Any]:
        lo, hi = self.interval
        return {"game": self.game, "seats": self.seats, "options": self.options,
                "iterations": self.iterations, "settings": self.settings,
                "matches": self.matches, "wins": self.wins,
                "win_rate": round(self.win_rate, 4),
                "interval": [round(lo, 4), round(hi, 4)], "baseline": round(self.baseline, 4),
                "mean_score_margin": round(self.score_diff / self.matches, 2)
                if self.matches else 0.0,
                "searched_moves": self.searches,
                "seconds_per_move": round(self.seconds_per_move, 4),
                "iterations_per_move": round(self.search_iterations / self.searches, 1)
                if self.searches else 0.0,
                "sprt": None if self.sprt is None else self.sprt.as_dict(),
                "played": [list(row) for row in self.played]}

    def line(self) -> str:
        lo, hi = self.interval
        seconds = self.settings.get("seconds")
        budget = (f"{self.iterations} iterations" if self.iterations is not None else
                  f"{seconds} s{' of CPU' if self.settings.get('cpu') else ''}")
        game = self.game + "".join(f" {k}={v}" for k, v in sorted(self.options.items()))
        text = (f"{game} {self.seats} seats: ismcts wins {self.win_rate:.1%} of "
                f"{self.matches} matches vs greedy (95% {lo:.1%}-{hi:.1%}; an equal player "
                f"{self.baseline:.1%}); {budget} a move, "
                f"{self.seconds_per_move:.2f} s a searched move here")
        if self.sprt is not None:
            text += f"; SPRT {self.sprt.verdict()}"
        return text


@dataclass(slots=True)
class Sprt:
    """Wald's sequential probability ratio test on the bot's first-place shares: H0 its win
    rate is ``p0`` (an equal player's, 1/seats) against H1 it is ``p1``, with error rates
    ``alpha`` (accepting H1 when H0 holds) and ``beta``. A shared first place counts as that
    fraction of a win. ``decision`` is "H1", "H0" or None while the evidence is short."""

    p0: float
    p1: float
    alpha: float = 0.05
    beta: float = 0.05
    llr: float = 0.0
    decision: str | None = None

    def __post_init__(self) -> None:
        if not 0 < self.p0 < self.p1 < 1:
            raise ValueError(f"SPRT needs 0 < p0 < p1 < 1, not p0={self.p0}, p1={self.p1}")
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("SPRT error rates must be within (0, 0.5)")

    @property
    def upper(self) -> float:
        """Accept H1 at or above this log-likelihood ratio."""
        return math.log((1 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        """Accept H0 at or below this log-likelihood ratio."""
        return math.log(self.beta / (1 - self.alpha))

    def add(self, share: float) -> str | None:
        """One match's share of first place; the decision once reached (then fixed)."""
        if self.decision is None:
            self.llr += (share * math.log(self.p1 / self.p0)
                         + (1 - share) * math.log((1 - self.p1) / (1 - self.p0)))
            if self.llr >= self.upper:
                self.decision = "H1"
            elif self.llr <= self.lower:
                self.decision = "H0"
        return self.decision

    def verdict(self) -> str:
        if self.decision == "H1":
            return f"accepts H1 (win rate {self.p1:.2f}) over H0 ({self.p0:.2f})"
        if self.decision == "H0":
            return f"accepts H0 (win rate {self.p0:.2f}) over H1 ({self.p1:.2f})"
        return (f"undecided (LLR {self.llr:.2f} within [{self.lower:.2f}, "
                f"{self.upper:.2f}])")

    def as_dict(self) -> dict[str, Any]:
        return {"p0": round(self.p0, 4), "p1": round(self.p1, 4), "alpha": self.alpha,
                "beta": self.beta, "llr": round(self.llr, 3),
                "bounds": [round(self.lower, 3), round(self.upper, 3)],
                "decision": self.decision}


def greedy_factory(game: str) -> BotFactory:
    """The greedy reference bot of ``game`` (the SDK's ``GREEDY_FOR_GAME``)."""
    make = BOTS[GREEDY_FOR_GAME[game]]
    return lambda seat, seed: make(seed * 8 + seat)


def ismcts_factory(iterations: int | None, seconds: float | None = None,
                   profile: str = DEFAULT_PROFILE, cpu: bool = False,
                   **knobs: Any) -> BotFactory:
    """The ISMCTS bot with this budget (``cpu``: seconds of CPU time), seeded per match and
    seat: the settings of ``profile`` (:data:`~.ismcts.PROFILES`, the bot's by default) with
    these Settings knobs changed."""
    settings = replace(PROFILES[profile],
                       budget=Budget(iterations=iterations, seconds=seconds, cpu=cpu), **knobs)
    return lambda seat, seed: ISMCTSBot(seed * 8 + seat, settings)


def effective_settings(seconds: float | None = None, profile: str = DEFAULT_PROFILE,
                       cpu: bool = False, **knobs: Any) -> dict[str, Any]:
    """What a duel's bot plays with, for its report: the profile's settings with the knobs
    changed (the budget apart: the report has its own fields)."""
    settings = replace(PROFILES[profile], **knobs)
    out = {f.name: getattr(settings, f.name) for f in fields(settings) if f.name != "budget"}
    return {"profile": profile, "seconds": seconds, "cpu": cpu, **out}


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


def _run_one(job: tuple[str, int, int, int, int | None, float | None, dict[str, Any],
                        dict[str, str]]) -> tuple[int, int, Result, int, float, int]:
    game, seats, seed, seat, iterations, seconds, knobs, options = job
    bots: list[ISMCTSBot] = []
    make = ismcts_factory(iterations, seconds, **knobs)

    def challenger(s: int, sd: int) -> Bot:
        bot = make(s, sd)
        assert isinstance(bot, ISMCTSBot)
        bots.append(bot)
        return bot

    result = duel_match(game, seats, seed, seat, challenger, greedy_factory(game),
                        options or None)
    return seed, seat, result, bots[0].searches, bots[0].search_seconds, \
        bots[0].search_iterations


def duel(game: str, seats: int, matches: int, iterations: int | None,
         seconds: float | None = None, jobs: int = 1, first_seed: int = 1,
         progress: Callable[[DuelReport], None] | None = None,
         sprt: Sprt | None = None, resume: list[list[Any]] | None = None,
         options: Mapping[str, str] | None = None, **knobs: Any) -> DuelReport:
    """ISMCTS (``iterations`` per move) against greedy on ``game`` with ``seats`` seats, over
    ``matches`` matches rounded up to whole seeds (each seed played with the bot in every seat),
    on ``jobs`` processes. With ``sprt`` the duel stops as soon as the test decides (which may
    leave the last seed with fewer than every seat). ``progress`` is called after every
    match. ``resume`` (the ``played`` rows of an earlier, stopped report of the same duel)
    counts those matches first and plays only the rest of the schedule. ``options`` are the
    game's (e.g. Goa's ``edition``), its defaults where not given."""
    report = DuelReport(game, seats, iterations, effective_settings(seconds, **knobs), sprt=sprt,
                        options=dict(options or {}))
    done: set[tuple[int, int]] = set()
    for row in resume or []:
        seed, seat, share, margin, searches, spent, its = row
        report.record((int(seed), int(seat), float(share), float(margin), int(searches),
                       float(spent), int(its)))
        done.add((int(seed), int(seat)))
    seeds = max(1, -(-matches // seats))
    work = [(game, seats, seed, seat, iterations, seconds, dict(knobs), dict(options or {}))
            for seed, seat in schedule(seeds, seats, first_seed) if (seed, seat) not in done]
    if sprt is not None and sprt.decision is not None:
        work = []
    if jobs <= 1:
        for job in work:
            seed, seat, result, searches, spent, its = _run_one(job)
            report.add(result, seat, searches, spent, its, seed=seed)
            if progress:
                progress(report)
            if sprt is not None and sprt.decision is not None:
                break
        return report
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(jobs) as pool:  # leaving it terminates it
        for seed, seat, result, searches, spent, its in pool.imap(_run_one, work):
            report.add(result, seat, searches, spent, its, seed=seed)
            if progress:
                progress(report)
            if sprt is not None and sprt.decision is not None:
                break
    return report


def sprt_for(seats: int, delta: float = 0.15, alpha: float = 0.05, beta: float = 0.05) -> Sprt:
    """The SPRT of a duel at ``seats`` seats: H0 an equal player's share, H1 ``delta`` above."""
    return Sprt(1.0 / seats, 1.0 / seats + delta, alpha, beta)


__all__ = [
    "BotFactory",
    "DuelReport",
    "Sprt",
    "decision_message",
    "duel",
    "duel_match",
    "event_message",
    "first_share",
    "greedy_factory",
    "ismcts_factory",
    "play",
    "schedule",
    "sprt_for",
    "wilson",
]
