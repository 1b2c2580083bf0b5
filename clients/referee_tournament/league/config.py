"""League files (TOML): what ``referee-tournament league serve LEAGUE.toml`` runs.

Every error names the offending key (``schedule.concurrency: expected a positive integer``).
The file holds no secret: the referee's admin token comes from ``$REFEREE_ADMIN_TOKEN`` or the
file ``referee.admin_token_file`` names (``--admin-token-file`` overrides it). The schema, with
every default, is in ``examples/leagues/league.toml`` and docs/organizer/league.md.
"""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config import ON_EXPIRY, ConfigError
from ..sandbox import SandboxSpec
from .events import parse_events

REGISTRATIONS = ("invite", "open", "closed")
ROTATIONS = ("shuffle", "balanced")
PAIRINGS = ("rating", "random")
RATING_MODELS = ("plackett_luce",)
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")  # fullmatch: no trailing newline
_TIME_KEYS = ("move_ms", "bank_ms", "grace_ms", "strikes", "join_ms", "first_move_ms")


@dataclass(frozen=True)
class LeagueGame:
    name: str
    seats: int
    options: tuple[tuple[str, str], ...] = ()
    weight: int = 1  # how often it is picked, relative to the league's other games


@dataclass(frozen=True)
class Schedule:
    matches_per_minute: float = 30.0  # the most matches started per minute
    concurrency: int = 2  # matches in flight at once
    per_bot: int = 1  # matches one bot plays at once
    pairing: str = "rating"  # "rating": ladder pairing (near in mu); "random"
    rotation: str = "shuffle"  # "shuffle" seats; "balanced": each bot to its least-played seat
    seed: int = 1
    poll_s: float = 1.0  # how often the league state and the bots are read
    max_matches: int = 0  # stop once the league has this many matches, all runs (0 = never)
    match_wall_s: float = 900.0  # a match still running then is given up (its hosted bots killed)


@dataclass(frozen=True)
class Smoke:
    join_timeout_s: float = 30.0  # the new version must move within this
    game: str = ""  # the game of the smoke match ("" = the league's first)


@dataclass(frozen=True)
class Hosted:
    crash_limit: int = 3  # consecutive start crashes before a version is marked failed
    sandbox: SandboxSpec = field(default_factory=SandboxSpec)
    max_unpacked_mb: int = 64  # refused again on the runner's side past this
    max_files: int = 1000
    node: str = "node"  # the interpreter of "node" uploads


@dataclass(frozen=True)
class LeagueConfig:
    name: str
    title: str
    description: str
    registration: str
    approval: bool
    address: str
    unix_socket: str | None
    admin_token_file: str | None
    games: tuple[LeagueGame, ...]
    time_policy: dict[str, Any]
    rating_model: str
    schedule: Schedule
    smoke: Smoke
    hosted: Hosted
    base_dir: str = "."
    source: str = ""
    # people may challenge the league's entrants in the referee's lobby ("play the champion",
    # docs/bot/lobby.md); those matches are no league matches: the runner takes their signed
    # results in apart from its own (the standings' "challenges"), and rates them only when
    # ``rate_challenges`` says so (issue 33, item 2)
    challenges: bool = False
    rate_challenges: bool = False
    # events the runner plays inside the league (``[[events]]``; .events.LeagueEvent)
    events: tuple[Any, ...] = ()

    def output_dir(self) -> Path:
        return Path("runs") / f"league-{self.name}"

    def public_settings(self) -> dict[str, Any]:
        """What the league page may show (``League.settings_json``): nothing secret, no path."""
        return {"games": [{"name": g.name, "seats": g.seats, "options": dict(g.options)}
                          for g in self.games],
                "time_policy": self.time_policy, "rating_model": self.rating_model,
                "pairing": self.schedule.pairing, "rotation": self.schedule.rotation,
                "matches_per_minute": self.schedule.matches_per_minute,
                "concurrency": self.schedule.concurrency,
                "crash_limit": self.hosted.crash_limit, "challenges": self.challenges,
                "rate_challenges": self.rate_challenges}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _table(raw: dict, key: str) -> dict:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(key, "expected a table")
    return value


