"""Tournament files (TOML): parsing and validation.

Every error names the offending key (``format.rounds: expected a positive integer``), so a typo
in a file is found from the message alone. See ``examples/tournaments/*.toml`` and the package
docstring for the full schema.
"""
from __future__ import annotations

import hashlib
import json
import re
import shlex
import tomllib
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from referee_client.unary import ON_EXPIRY as _ON_EXPIRY

from .events import default_swiss_rounds
from .sandbox import SandboxSpec

FORMATS = ("round_robin", "gauntlet", "pairs", "ladder",  # ladder: see .ladder
           "swiss", "knockout", "arena")  # events: see .events
SEEDINGS = ("order", "ratings")
EVENT_TYPES = ("swiss", "knockout", "arena")
SEATINGS = ("all", "rotate")
ON_EXPIRY = tuple(_ON_EXPIRY)
BACKENDS = ("local", "ray")
PLACEHOLDERS = ("address", "match", "token", "seat", "seed", "python", "name", "game")
#: a persistent entrant's command (started once, plays every match it is assigned)
PERSISTENT_PLACEHOLDERS = ("address", "bot_token", "capacity", "python", "name", "game")
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}")  # fullmatch: no trailing newline


class ConfigError(ValueError):
    """A tournament file is invalid; the message names the key."""

    def __init__(self, key: str, message: str, file: str | Path | None = None):
        self.key = key
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{key}: {message}")


@dataclass(frozen=True)
class Entrant:
    name: str
    command: tuple[str, ...]
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    sandbox: SandboxSpec | None = None  # run untrusted: see referee_tournament.sandbox
    persistent: bool = False  # started once; plays its matches over a bot Session
    copies: int = 1  # persistent: processes started (per referee)
    capacity: int = 0  # persistent: matches at once per process (0: enough for the run)
    kind: str = "command"  # or "chat-model": `referee-bot llm` (see _chat_model_command)


@dataclass(frozen=True)
class EarlyStop:
    method: str = "sprt"
    alpha: float = 0.05
    beta: float = 0.05
    delta: float = 0.25  # H1: head-to-head win probability 0.5 + delta
    min_matches: int = 6


@dataclass(frozen=True)
class Format:
    type: str = "round_robin"
    seating: str = "all"
    rounds: int = 1
    challenger: str | None = None
    matches_per_pairing: int | None = None
    early_stop: EarlyStop | None = None
    # events (swiss, knockout, arena: see .events for the rules)
    points: tuple[float, ...] | None = None  # rank points by place (default k-1 .. 0)
    duplicate_seeds: bool = False  # every table of a round on the round's seed
    withdraw_after: int = 2  # matches in a row not played by its bot withdraw an entrant
    advance: int = 1  # knockout: how many of a table go on
    best_of: int | None = None  # knockout: matches per table (default: the seats, one rotation)
    seeding: str = "order"  # knockout: file order, or a previous run's ratings
    ratings_from: str | None = None  # knockout: that run's results folder or results.json
    duration_s: float | None = None  # arena: how long tables are formed


#: The start-up allowance of a runner match's first move per seat, unless time.first_move_ms
#: says otherwise: a bot process started for the match has just imported its libraries.
DEFAULT_FIRST_MOVE_MS = 2000


@dataclass(frozen=True)
class TimeConfig:
    move_ms: int = 5000
    bank_ms: int = 0
    grace_ms: int = 250
    strikes: int = 0
    on_expiry: str = "random_legal"
    match_wall_s: float = 600.0  # runner's hard limit per match (kills the bots)
    bot_grace_s: float = 3.0  # after the match ends, bots get this long to exit
    join_timeout_s: float = 30.0  # a bot that has not joined by then is abandoned (0: never)
    # the time policy's fair start (referee.proto, TimePolicy): the first decision waits up to
    # join_ms for every seat to join (0: the referee's default), and each seat's first timed
    # decision gets first_move_ms on top of move_ms (a bot process's start-up: imports, loading)
    join_ms: int = 0
    first_move_ms: int = DEFAULT_FIRST_MOVE_MS
    increment_ms: int = 0  # Fischer: added to a seat's bank after each of its own moves


