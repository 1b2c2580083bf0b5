"""Events inside a league (issue 35, item 4): ``[[events]]`` tables of the league file.

An event is a Swiss, a knockout, an arena or a round robin that the league runner plays among
the league's bots from its start time on, with the tournament's planners
(:mod:`..events`: no second implementation of a format). Its entrants are drawn at the start
time by a rule: ``entrants = "top"`` takes the ``top`` best of the standings (ranked bots that
are active now; an entrant that is absent then forfeits its matches by the tournament's rule),
``entrants = "ready"`` takes every bot that may play now (a connected remote bot, a hosted one
with a READY version). The draw is stored with the event (``events`` table of the league's
database), so a restarted runner plays the same event: the rounds are derived again from the
stored results (:func:`..events.derive`), the arena goes on forming tables until its end, and
only the matches not yet stored are created.

By default an event's matches are rated like any league match (``rated = true``); with
``rated = false`` they count for the event only (no rating change, no standings win).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
import time
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

from ..config import ConfigError, rank_points
from ..events import (
    Arena,
    Knockout,
    Played,
    RoundPlan,
    Swiss,
    TablePlan,
    balanced_seating,
    default_swiss_rounds,
    derive,
    table_seed,
)
from ..report import did_not_play
from ..store import Row

FORMATS = ("swiss", "knockout", "arena", "round_robin")
RULES = ("top", "ready")
MAX_AHEAD_S = 366 * 24 * 3600  # a start further ahead than a year is a typo
PAST_GRACE_S = 60.0  # a new event may start this long ago (the file was just written)
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")
#: the keys of an [[events]] table; the format keys are those of a tournament's [format]
KEYS = ("name", "format", "start", "game", "entrants", "top", "rated", "rounds", "points",
        "duplicate_seeds", "withdraw_after", "advance", "best_of", "duration_s")
ONLY = {"rounds": ("swiss",), "advance": ("knockout",), "best_of": ("knockout",),
        "duration_s": ("arena",), "duplicate_seeds": ("swiss", "knockout"),
        "withdraw_after": ("swiss", "arena")}


@dataclass(frozen=True)
class LeagueEvent:
    name: str
    format: str
    start_unix: float
    game: str
    seats: int
    entrants: str = "ready"
    top: int = 0
    rated: bool = True
    rounds: int = 0  # swiss: 0 = as many as a chess Swiss of the field drawn
    points: tuple[float, ...] = ()
    duplicate_seeds: bool = False
    withdraw_after: int = 2
    advance: int = 1
    best_of: int = 0  # knockout: 0 = the seats (one rotation)
    duration_s: float = 0.0
    seed: int = 0  # the event's seed: from the league's seed and the event's name when stored

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def from_json(doc: dict[str, Any]) -> LeagueEvent:
    doc = dict(doc)
    doc["points"] = tuple(doc.get("points") or ())
    return LeagueEvent(**doc)


def _start(v: Any, where: str) -> float:
    if isinstance(v, str):
        try:
            v = dt.datetime.fromisoformat(v)
        except ValueError:
            raise ConfigError(where, f"expected a date and time (RFC 3339), got {v!r}") from None
    if not isinstance(v, dt.datetime):
        raise ConfigError(where, "expected a date and time with its offset, e.g. "
                          "2026-12-01T18:00:00Z")
    if v.tzinfo is None:
        raise ConfigError(where, "give the time's offset (e.g. ...T18:00:00Z or +01:00): "
                          "a local time is ambiguous")
    return v.timestamp()


def parse_events(raw: Any, games: dict[str, int], *, now: float | None = None
                 ) -> tuple[LeagueEvent, ...]:
    """The ``[[events]]`` tables, each checked (every error names its key). ``games``: the
    league's games and their seats. A start more than a year ahead is refused here; a start in
    the past only for an event the league has not stored yet (:func:`new_event_problems`)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError("events", "expected [[events]] tables")
    now = time.time() if now is None else now
    out: list[LeagueEvent] = []
    for i, e in enumerate(raw):
        w = f"events[{i}]"
        if not isinstance(e, dict):
            raise ConfigError(w, "expected a table")
        for k in e:
            if k not in KEYS:
                raise ConfigError(f"{w}.{k}", f"unknown key (expected one of {', '.join(KEYS)})")
        name = e.get("name")
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise ConfigError(f"{w}.name", "expected 1-64 letters, digits, '.', '_', '+', '-'")
        if name in {x.name for x in out}:
            raise ConfigError(f"{w}.name", f"a second event named {name}")
        fmt = e.get("format")
        if fmt not in FORMATS:
            raise ConfigError(f"{w}.format", f"expected one of {', '.join(FORMATS)}, "
                              f"got {fmt!r}")
        for k, only in ONLY.items():
            if k in e and fmt not in only:
                raise ConfigError(f"{w}.{k}", f"only a {' or '.join(only)} event has this")
        if "start" not in e:
            raise ConfigError(f"{w}.start", "expected the event's start time")
        start = _start(e["start"], f"{w}.start")
        if start > now + MAX_AHEAD_S:
            raise ConfigError(f"{w}.start", "more than a year ahead: check the date")
        game = e.get("game", next(iter(games)))
        if game not in games:
            raise ConfigError(f"{w}.game", f"not one of the league's games ({', '.join(games)})")
        seats = games[game]
        rule = e.get("entrants", "ready")
        if rule not in RULES:
            raise ConfigError(f"{w}.entrants", f"expected one of {', '.join(RULES)}")
        top = e.get("top", 0)
        if isinstance(top, bool) or not isinstance(top, int) or top < 0:
            raise ConfigError(f"{w}.top", "expected an integer >= 0")
        if rule == "top" and top < seats:
            raise ConfigError(f"{w}.top", f"entrants = \"top\" needs top >= {seats} (one full "
                              f"table of {game})")
        if rule != "top" and "top" in e:
            raise ConfigError(f"{w}.top", "only entrants = \"top\" takes top")
        rated = e.get("rated", True)
        if not isinstance(rated, bool):
            raise ConfigError(f"{w}.rated", "expected true or false")
        points = rank_points(e["points"], seats, f"{w}.points") if "points" in e else ()
        dup = e.get("duplicate_seeds", False)
        if not isinstance(dup, bool):
            raise ConfigError(f"{w}.duplicate_seeds", "expected true or false")

        def _i(key: str, default: int, lo: int, hi: int, e: dict = e, w: str = w) -> int:
            v = e.get(key, default)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ConfigError(f"{w}.{key}", f"expected an integer from {lo} to {hi}")
            return v
        duration = e.get("duration_s", 0.0)
        if fmt == "arena" and (isinstance(duration, bool) or not isinstance(duration, int | float)
                               or not 1 <= duration <= 7 * 24 * 3600):
            raise ConfigError(f"{w}.duration_s", "an arena needs its duration: 1 s to 7 days")
        if fmt == "knockout" and seats < 2:
            raise ConfigError(f"{w}.game", "a knockout needs at least 2 seats")
        out.append(LeagueEvent(
            name=name, format=fmt, start_unix=start, game=game, seats=seats, entrants=rule,
            top=top, rated=rated, rounds=_i("rounds", 0, 0, 100), points=points,
            duplicate_seeds=dup, withdraw_after=_i("withdraw_after", 2, 0, 1000),
            advance=_i("advance", 1, 1, max(1, seats - 1)), best_of=_i("best_of", 0, 0, 100),
            duration_s=float(duration)))
    return tuple(out)


