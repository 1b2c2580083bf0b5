"""A tournament file against the games a referee hosts (``ListGames``): the game's name, the
number of seats and every option's name and value, each problem naming its key and what is
allowed there. The rules mirror the referee's own option parsing (``bool``: true/false, yes/no,
on/off, 1/0; ``int``: within [min, max]; ``enum``: one of its choices), so a file that passes
here is not refused by ``CreateMatch`` when the run starts."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc


class GameChoice(Protocol):
    """What is checked against the hosted games: a tournament file's [game] table
    (``TournamentConfig``) or one game of a league."""

    @property
    def game(self) -> str: ...

    @property
    def seats(self) -> int: ...

    @property
    def options(self) -> tuple[tuple[str, str], ...]: ...

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


def game_problems(cfg: GameChoice, games: Iterable[pb.GameSpec]) -> list[str]:
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


def sheet_warnings(cfg: GameChoice, games: Iterable[pb.GameSpec]) -> list[str]:
    """A warning for the organizer when the component sheet the matches will use still holds
    provisional values (placeholders, not the printed components), with their count and the
    command that replaces them. The sheet is the one of the file's variant: a game with several
    sheets (Goa: one per edition) reports the variant among the file's option values, or the
    options' defaults."""
    g = next((g for g in games if g.name == cfg.game), None)
    if g is None or not g.components:
        return []
    chosen = dict(cfg.options)
    values = {str(v).strip() for v in chosen.values()} | {
        o.default_value for o in g.options if o.name not in chosen}
    sheets = [c for c in g.components if len(g.components) == 1 or c.variant in values]
    out = []
    for c in sheets:
        provisional = c.provenance_counts.get("provisional", 0)
        if not provisional:
            continue
        total = sum(c.provenance_counts.values())
        variant = f" --variant {c.variant}" if c.variant else ""
        out.append(
            f"{g.title or g.name}: component sheet {c.name} still holds {provisional} of "
            f"{total} values provisional (placeholders, not the printed components); results "
            f"are not those of the real game until they are verified: with the box at hand run "
            f"`referee sheet verify {g.name}{variant}`, then serve the sheet it writes with "
            f"`referee serve --components {g.name}=FILE`")
    return out