@dataclass(frozen=True)
class RunConfig:
    concurrency: int = 2
    referees: int = 1
    backend: str = "local"
    address: str | None = None  # use a running referee instead of starting one
    ray_address: str | None = None
    task_referee: bool = False  # Ray: every task starts its own referee instead of `address`
    unix_socket: str | None = None  # the running referee's --unix socket (sandboxed entrants)


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    game: str
    seats: int
    options: tuple[tuple[str, str], ...]
    entrants: tuple[Entrant, ...]
    format: Format
    time: TimeConfig
    run: RunConfig
    seed: int = 1
    output: str | None = None
    base_dir: str = "."
    source: str = ""  # the TOML text it was read from (kept in the results for `resume DIR`)
    raw_json: str = ""  # the parsed document as JSON (kept too; works without a file)

    def entrant(self, name: str) -> Entrant:
        for e in self.entrants:
            if e.name == name:
                return e
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entrants]

    def output_dir(self) -> Path:
        """``output`` (relative to the tournament file's folder), else ``runs/<name>`` in the
        current directory (``runs/`` is git-ignored)."""
        if self.output:
            p = Path(self.output)
            return p if p.is_absolute() else Path(self.base_dir) / p
        return Path.cwd() / "runs" / self.name

    def schedule_fingerprint(self) -> str:
        """What decides the matches: if it changes, a results folder cannot be resumed. The
        number of rounds (or matches per pairing) is left out: raising it extends a tournament
        (the store checks the old schedule is a prefix of the new one)."""
        fmt = asdict(self.format)
        fmt.pop("rounds")
        fmt.pop("matches_per_pairing")
        fmt.pop("duration_s")  # an arena given more time goes on
        if self.format.type not in EVENT_TYPES:
            for key in EVENT_KEYS:  # the fingerprint of a folder made before the events
                fmt.pop(key, None)
        data = {
            "game": self.game, "seats": self.seats, "options": list(self.options),
            "entrants": self.names, "format": fmt, "seed": self.seed,
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("source", None)
        d.pop("raw_json", None)
        d["options"] = dict(self.options)
        return d


# ---------------------------------------------------------------------- helpers

def _table(d: dict, key: str, path: str) -> dict:
    v = d.get(key, {})
    if not isinstance(v, dict):
        raise ConfigError(f"{path}{key}", f"expected a table, got {type(v).__name__}")
    return v


def _unknown(d: dict, allowed: set[str], path: str) -> None:
    for k in d:
        if k not in allowed:
            hint = ", ".join(sorted(allowed))
            raise ConfigError(f"{path}{k}", f"unknown key (allowed here: {hint})")


def _int(d: dict, key: str, path: str, default: int | None, lo: int = 0, hi: int | None = None):
    if key not in d:
        return default
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
        rng = f">= {lo}" + (f" and <= {hi}" if hi is not None else "")
        raise ConfigError(f"{path}{key}", f"expected an integer {rng}, got {v!r}")
    return v


def _float(d: dict, key: str, path: str, default: float, lo: float = 0.0, hi: float | None = None):
    if key not in d:
        return default
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or v < lo or (
        hi is not None and v > hi
    ):
        rng = f">= {lo}" + (f" and <= {hi}" if hi is not None else "")
        raise ConfigError(f"{path}{key}", f"expected a number {rng}, got {v!r}")
    return float(v)


def _str(d: dict, key: str, path: str, default: str | None, choices=None):
    if key not in d:
        return default
    v = d[key]
    if not isinstance(v, str) or not v:
        raise ConfigError(f"{path}{key}", f"expected a non-empty string, got {v!r}")
    if choices and v not in choices:
        raise ConfigError(f"{path}{key}", f"expected one of {', '.join(choices)}; got {v!r}")
    return v


def _sandbox(v: Any, key: str) -> SandboxSpec | None:
    """``sandbox = true`` (default limits) or a table of limits and ``read_only`` paths."""
    if isinstance(v, bool):
        return SandboxSpec() if v else None
    if not isinstance(v, dict):
        raise ConfigError(key, f"expected true, false or a table of limits, got {v!r}")
    p = key + "."
    _unknown(v, {"memory_mb", "cpu_s", "processes", "open_files", "file_mb", "tmp_mb",
                 "read_only"}, p)
    d = SandboxSpec()
    ro = v.get("read_only", [])
    if not isinstance(ro, list) or not all(isinstance(x, str) and x for x in ro):
        raise ConfigError(f"{p}read_only", "expected a list of paths")
    return SandboxSpec(
        memory_mb=_int(v, "memory_mb", p, d.memory_mb, lo=64),
        cpu_s=_int(v, "cpu_s", p, d.cpu_s, lo=1),
        processes=_int(v, "processes", p, d.processes, lo=1),
        open_files=_int(v, "open_files", p, d.open_files, lo=16),
        file_mb=_int(v, "file_mb", p, d.file_mb, lo=1),
        tmp_mb=_int(v, "tmp_mb", p, d.tmp_mb, lo=1),
        read_only=tuple(ro),
    )


def _option_text(v: Any, key: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float | str):
        return str(v)
    raise ConfigError(key, f"an option value is a string, number or boolean, got {v!r}")


def _command(v: Any, key: str, persistent: bool = False) -> tuple[str, ...]:
    if isinstance(v, str):
        try:
            argv = shlex.split(v)
        except ValueError as exc:
            raise ConfigError(key, f"cannot split the command line: {exc}") from None
    elif isinstance(v, list) and all(isinstance(x, str) for x in v):
        argv = list(v)
    else:
        raise ConfigError(key, "expected a command line (string) or a list of strings")
    if not argv:
        raise ConfigError(key, "the command is empty")
    known = PERSISTENT_PLACEHOLDERS if persistent else PLACEHOLDERS
    for arg in argv:
        for m in re.finditer(r"\{([^{}]*)\}", arg):
            if m.group(1) not in known:
                raise ConfigError(
                    key, f"unknown placeholder {{{m.group(1)}}} "
                    + ("in a persistent entrant's command " if persistent else "") + "(known: "
                    + ", ".join("{" + p + "}" for p in known) + ")"
                )
    joined = " ".join(argv)
    # no {token}: a bot gets its seat token in $REFEREE_TOKEN (a command line is public)
    for needed in ("{address}",) if persistent else ("{address}", "{match}"):
        if needed not in joined:
            raise ConfigError(key, f"the command never passes {needed} to the bot")
    return tuple(argv)


#: what an [[entrants]] table describes: a bot command, or a chat model played by
#: `referee-bot llm` (base_url, model, api_key_file)
ENTRANT_KINDS = ("command", "chat-model")


def _chat_model_command(e: dict[str, Any], p: str, base_dir: str) -> list[str]:
    """A chat-model entrant's command: `referee-bot llm` (the SDK's chat-model bot) with its
    server, model and the organizer's key file (its path only: the key never reaches a command
    line); the seat token comes in $REFEREE_TOKEN like any bot's."""
    url = _str(e, "base_url", p, None)
    model = _str(e, "model", p, None)
    if not url or not model:
        raise ConfigError(f"{p}base_url" if not url else f"{p}model",
                          "missing: a chat-model entrant needs base_url and model")
    parsed = urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ConfigError(f"{p}base_url", f"expected an http(s) URL, got {url[:80]!r}")
    if parsed.username or parsed.password or parsed.query or "{" in url:
        raise ConfigError(f"{p}base_url", "no credentials, query or braces in the URL: the key "
                          "goes in api_key_file")
    if "{" in model:
        raise ConfigError(f"{p}model", "no braces in a model name")
    cmd = ["{python}", "-m", "referee_client.cli", "llm", "--base-url", url, "--model", model,
           "--address", "{address}", "--match", "{match}"]
    for key, flag in (("api_key_file", "--api-key-file"), ("prompt", "--prompt")):
        value = _str(e, key, p, None)
        if value is None:
            continue
        path = Path(value) if Path(value).is_absolute() else Path(base_dir) / value
        if not path.is_file():
            raise ConfigError(f"{p}{key}", f"no file {path}")
        cmd += [flag, str(path.resolve())]
    reasks = _int(e, "reasks", p, None, lo=0, hi=10)
    if reasks is not None:
        cmd += ["--reasks", str(reasks)]
    return cmd


# ---------------------------------------------------------------------- events

#: the format keys of the events (swiss, knockout, arena), and which event each belongs to
EVENT_KEYS = {"points": ("swiss", "knockout", "arena"),
              "duplicate_seeds": ("swiss", "knockout"),
              "withdraw_after": ("swiss", "arena"),
              "advance": ("knockout",), "best_of": ("knockout",), "seeding": ("knockout",),
              "ratings_from": ("knockout",), "duration_s": ("arena",)}


def rank_points(v: Any, seats: int, key: str) -> tuple[float, ...]:
    """An event's points per table rank (a tournament's `[format] points`, a league event's
    `points`): one number per seat, first place first, never increasing."""
    if (not isinstance(v, list) or len(v) != seats
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)
            or any(a < b for a, b in pairwise(v))):
        raise ConfigError(key, f"expected {seats} numbers (one per seat), first place first, "
                          f"never increasing; got {v!r}")
    return tuple(float(x) for x in v)


