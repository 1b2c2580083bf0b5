"""An entrant's tools against a real referee: the organizer's side done with raw stubs."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import grpc
import pytest
from referee_tools import bot_cli

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ADMIN

ADMIN_MD = (("authorization", f"Bearer {ADMIN}"),)
CLI = str(Path(sys.executable).parent / "referee-bot")


def stub(server) -> tuple[grpc.Channel, referee_pb2_grpc.RefereeStub]:
    channel = grpc.insecure_channel(server.target)
    return channel, referee_pb2_grpc.RefereeStub(channel)


def open_league(server, name: str = "spring", **fields) -> None:
    fields.setdefault("games", ["batavia"])
    channel, s = stub(server)
    with channel:
        s.OpenLeague(pb.OpenLeagueRequest(league=pb.League(name=name, **fields)),
                     metadata=ADMIN_MD)


def invite(server, league: str = "spring", uses: int = 1) -> str:
    channel, s = stub(server)
    with channel:
        return s.CreateInvite(pb.CreateInviteRequest(league=league, uses=uses),
                              metadata=ADMIN_MD).code


def set_state(server, league: str, state: int) -> None:
    channel, s = stub(server)
    with channel:
        s.SetLeagueState(pb.SetLeagueStateRequest(name=league, state=state), metadata=ADMIN_MD)


def bots(server, league: str = "spring") -> dict[str, pb.LeagueBot]:
    channel, s = stub(server)
    with channel:
        listed = s.ListLeagueBots(pb.ListLeagueBotsRequest(league=league), metadata=ADMIN_MD)
    return {b.name: b for b in listed.bots}


def run_cli(monkeypatch, capsys, argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """``referee-bot ARGV`` in this process, ``stdin`` as its (non-terminal) standard input:
    (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    try:
        code = bot_cli.main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def bot_folder(path: Path, manifest: str = 'runtime = "python"\ncommand = ["bot.py"]\n') -> Path:
    """A hosted bot's folder: bot.toml, bot.py and a module in a sub-folder."""
    path.mkdir(parents=True)
    (path / "bot.toml").write_text(manifest)
    (path / "bot.py").write_text("from lib import strategy\nprint(strategy.NAME)\n")
    (path / "lib").mkdir()
    (path / "lib" / "strategy.py").write_text("NAME = 'mine'\n")
    return path


__all__ = ["ADMIN", "CLI", "bot_folder", "bots", "invite", "open_league", "pytest", "run_cli",
           "set_state"]