def new_event_problems(events: tuple[LeagueEvent, ...], known: set[str],
                       now: float | None = None) -> list[str]:
    """Why the events the league has not stored yet cannot be scheduled: a start already past
    (a stored event that started is resumed instead)."""
    now = time.time() if now is None else now
    return [f"events.{e.name}.start: in the past ({_iso(e.start_unix)}); a new event starts "
            "now or later" for e in events
            if e.name not in known and e.start_unix < now - PAST_GRACE_S]


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat().replace("+00:00", "Z")


def event_seed(league: str, league_seed: int, event: str) -> int:
    digest = hashlib.sha256(f"referee-league-event:{league}:{league_seed}:{event}".encode())
    return int.from_bytes(digest.digest()[:8], "big") >> 1


def played(row: Row) -> Played:
    """A stored event match (``row.idx`` is its index in the event) as the planners see it."""
    seats = (row.outcome or {}).get("seats") or []
    no_play = tuple(did_not_play(s) for s in seats) if len(seats) == len(row.seating) else ()
    ranks = tuple(row.ranks) if row.status == "done" and row.ranks else None
    return Played(row.idx, row.round, 0, tuple(row.seating), ranks, no_play,
                  tuple(row.scores or ()))


def resolved(rows: list[Row]) -> set[int]:
    return {r.idx for r in rows if r.status in ("done", "failed", "lost")}