def _event_format(f: dict, fmt: Format, n: int, seats: int) -> Format:
    """The event keys of the [format] table, checked against the event type."""
    from dataclasses import replace

    p = "format."
    for key, types in EVENT_KEYS.items():
        if key in f and fmt.type not in types:
            raise ConfigError(f"{p}{key}", f"only a {' or '.join(types)} event has this")
    if fmt.type not in ("swiss", "knockout", "arena"):
        return fmt
    for key in ("matches_per_pairing", "early_stop", "seating", "challenger"):
        if key in f:
            raise ConfigError(f"{p}{key}", f"a {fmt.type} event has no {key}")
    if fmt.type != "swiss" and "rounds" in f:
        raise ConfigError(f"{p}rounds", f"a {fmt.type} event has no rounds (swiss has)")
    if n < seats:
        raise ConfigError("entrants", f"a {fmt.type} event needs at least {seats} entrants "
                          "(one full table: game.seats)")
    points = rank_points(f["points"], seats, f"{p}points") if "points" in f else None
    dup = f.get("duplicate_seeds", False)
    if not isinstance(dup, bool):
        raise ConfigError(f"{p}duplicate_seeds", f"expected true or false, got {dup!r}")
    advance = _int(f, "advance", p, 1, lo=1, hi=seats - 1 if seats > 1 else 1)
    if fmt.type == "knockout" and seats < 2:
        raise ConfigError("game.seats", "a knockout needs at least 2 seats")
    duration = _float(f, "duration_s", p, 0.0, 1.0)
    if fmt.type == "arena" and "duration_s" not in f:
        raise ConfigError(f"{p}duration_s", "an arena needs its duration in seconds")
    seeding = _str(f, "seeding", p, "order", SEEDINGS)
    ratings_from = _str(f, "ratings_from", p, None)
    if seeding == "ratings" and not ratings_from:
        raise ConfigError(f"{p}ratings_from", "seeding = \"ratings\" needs the results folder "
                          "(or results.json) of the run whose ratings seed the knockout")
    rounds = fmt.rounds if "rounds" in f else default_swiss_rounds(n)
    return replace(
        fmt, seating="rotate" if fmt.type == "knockout" else fmt.seating,
        rounds=rounds if fmt.type == "swiss" else 1, points=points, duplicate_seeds=dup,
        withdraw_after=_int(f, "withdraw_after", p, 2, lo=0, hi=1000),
        advance=advance, best_of=_int(f, "best_of", p, None, lo=1, hi=100),
        seeding=seeding, ratings_from=ratings_from,
        duration_s=duration if fmt.type == "arena" else None)