def _int(t: dict, key: str, where: str, default: int, lo: int = 0) -> int:
    v = t.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise ConfigError(f"{where}.{key}", f"expected an integer >= {lo}")
    return v


def _num(t: dict, key: str, where: str, default: float) -> float:
    v = t.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int | float) or v <= 0:
        raise ConfigError(f"{where}.{key}", "expected a positive number")
    return float(v)


def _str(t: dict, key: str, where: str, default: str, choices: tuple[str, ...] = ()) -> str:
    v = t.get(key, default)
    if not isinstance(v, str):
        raise ConfigError(f"{where}.{key}", "expected a string")
    if choices and v not in choices:
        raise ConfigError(f"{where}.{key}", f"expected one of {', '.join(choices)}")
    return v


def _unknown(t: dict, where: str, known: tuple[str, ...]) -> None:
    for k in t:
        if k not in known:
            raise ConfigError(f"{where}.{k}" if where else k,
                              f"unknown key (expected one of {', '.join(known)})")


def parse(raw: dict[str, Any], *, base_dir: str = ".", source: str = "") -> LeagueConfig:
    _unknown(raw, "", ("league", "referee", "games", "time", "rating", "schedule", "smoke",
                       "hosted", "events"))
    lg = _table(raw, "league")
    _unknown(lg, "league", ("name", "title", "description", "registration", "approval",
                            "challenges", "rate_challenges"))
    name = lg.get("name")
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ConfigError("league.name", "expected 1-64 letters, digits, '.', '_', '+', '-'")
    approval = lg.get("approval", False)
    if not isinstance(approval, bool):
        raise ConfigError("league.approval", "expected true or false")
    challenges = lg.get("challenges", False)
    if not isinstance(challenges, bool):
        raise ConfigError("league.challenges", "expected true or false")
    rate_challenges = lg.get("rate_challenges", False)
    if not isinstance(rate_challenges, bool):
        raise ConfigError("league.rate_challenges", "expected true or false")
    if rate_challenges and not challenges:
        raise ConfigError("league.rate_challenges", "rates the challenges `challenges = true` "
                          "allows: set that too")
    ref = _table(raw, "referee")
    if "admin_token" in ref:
        raise ConfigError("referee.admin_token", "a secret never goes in the file: use "
                          "$REFEREE_ADMIN_TOKEN or referee.admin_token_file")
    _unknown(ref, "referee", ("address", "unix_socket", "admin_token_file"))
    address = _str(ref, "address", "referee", "127.0.0.1:50051")
    sock = ref.get("unix_socket")
    if sock is not None and not isinstance(sock, str):
        raise ConfigError("referee.unix_socket", "expected a path")
    tok = ref.get("admin_token_file")
    if tok is not None and not isinstance(tok, str):
        raise ConfigError("referee.admin_token_file", "expected a path")
    games_raw = raw.get("games")
    if not isinstance(games_raw, list) or not games_raw:
        raise ConfigError("games", "expected at least one [[games]] table")
    games = []
    for i, g in enumerate(games_raw):
        where = f"games[{i}]"
        if not isinstance(g, dict):
            raise ConfigError(where, "expected a table")
        _unknown(g, where, ("name", "seats", "options", "weight"))
        gname = g.get("name")
        if not isinstance(gname, str) or not gname:
            raise ConfigError(f"{where}.name", "expected a game name")
        opts = g.get("options", {})
        if not isinstance(opts, dict):
            raise ConfigError(f"{where}.options", "expected a table")
        games.append(LeagueGame(
            gname, _int(g, "seats", where, 2, lo=1),
            tuple(sorted((str(k), str(v).lower() if isinstance(v, bool) else str(v))
                         for k, v in opts.items())),
            _int(g, "weight", where, 1, lo=1)))
    tm = _table(raw, "time")
    _unknown(tm, "time", (*_TIME_KEYS, "on_expiry"))
    time_policy: dict[str, Any] = {k: _int(tm, k, "time", d) for k, d in zip(
        _TIME_KEYS, (2000, 0, 200, 0, 10000, 2000), strict=True)}
    time_policy["on_expiry"] = _str(tm, "on_expiry", "time", "random_legal", ON_EXPIRY)
    rt = _table(raw, "rating")
    _unknown(rt, "rating", ("model",))
    sc = _table(raw, "schedule")
    _unknown(sc, "schedule", tuple(Schedule.__dataclass_fields__))
    d = Schedule()
    schedule = Schedule(
        matches_per_minute=_num(sc, "matches_per_minute", "schedule", d.matches_per_minute),
        concurrency=_int(sc, "concurrency", "schedule", d.concurrency, lo=1),
        per_bot=_int(sc, "per_bot", "schedule", d.per_bot, lo=1),
        pairing=_str(sc, "pairing", "schedule", d.pairing, PAIRINGS),
        rotation=_str(sc, "rotation", "schedule", d.rotation, ROTATIONS),
        seed=_int(sc, "seed", "schedule", d.seed),
        poll_s=_num(sc, "poll_s", "schedule", d.poll_s),
        max_matches=_int(sc, "max_matches", "schedule", d.max_matches),
        match_wall_s=_num(sc, "match_wall_s", "schedule", d.match_wall_s))
    sm = _table(raw, "smoke")
    _unknown(sm, "smoke", ("join_timeout_s", "game"))
    smoke = Smoke(_num(sm, "join_timeout_s", "smoke", Smoke.join_timeout_s),
                  _str(sm, "game", "smoke", ""))
    if smoke.game and smoke.game not in {g.name for g in games}:
        raise ConfigError("smoke.game", "not one of the league's games")
    ho = _table(raw, "hosted")
    _unknown(ho, "hosted", ("crash_limit", "sandbox", "max_unpacked_mb", "max_files", "node"))
    sb = _table(ho, "sandbox")
    _unknown(sb, "hosted.sandbox", tuple(f for f in SandboxSpec.__dataclass_fields__
                                         if f != "read_only"))
    ds = SandboxSpec()
    limits: dict[str, Any] = {f: _int(sb, f, "hosted.sandbox", getattr(ds, f), lo=1)
                              for f in SandboxSpec.__dataclass_fields__ if f != "read_only"}
    sandbox = SandboxSpec(**limits)
    hosted = Hosted(crash_limit=_int(ho, "crash_limit", "hosted", 3, lo=1), sandbox=sandbox,
                    max_unpacked_mb=_int(ho, "max_unpacked_mb", "hosted", 64, lo=1),
                    max_files=_int(ho, "max_files", "hosted", 1000, lo=1),
                    node=_str(ho, "node", "hosted", "node"))
    return LeagueConfig(
        name=name, title=_str(lg, "title", "league", name),
        description=_str(lg, "description", "league", ""),
        registration=_str(lg, "registration", "league", "invite", REGISTRATIONS),
        approval=approval, address=address, unix_socket=sock, admin_token_file=tok,
        games=tuple(games), time_policy=time_policy,
        rating_model=_str(rt, "model", "rating", "plackett_luce", RATING_MODELS),
        schedule=schedule, smoke=smoke, hosted=hosted, base_dir=base_dir, source=source,
        challenges=challenges, rate_challenges=rate_challenges,
        events=parse_events(raw.get("events"), {g.name: g.seats for g in games}))


def load(path: str | Path) -> LeagueConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("file", str(exc), path) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("toml", str(exc), path) from None
    try:
        return parse(raw, base_dir=str(path.parent.resolve()), source=text)
    except ConfigError as exc:
        raise ConfigError(exc.key, str(exc).split(": ", 1)[-1], path) from None


def resolve_path(cfg: LeagueConfig, p: str) -> Path:
    """A path of the file, relative to the file's folder."""
    q = Path(p).expanduser()
    return q if q.is_absolute() else Path(cfg.base_dir) / q


def settings_json(cfg: LeagueConfig) -> str:
    return json.dumps(cfg.public_settings(), sort_keys=True)