@dataclass(frozen=True)
class Planned:
    """One match an event wants: its index in the event, seating and seed."""

    idx: int
    seating: tuple[str, ...]
    seed: int


class Plan:
    """An event's planner over its drawn entrants (seed order: best first)."""

    def __init__(self, ev: LeagueEvent, entrants: list[str]):
        self.ev = ev
        self.names = list(entrants)
        self.seed = seed = ev.seed
        k = ev.seats
        points = ev.points or None
        self.swiss: Swiss | None = None
        self.knockout: Knockout | None = None
        self.arena: Arena | None = None
        if ev.format == "swiss":
            self.swiss = Swiss(self.names, k, ev.rounds or default_swiss_rounds(len(self.names)),
                               seed, points, ev.duplicate_seeds, ev.withdraw_after)
        elif ev.format == "knockout":
            self.knockout = Knockout(self.names, k, ev.advance, ev.best_of or k, seed, points,
                                     ev.duplicate_seeds)
        elif ev.format == "arena":
            self.arena = Arena(self.names, k, points, ev.withdraw_after)
        else:  # round robin: every table of k once; scored (and tie-broken) as a Swiss
            if len(self.names) < k:
                raise ValueError(f"a round robin needs at least {k} entrants (one table)")
            self.swiss = Swiss(self.names, k, 1, seed, points, False, 0)

    def _round_robin(self) -> RoundPlan:
        """Every k-subset of the entrants at one table, each seated so that every entrant gets
        the seats it held least (over the tables before it, so the plan is fixed)."""
        counts: dict[str, list[int]] = {}
        tables = []
        for t, members in enumerate(combinations(self.names, self.ev.seats)):
            seating = balanced_seating(members, counts)
            for s, n in enumerate(seating):
                counts.setdefault(n, [0] * self.ev.seats)[s] += 1
            tables.append(TablePlan(t, members, [seating], table_seed(self.seed, 0, t, False)))
        return RoundPlan(0, tables)

    def state(self, rows: list[Row]) -> tuple[list[Planned], bool, dict[str, Any]]:
        """The matches the stored results make known (staged formats; an arena's are formed as
        entrants come free: :meth:`arena_table`), whether the event is over (an arena's end
        is its time) and its summary (standings with tie-breaks, rounds or bracket)."""
        by_idx = {r.idx: played(r) for r in rows}
        done = resolved(rows)
        if self.arena is not None:
            order = sorted((r for r in rows if r.idx in done), key=lambda r: (r.finished or 0,
                                                                               r.idx))
            return [], False, {"standings": self.arena.standings([played(r) for r in order]),
                               "points": list(self.arena.points),
                               "duration_s": self.ev.duration_s}
        status = {r.idx: r for r in rows}
        if self.ev.format == "round_robin":
            assert self.swiss is not None
            plan = self._round_robin()
            specs = [Planned(i, t.seatings[0], t.seed) for i, t in enumerate(plan.tables)]
            complete = all(p.idx in done for p in specs)
            matches = [by_idx[p.idx] for p in specs if p.idx in done]
            st = [s.as_json(i + 1) for i, s in enumerate(self.swiss.standings([], matches))]
            return specs, complete, {"standings": st, "points": list(self.swiss.points),
                                     "rounds": [_round_json(plan, [[p.idx] for p in specs],
                                                            status)]}
        planner = self.swiss or self.knockout
        assert planner is not None
        state = derive(planner, by_idx, done)
        specs = []
        for plan, idx in zip(state.rounds, state.indices, strict=True):
            for table, tidx in zip(plan.tables, idx, strict=True):
                specs.extend(Planned(i, s, table.seed)
                             for i, s in zip(tidx, table.seatings, strict=True))
        summary: dict[str, Any] = {"standings": state.standings, "points": list(planner.points)}
        if self.swiss is not None:
            summary["bye_points"] = self.swiss.bye_points
            summary["rounds"] = [_round_json(p, i, status)
                                 for p, i in zip(state.rounds, state.indices, strict=True)]
        else:
            summary["bracket"] = state.bracket
        return specs, state.complete, summary

    def arena_table(self, free: list[str], rows: list[Row]) -> tuple[str, ...] | None:
        assert self.arena is not None
        done = resolved(rows)
        order = sorted((r for r in rows if r.idx in done), key=lambda r: (r.finished or 0, r.idx))
        return self.arena.form_table(free, [played(r) for r in order])