# ---------------------------------------------------------------------- parsing

def parse(data: dict[str, Any], base_dir: str | Path = ".", file: str | Path | None = None,
          ) -> TournamentConfig:
    """Validate a parsed TOML document and build a :class:`TournamentConfig`."""
    from dataclasses import replace

    try:
        cfg = _parse(data, str(base_dir))
        return replace(cfg, raw_json=json.dumps(data, default=str))
    except ConfigError as exc:
        if file is not None:
            raise ConfigError(exc.key, str(exc).split(": ", 1)[1], file) from None
        raise


def _parse(data: dict[str, Any], base_dir: str) -> TournamentConfig:
    _unknown(data, {"name", "seed", "output", "game", "entrants", "format", "time", "run"}, "")
    name = _str(data, "name", "", "tournament")
    if not _NAME_RE.fullmatch(name):
        raise ConfigError("name", "use letters, digits, '.', '_', '+' or '-' (max 64)")
    seed = _int(data, "seed", "", 1, lo=0, hi=2**63 - 1)
    output = _str(data, "output", "", None)

    if "game" not in data:
        raise ConfigError("game", "missing: add a [game] table with name = \"batavia\" and seats")
    g = _table(data, "game", "")
    _unknown(g, {"name", "seats", "options"}, "game.")
    game = _str(g, "name", "game.", None)
    if game is None:
        raise ConfigError("game.name", "missing (e.g. name = \"batavia\")")
    seats = _int(g, "seats", "game.", None, lo=1, hi=16)
    if seats is None:
        raise ConfigError("game.seats", "missing: how many seats each match has")
    opts = _table(g, "options", "game.")
    options = tuple(sorted((k, _option_text(v, f"game.options.{k}")) for k, v in opts.items()))

    raw_entrants = data.get("entrants")
    if not isinstance(raw_entrants, list) or not raw_entrants:
        raise ConfigError("entrants", "missing: add [[entrants]] tables with name and command")
    entrants: list[Entrant] = []
    for i, e in enumerate(raw_entrants):
        p = f"entrants[{i}]."
        if not isinstance(e, dict):
            raise ConfigError(f"entrants[{i}]", "expected a table with name and command")
        kind = _str(e, "kind", p, "command", ENTRANT_KINDS)
        if kind == "chat-model":
            _unknown(e, {"name", "kind", "base_url", "model", "api_key_file", "prompt",
                         "reasks", "env"}, p)
            e = {**e, "command": _chat_model_command(e, p, base_dir)}
        else:
            _unknown(e, {"name", "kind", "command", "cwd", "env", "sandbox", "persistent",
                         "copies", "capacity"}, p)
        ename = _str(e, "name", p, None)
        if ename is None:
            raise ConfigError(f"{p}name", "missing")
        if not _NAME_RE.fullmatch(ename):
            raise ConfigError(f"{p}name", "use letters, digits, '.', '_', '+' or '-' (max 64)")
        if any(x.name == ename for x in entrants):
            raise ConfigError(f"{p}name", f"duplicate entrant name {ename!r}")
        if "command" not in e:
            raise ConfigError(f"{p}command", "missing: the command line that starts the bot")
        persistent = e.get("persistent", False)
        if not isinstance(persistent, bool):
            raise ConfigError(f"{p}persistent", f"expected true or false, got {persistent!r}")
        if not persistent and ("copies" in e or "capacity" in e):
            raise ConfigError(f"{p}copies" if "copies" in e else f"{p}capacity",
                              "only a persistent entrant (persistent = true) has this")
        cmd = _command(e["command"], f"{p}command", persistent)
        cwd = _str(e, "cwd", p, None)
        env = _table(e, "env", p)
        for k, v in env.items():
            if not isinstance(v, str):
                raise ConfigError(f"{p}env.{k}", "environment values are strings")
        sandbox = _sandbox(e.get("sandbox", False), f"{p}sandbox")
        entrants.append(Entrant(ename, cmd, cwd, tuple(sorted(env.items())), sandbox,
                                persistent, _int(e, "copies", p, 1, lo=1, hi=64),
                                _int(e, "capacity", p, 0, lo=0, hi=256), kind))

    f = _table(data, "format", "")
    _unknown(f, {"type", "seating", "rounds", "challenger", "matches_per_pairing", "early_stop",
                 *EVENT_KEYS}, "format.")
    ftype = _str(f, "type", "format.", "round_robin", FORMATS)
    seating = _str(f, "seating", "format.", "all", SEATINGS)
    rounds = _int(f, "rounds", "format.", 1, lo=1, hi=100000)
    mpp = _int(f, "matches_per_pairing", "format.", None, lo=1, hi=1000000)
    if mpp is not None and "rounds" in f:
        raise ConfigError("format.matches_per_pairing", "give rounds or matches_per_pairing, not both")
    challenger = _str(f, "challenger", "format.", None)
    names = [e.name for e in entrants]
    if ftype == "gauntlet":
        if challenger is None:
            raise ConfigError("format.challenger", "a gauntlet needs the challenger's name")
        if challenger not in names:
            raise ConfigError("format.challenger", f"{challenger!r} is not an entrant ({names})")
        if len(entrants) < 2:
            raise ConfigError("entrants", "a gauntlet needs the challenger and a field")
    elif challenger is not None:
        raise ConfigError("format.challenger", "only a gauntlet has a challenger")
    if len(entrants) < 2:
        raise ConfigError("entrants", "a tournament needs at least two entrants")
    if ftype == "round_robin" and len(entrants) > seats and len(entrants) > 12:
        raise ConfigError("entrants", "more than 12 entrants: use a gauntlet or pairs")
    if ftype == "pairs" and seats < 2:
        raise ConfigError("game.seats", "pairs needs at least 2 seats")
    early_stop = None
    if "early_stop" in f:
        es = _table(f, "early_stop", "format.")
        _unknown(es, {"method", "alpha", "beta", "delta", "min_matches"}, "format.early_stop.")
        early_stop = EarlyStop(
            method=_str(es, "method", "format.early_stop.", "sprt", ("sprt",)),
            alpha=_float(es, "alpha", "format.early_stop.", 0.05, 1e-6, 0.5),
            beta=_float(es, "beta", "format.early_stop.", 0.05, 1e-6, 0.5),
            delta=_float(es, "delta", "format.early_stop.", 0.25, 0.01, 0.49),
            min_matches=_int(es, "min_matches", "format.early_stop.", 6, lo=1),
        )
    fmt = Format(ftype, seating, rounds, challenger, mpp, early_stop)
    fmt = _event_format(f, fmt, len(entrants), seats)

    t = _table(data, "time", "")
    _unknown(t, {"move_ms", "bank_ms", "grace_ms", "strikes", "on_expiry", "match_wall_s",
                 "bot_grace_s", "join_timeout_s", "join_ms", "first_move_ms", "increment_ms"},
             "time.")
    time_cfg = TimeConfig(
        move_ms=_int(t, "move_ms", "time.", 5000, lo=0, hi=2**32 - 1),
        bank_ms=_int(t, "bank_ms", "time.", 0, lo=0, hi=2**32 - 1),
        grace_ms=_int(t, "grace_ms", "time.", 250, lo=0, hi=2**32 - 1),
        strikes=_int(t, "strikes", "time.", 0, lo=0, hi=2**32 - 1),
        on_expiry=_str(t, "on_expiry", "time.", "random_legal", ON_EXPIRY),
        match_wall_s=_float(t, "match_wall_s", "time.", 600.0, 1.0),
        bot_grace_s=_float(t, "bot_grace_s", "time.", 3.0, 0.0),
        join_timeout_s=_float(t, "join_timeout_s", "time.", 30.0, 0.0),
        join_ms=_int(t, "join_ms", "time.", 0, lo=0, hi=2**32 - 1),
        first_move_ms=_int(t, "first_move_ms", "time.", DEFAULT_FIRST_MOVE_MS, lo=0,
                           hi=2**32 - 1),
        increment_ms=_int(t, "increment_ms", "time.", 0, lo=0, hi=2**32 - 1),
    )
    r = _table(data, "run", "")
    _unknown(r, {"concurrency", "referees", "backend", "address", "ray_address", "task_referee",
                 "unix_socket"}, "run.")
    task_referee = r.get("task_referee", False)
    if not isinstance(task_referee, bool):
        raise ConfigError("run.task_referee", f"expected true or false, got {task_referee!r}")
    run = RunConfig(
        concurrency=_int(r, "concurrency", "run.", 2, lo=1, hi=1024),
        referees=_int(r, "referees", "run.", 1, lo=1, hi=64),
        backend=_str(r, "backend", "run.", "local", BACKENDS),
        address=_str(r, "address", "run.", None),
        ray_address=_str(r, "ray_address", "run.", None),
        task_referee=task_referee,
        unix_socket=_str(r, "unix_socket", "run.", None),
    )
    if any(e.persistent for e in entrants) and run.backend == "ray":
        raise ConfigError("run.backend", "persistent entrants play on the runner's machine: "
                          "use the local backend")
    if any(e.sandbox for e in entrants):
        if run.backend == "ray" and run.ray_address and not run.task_referee:
            raise ConfigError("run.task_referee", "sandboxed entrants reach the referee through "
                              "its Unix socket on their own machine: set task_referee = true")
        if run.address and not run.unix_socket:
            raise ConfigError("run.unix_socket", "sandboxed entrants have no network: give the "
                              "running referee's socket (referee serve --unix PATH)")
        if run.address and "," in run.address:
            raise ConfigError("run.address", "sandboxed entrants need a single referee "
                              "(its unix_socket)")
    return TournamentConfig(
        name=name, game=game, seats=seats, options=options, entrants=tuple(entrants),
        format=fmt, time=time_cfg, run=run, seed=seed, output=output, base_dir=base_dir,
    )


def load(path: str | Path) -> TournamentConfig:
    """Read and validate a tournament TOML file (relative paths resolve from its folder)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("file", f"cannot read {path}: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("toml", f"{path}: not valid TOML: {exc}") from None
    from dataclasses import replace

    cfg = parse(data, base_dir=str(path.resolve().parent), file=path)
    return replace(cfg, source=text)


def with_overrides(cfg: TournamentConfig, **changes: Any) -> TournamentConfig:
    """A copy with run/time fields changed (``concurrency=4``, ``backend="ray"`` ...)."""
    from dataclasses import replace

    run_fields = set(RunConfig.__dataclass_fields__)
    run = replace(cfg.run, **{k: v for k, v in changes.items() if k in run_fields and v is not None})
    top = {k: v for k, v in changes.items() if k not in run_fields and v is not None}
    return replace(cfg, run=run, **top)


__all__ = ["ConfigError", "EarlyStop", "Entrant", "Format", "RunConfig", "TimeConfig",
           "TournamentConfig", "load", "parse", "with_overrides"]
