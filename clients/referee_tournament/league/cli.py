"""``referee-tournament league serve|pause|resume|stop|status|invite LEAGUE.toml``.

``serve`` runs the league (:mod:`.serve`) until it is stopped; the others change or read the
league's stored state on the referee, which a serving runner follows (``pause``: no new
matches; ``resume``; ``stop``: running matches finish, then ``serve`` exits). ``invite``
prints a new invite code once, on standard output only (it is a secret: it is never logged).
The admin token comes from ``$REFEREE_ADMIN_TOKEN``, ``--admin-token-file`` or the file's
``referee.admin_token_file``; never from the command line.
"""
from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import grpc

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc as pb_grpc

from ..config import ConfigError
from .config import load

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
ACTIONS = ("serve", "pause", "resume", "stop", "status", "invite")
_STATES = {"pause": pb.LEAGUE_PAUSED, "resume": pb.LEAGUE_RUNNING, "stop": pb.LEAGUE_STOPPED}


def add_parser(sub) -> None:
    lg = sub.add_parser("league", help="run a standing league (serve) or change its state",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                        allow_abbrev=False)  # never take --admin-token for --admin-token-file
    lg.add_argument("action", choices=ACTIONS)
    lg.add_argument("file", metavar="LEAGUE.toml")
    lg.add_argument("--admin-token-file", metavar="PATH",
                    help="read the referee's admin token from PATH (default: "
                         "$REFEREE_ADMIN_TOKEN, then the file's referee.admin_token_file)")
    lg.add_argument("--out", help="the league's run folder (default runs/league-<name>/)")
    lg.add_argument("--reason", default="", help="pause/stop: the reason shown on its page")
    lg.add_argument("--uses", type=int, default=1, help="invite: bots it may register")
    lg.add_argument("--valid-s", type=int, default=0,
                    help="invite: seconds it stays valid (0: until the league stops)")
    lg.add_argument("--max-matches", type=int, default=None,
                    help="serve: exit once the league has this many matches (all its runs "
                         "together) and they are over")
    lg.add_argument("--log-json", action="store_true", help="serve: log lines on stderr too")
    lg.add_argument("--metrics-listen", default="", metavar="HOST:PORT",
                    help="serve: Prometheus metrics (matches ended, incidents) on this address "
                         "(off by default; docs/organizer/metrics.md)")


def main(args, console, out_console) -> int:
    from .serve import LeagueError, LeagueRunner, admin_token

    try:
        cfg = load(args.file)
    except ConfigError as exc:
        console.print(f"[red]bad league file[/]: {exc}")
        return EXIT_USAGE
    try:
        token = admin_token(cfg, args.admin_token_file)
    except (LeagueError, OSError, ValueError) as exc:
        console.print(f"[red]error[/]: {exc}")
        return EXIT_USAGE
    if args.action == "serve":
        from dataclasses import replace

        from ..aio import run_async

        if args.max_matches is not None:
            cfg = replace(cfg, schedule=replace(cfg.schedule, max_matches=args.max_matches))
        if args.metrics_listen:
            from . import metrics

            try:
                metrics.serve(args.metrics_listen)
            except (OSError, ValueError) as exc:
                console.print(f"[red]error[/]: --metrics-listen: {exc}")
                return EXIT_USAGE
        runner = LeagueRunner(cfg, token, out=Path(args.out) if args.out else None,
                              console=console, log_json=args.log_json)
        try:
            data = run_async(runner.run())
        except LeagueError as exc:
            console.print(f"[red]error[/]: {exc}")
            return EXIT_FAILED
        except KeyboardInterrupt:
            console.print("[yellow]interrupted[/]: finished results are kept; running matches "
                          "go on at the referee and `league serve` follows them again")
            return EXIT_INTERRUPTED
        console.print(f"{cfg.name}: {data['done']} matches rated, {data['failed']} failed "
                      f"(results in {data['out']})")
        return EXIT_OK
    try:
        return asyncio.run(_admin(args, cfg, token, out_console))
    except grpc.aio.AioRpcError as err:
        console.print(f"[red]error[/]: {err.code().name}: {err.details()}")
        return EXIT_FAILED


async def _admin(args, cfg, token: str, out) -> int:
    admin = (("authorization", f"Bearer {token}"),)
    async with grpc.aio.insecure_channel(cfg.address) as channel:
        stub = pb_grpc.RefereeStub(channel)
        if args.action in _STATES:
            got = await stub.SetLeagueState(pb.SetLeagueStateRequest(
                name=cfg.name, state=_STATES[args.action], reason=args.reason),
                metadata=admin, timeout=30)
            out.print(f"{got.name}: {pb.LeagueState.Name(got.state)}")
            return EXIT_OK
        if args.action == "invite":
            got = await stub.CreateInvite(pb.CreateInviteRequest(
                league=cfg.name, uses=max(1, args.uses), valid_s=max(0, args.valid_s)),
                metadata=admin, timeout=30)
            # the code, once, on stdout only: a secret, never in the league's log
            print(got.code, flush=True)
            return EXIT_OK
        league = await stub.GetLeague(pb.GetLeagueRequest(name=cfg.name), timeout=30)
        bots = await stub.ListLeagueBots(pb.ListLeagueBotsRequest(league=cfg.name),
                                         metadata=admin, timeout=30)
        status = {
            "league": league.name, "state": pb.LeagueState.Name(league.state),
            # a 0.1.0 referee sends 0 for a remote bot (docs/releases.md)
            "bots": [{"name": b.name, "kind": pb.BotKind.Name(b.kind or pb.BOT_KIND_REMOTE),
                      "status": pb.BotStatus.Name(b.status), "connected": b.connected,
                      "current_version": b.current_version,
                      "versions": [{"version": v.version,
                                    "status": pb.VersionStatus.Name(v.status),
                                    "message": v.message} for v in b.versions]}
                     for b in bots.bots]}
        out.print_json(json.dumps(status))
        return EXIT_OK
