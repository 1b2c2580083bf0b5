"""A tournament file against the games a referee hosts (``ListGames``): the game's name, the
number of seats and every option's name and value, each problem naming its key and what is
allowed there. The rules mirror the referee's own option parsing (``bool``: true/false, yes/no,
on/off, 1/0; ``int``: within [min, max]; ``enum``: one of its choices), so a file that passes
here is not refused by ``CreateMatch`` when the run starts."""
from __future__ import annotations

from collections.abc import Iterable

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from .config import TournamentConfig

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


async def list_games(address: str, timeout: float = 15.0) -> list[pb.GameSpec]:
    """The games hosted by the referee at ``address``; raises ``grpc.aio.AioRpcError``."""
    async with grpc.aio.insecure_channel(address) as ch:
        resp = await pb_grpc.RefereeStub(ch).ListGames(pb.ListGamesRequest(), timeout=timeout)
    return list(resp.games)


def option_problem(spec: pb.OptionSpec, value: str) -> str | None:
    """Why ``value`` is not a value of the option, or None."""
    if spec.type == "bool":
        if value.strip().lower() in _TRUE + _FALSE:
            return None
        return f"takes true or false, not {value!r}"
    if spec.type == "int":
        bounded = (spec.min, spec.max) != (0, 0)  # the wire's 0/0: no bounds
        rng = f" from {spec.min} to {spec.max}" if bounded else ""
        try:
            n = int(value.strip())
        except ValueError:
            return f"takes an integer{rng}, not {value!r}"
        if bounded and not spec.min <= n <= spec.max:
            return f"takes an integer{rng}, not {n}"
        return None
    if spec.type == "enum":
        if value.strip() in spec.choices:
            return None
        return f"takes one of {', '.join(spec.choices)}, not {value!r}"
    return None  # a kind this client does not know: the referee decides


def game_problems(cfg: TournamentConfig, games: Iterable[pb.GameSpec]) -> list[str]:
    """Every mismatch between the file's [game] table and the hosted games (empty: fine)."""
    hosted = {g.name: g for g in games}
    g = hosted.get(cfg.game)
    if g is None:
        hosts = ", ".join(sorted(hosted)) or "none"
        return [f"game.name: the referee hosts no game {cfg.game!r} (it hosts: {hosts})"]
    problems = []
    if not g.min_seats <= cfg.seats <= g.max_seats:
        problems.append(f"game.seats: {g.title or g.name} takes {g.min_seats}-{g.max_seats} "
                        f"seats, not {cfg.seats}")
    specs = {o.name: o for o in g.options}
    for name, value in cfg.options:
        o = specs.get(name)
        if o is None:
            problems.append(f"game.options.{name}: {g.name} has no such option (options: "
                            f"{', '.join(sorted(specs)) or 'none'})")
            continue
        why = option_problem(o, value)
        if why:
            problems.append(f"game.options.{name}: {g.name}'s {name} {why}")
    return problems