def _round_json(plan: RoundPlan, idx: list[list[int]], rows: dict[int, Row]) -> dict[str, Any]:
    return {"round": plan.number, "byes": plan.byes, "tables": [
        {"table": t.number, "seating": list(t.seatings[0]), "match": idx[j][0],
         "status": rows[idx[j][0]].status if idx[j][0] in rows else "pending",
         "ranks": rows[idx[j][0]].ranks if idx[j][0] in rows else None}
        for j, t in enumerate(plan.tables)]}


def arena_seed(seed: int, idx: int) -> int:
    """The seed of an arena's match ``idx`` (one per match: its tables form as they come)."""
    return table_seed(seed, idx, 0, True)


def events_json(store: Any) -> list[dict[str, Any]]:
    """Each stored event of a league's database (:class:`.store.LeagueStore`) as the standings
    JSON carries it (``events``, the standings schema) and the league's report shows it."""
    out = []
    for row in store.events():
        ev = from_json(row["spec"])
        pairs = store.event_rows(ev.name)
        league_idx = store.event_league_idx(ev.name)
        doc: dict[str, Any] = {
            "name": ev.name, "format": ev.format, "game": ev.game, "seats": ev.seats,
            "status": row["status"], "start_unix_ms": int(ev.start_unix * 1000),
            "rated": ev.rated, "rule": ev.entrants, "top": ev.top,
            "entrants": row["entrants"], "error": row["error"],
            "matches": [{"idx": r.idx, "league_idx": league_idx.get(r.idx, 0),
                         "match_id": mid or "", "status": r.status,
                         "seating": list(r.seating), "ranks": r.ranks} for r, mid in pairs]}
        if row["started"]:
            doc["started_unix_ms"] = int(row["started"] * 1000)
        if row["finished"]:
            doc["finished_unix_ms"] = int(row["finished"] * 1000)
        if row["entrants"]:
            _, complete, summary = Plan(ev, row["entrants"]).state([r for r, _ in pairs])
            doc["summary"] = {**summary, "complete": row["status"] == "done" or complete}
        out.append(doc)
    return out


def report_event(doc: dict[str, Any]) -> dict[str, Any] | None:
    """An event of :func:`events_json` in the shape of a tournament's results.json ``event``
    (which the HTML report renders), or None (a round robin's table is its standings)."""
    if doc["format"] not in ("swiss", "knockout", "arena") or "summary" not in doc:
        return None
    s = doc["summary"]
    out = {"type": doc["format"], "name": doc["name"], "complete": s["complete"],
           "points": s["points"], "standings": s["standings"]}
    for k in ("bye_points", "bracket", "duration_s"):
        if k in s:
            out[k] = s[k]
    if "rounds" in s:  # the report's match rows are numbered by league index
        league = {m["idx"]: m["league_idx"] for m in doc["matches"]}
        out["rounds"] = [{**r, "tables": [{**t, "match": league.get(t["match"], t["match"])}
                                          for t in r["tables"]]} for r in s["rounds"]]
    if doc["format"] == "knockout":
        first = (s.get("bracket") or [{}])[0].get("tables") or [{}]
        out["best_of"] = len(first[0].get("matches") or [])
    return out
