"""``referee-bot register``, ``upload`` and ``pack``: an entrant joins a league on its own.

    referee-bot register my-bot --league spring --kind hosted --token-file my-bot.token
    referee-bot upload ./my-bot/ --token-file my-bot.token
    referee-bot pack ./my-bot/ -o my-bot.tar.gz

No secret on the command line (any user of the machine can read it): the invite code is typed
at a prompt that does not echo, read from standard input, or from ``--invite-file``; the bot
token goes to standard output once, or to ``--token-file`` (mode 0600); ``upload`` reads it
from ``$REFEREE_BOT_TOKEN`` or ``--token-file``. The gRPC calls are the SDK's
(:mod:`referee_client.league`); the folder packing and its local checks are
:mod:`referee_tools.pack`.
"""
from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path

from referee_client import cli as sdk_cli
from referee_client.connection import RefereeError
from referee_client.tokens import read_token_file

from referee.v1 import referee_pb2

EXIT_OK, EXIT_FAILED = 0, 1


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "register",
        help="register a bot into a league (an invite code, no admin token) and get its token",
        description=(
            "Register NAME into a league as an entrant. The invite code the organizer gave "
            "you is read from --invite-file, else typed at a prompt that does not echo (from a "
            "terminal) or read from standard input; leave it empty when the league's "
            "registration is open. The bot token is shown this once: printed on standard "
            "output, or written to --token-file (mode 0600)."),
        epilog="example: referee-bot register my-bot --league spring --kind hosted "
               "--token-file my-bot.token",
    )
    p.set_defaults(run=_register)
    p.add_argument("name", help="the bot's name (1-64 letters, digits, '.', '_', '+' or '-')")
    p.add_argument("--league", required=True, help="the league to join")
    p.add_argument("--kind", choices=["remote", "hosted"], default="remote",
                   help="remote: the bot runs on your machine and connects with a session "
                        "(default); hosted: you upload it and the league runs it")
    p.add_argument("--owner", default="", help="your name as shown on the bot's page")
    p.add_argument("--description", default="", help="a line about the bot for its page")
    p.add_argument("--invite-file", metavar="PATH",
                   help="read the invite code from PATH ('-': standard input)")
    p.add_argument("--token-file", metavar="PATH",
                   help="write the bot token to PATH (mode 0600) instead of printing it")
    p.add_argument("--force", action="store_true", help="overwrite an existing --token-file")
    sdk_cli._add_connection(p)

    p = sub.add_parser(
        "upload",
        help="upload a new version of a hosted bot (a folder, .tar.gz, .zip or .py)",
        description=(
            "Send a hosted bot's archive to the league (UploadBot); each upload is a new "
            "version, which the league checks with a smoke match before it plays. A folder "
            "is checked here first, as the referee will check it (manifest bot.toml, no "
            "links or special files, paths, sizes), and packed into a .tar.gz. The bot token "
            "comes from $REFEREE_BOT_TOKEN or --token-file."),
        epilog="example: referee-bot upload ./my-bot/ --token-file my-bot.token",
    )
    p.set_defaults(run=_upload)
    p.add_argument("archive", metavar="ARCHIVE_OR_FOLDER",
                   help="a folder with bot.toml, or a .tar.gz / .tgz / .zip / single .py file")
    p.add_argument("--token-file", "--bot-token-file", dest="token_file", metavar="PATH",
                   help="read the bot token from PATH ('-': standard input; default "
                        "$REFEREE_BOT_TOKEN)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    sdk_cli._add_connection(p)

    p = sub.add_parser(
        "pack",
        help="check a hosted bot's folder and pack it into a .tar.gz, as upload would",
        description="Check FOLDER as the referee will (manifest, links, paths, sizes) and "
                    "write the .tar.gz that `upload` would send.",
    )
    p.set_defaults(run=_pack)
    p.add_argument("folder", help="the bot's folder, with bot.toml at its root")
    p.add_argument("-o", "--output", required=True, metavar="FILE.tar.gz",
                   help="where to write the archive")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    sdk_cli.add_logging_flags(p, "warning")


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _invite_code(args: argparse.Namespace) -> str:
    if args.invite_file:
        try:
            return read_token_file(args.invite_file)
        except (OSError, ValueError) as exc:
            args.usage_error(f"argument --invite-file: {exc}")
    if sys.stdin.isatty():
        return getpass.getpass("invite code (Enter for none, if registration is open): ").strip()
    return sys.stdin.readline().strip()


def _open_secret(path: Path, force: bool):
    """``path`` opened for writing, readable by its owner only (0600), created that way (an
    existing file only with ``force``, and made 0600 too). Opened before registering, so the
    token, shown once, always has somewhere to go."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL)
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "w", encoding="utf-8")


#: what a refused registration means, by the referee's reason
REGISTER_REFUSALS = {
    "BAD_INVITE": "the league refused the invite code: {details}",
    "ALREADY_EXISTS": "the name {name} is taken on this referee: choose another one",
    "NOT_FOUND": "no league {league} on this referee ({details}); check --league and --address",
    "LEAGUE_STOPPED": "league {league} is stopped: it takes no more bots",
    "PERMISSION_DENIED": "registration refused: {details}",
    "RESOURCE_EXHAUSTED": "too many registrations from this address: try again later",
}


def _refusal(exc: RefereeError, table: dict[str, str], **fields: str) -> str:
    template = table.get(exc.reason) or table.get(exc.code.name) or "{what}"
    return template.format(details=exc.details, what=str(exc), **fields)


def _register(args: argparse.Namespace) -> int:
    from referee_client.league import register_entrant

    token_file = Path(args.token_file) if args.token_file else None
    out = None
    if token_file is not None:
        if token_file.exists() and not args.force:
            args.usage_error(f"argument --token-file: {token_file} exists (--force overwrites "
                             "it)")
        try:
            out = _open_secret(token_file, args.force)
        except OSError as exc:
            args.usage_error(f"argument --token-file: {token_file}: {exc.strerror}")
    try:
        code = _invite_code(args)
        resp = register_entrant(args.address, args.name, args.league, invite_code=code,
                                kind=args.kind, owner=args.owner,
                                description=args.description, tls=sdk_cli._tls(args))
    except (RefereeError, KeyboardInterrupt, EOFError) as exc:
        if out is not None:
            out.close()
            if token_file is not None and not args.force:
                token_file.unlink(missing_ok=True)  # we made it, empty
        if isinstance(exc, RefereeError):
            _say(f"error: {_refusal(exc, REGISTER_REFUSALS, name=args.name, league=args.league)}")
            return EXIT_FAILED
        raise
    if out is not None:
        with out:
            out.write(resp.bot_token + "\n")
        _say(f"registered {resp.name} in league {args.league}; its bot token is in "
             f"{token_file} (mode 0600), shown nowhere else: keep it secret")
    else:
        _say(f"registered {resp.name} in league {args.league}; its bot token follows, shown "
             "this once: keep it secret")
        print(resp.bot_token, flush=True)
    if args.kind == "hosted":
        _say("next: referee-bot upload FOLDER_OR_ARCHIVE --token-file FILE")
    else:
        _say("next: REFEREE_BOT_TOKEN=... referee-bot session random (or a kit's --session)")
    return EXIT_OK


UPLOAD_REFUSALS = {
    "BAD_ARCHIVE": "the referee refused the archive: {details}",
    "NOT_HOSTED": "this bot is a remote one: it plays over its session, nothing to upload",
    "UNAUTHENTICATED": "the bot token was not accepted ({details})",
    "RESOURCE_EXHAUSTED": "too many uploads: try again later ({details})",
    "UPLOAD_QUOTA": "the league's upload limit is reached, nothing was stored: {details}",
}


def _upload(args: argparse.Namespace) -> int:
    from referee_client.league import upload_bot

    from .pack import PackError, pack_folder, read_archive

    token = None
    if args.token_file:
        try:
            token = read_token_file(args.token_file)
        except (OSError, ValueError) as exc:
            args.usage_error(f"argument --token-file: {exc}")
    token = token or os.environ.get("REFEREE_BOT_TOKEN")
    if not token:
        args.usage_error("no bot token: pass --token-file or set REFEREE_BOT_TOKEN")
    assert token is not None  # usage_error exited
    source = Path(args.archive)
    try:
        if source.is_dir():
            packed = pack_folder(source)
            data, filename = packed.data, f"{source.resolve().name or 'bot'}.tar.gz"
            _say(f"checked {source} here as the referee will: {packed.files} files, "
                 f"{packed.size} bytes, runtime {packed.runtime}, command "
                 f"{' '.join(packed.command)}; packed into {len(data)} bytes")
        else:
            data, filename = read_archive(source), source.name
    except PackError as exc:
        _say(f"error: refused here, nothing sent: {exc}")
        return EXIT_FAILED
    try:
        version = _send(args, token, filename, data, upload_bot)
    except RefereeError as exc:
        _say(f"error: {_refusal(exc, UPLOAD_REFUSALS)}")
        return EXIT_FAILED
    print(f"uploaded {version.bot} version {version.version}: {version.files} files, "
          f"{version.size} bytes, runtime {version.runtime}, sha256 {version.sha256[:12]}…, "
          f"status {referee_pb2.VersionStatus.Name(version.status)}", flush=True)
    if version.status == referee_pb2.VERSION_PENDING:
        _say("the league checks it with a smoke match before it plays; its page shows the "
             "outcome")
    return EXIT_OK


def _send(args, token: str, filename: str, data: bytes, upload_bot):
    """Upload with a progress bar when standard error is a terminal."""
    tls = sdk_cli._tls(args)
    if args.no_progress or not sys.stderr.isatty():
        return upload_bot(args.address, token, filename, data, tls=tls)
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), transient=True) as progress:
        task = progress.add_task(f"uploading {filename}", total=len(data))
        return upload_bot(args.address, token, filename, data, tls=tls,
                          progress=lambda n: progress.advance(task, n))


def _pack(args: argparse.Namespace) -> int:
    from .pack import PackError, pack_folder

    out = Path(args.output)
    if out.exists() and not args.force:
        args.usage_error(f"argument --output: {out} exists (--force overwrites it)")
    try:
        packed = pack_folder(args.folder)
    except PackError as exc:
        _say(f"error: {exc}")
        return EXIT_FAILED
    out.write_bytes(packed.data)
    print(f"{out}: {len(packed.data)} bytes; {packed.files} files, {packed.size} bytes "
          f"unpacked, runtime {packed.runtime}, command {' '.join(packed.command)}")
    return EXIT_OK
