"""GetGameRules: a game's spec, rulings and versions as the referee plays them (a follow-up of
issues 34 and 35). An agent connected to a referee of another installation must read the
rulings that referee plays by, not its own copy: the MCP server's rules and rulings resources
read them through the call, and the SDK offers it as ``game_rules``."""
from __future__ import annotations

import asyncio

import grpc
import pytest
from referee_client.connection import RefereeError
from referee_client.unary import AdminClient
from referee_tools.mcp_server import Agent, build

from referee.core import provenance, registry
from referee.v1 import referee_pb2


def test_every_game_s_rules_come_back_as_the_referee_plays_them(referee):
    """Every hosted game: the spec is ListGames' own, the rulings are the game's RULINGS.md as
    the referee's package holds it, and the versions are those its records carry."""
    with AdminClient(referee.address) as client:
        specs = {g.name: g for g in client.list_games()}
        assert specs
        for name, spec in specs.items():
            rules = client.game_rules(name)
            game = registry.get(name)
            assert rules.spec == spec
            assert rules.rulings_markdown == provenance.rulings_text(game) != ""
            assert rules.rules_version == provenance.rules_version(game)
            assert rules.rules_version.startswith("sha256:")
            assert rules.engine_version == provenance.engine_version()


@pytest.mark.parametrize(("game", "code"), [("chess", grpc.StatusCode.NOT_FOUND),
                                            ("", grpc.StatusCode.INVALID_ARGUMENT),
                                            ("x" * 5000, grpc.StatusCode.NOT_FOUND)])
def test_an_unknown_or_missing_game_is_refused_with_a_reason(referee, game, code):
    with AdminClient(referee.address) as client, pytest.raises(RefereeError) as caught:
        client.game_rules(game)
    assert caught.value.code == code
    assert caught.value.reason in ("NOT_FOUND", "MALFORMED")
    assert len(str(caught.value)) < 400  # the name is clipped, not echoed whole


class _OtherReferee(Agent):
    """An agent whose referee plays rulings this installation does not have."""

    async def game_rules(self, game: str) -> referee_pb2.GameRules | None:
        got = await super().game_rules(game)
        assert got is not None
        got.rulings_markdown = "# Rulings of the referee, not of this installation\n"
        got.rules_version = "sha256:" + "ab" * 32
        return got


async def _read(server, uri: str) -> str:
    return "".join(str(c.content) for c in await server.read_resource(uri))


def test_the_mcp_resources_read_the_referee_s_rulings(referee):
    """The rulings resource is what GetGameRules says (here: rulings that differ from the
    local RULINGS.md), and the rules summary names the rules version the referee plays."""
    async def go() -> None:
        server = build(_OtherReferee(referee.address))
        assert await _read(server, "referee://games/batavia/rulings") == (
            "# Rulings of the referee, not of this installation\n")
        summary = await _read(server, "referee://games/batavia/rules")
        assert "sha256:" + "ab" * 32 in summary and "Seats:" in summary
        with pytest.raises(Exception) as caught:
            await _read(build(Agent(referee.address)), "referee://games/chess/rulings")
        assert "no game 'chess' on this referee" in str(caught.value.__cause__)
    asyncio.run(go())
