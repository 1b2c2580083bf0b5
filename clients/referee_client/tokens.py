"""Secrets on the command line: ``--X-file PATH`` next to each ``--X`` token flag.

A value typed as ``--token T`` is readable by every user of the machine (``ps``,
``/proc/<pid>/cmdline``), so the tools never pass one that way: they hand a token over in the
environment of the one process that needs it (``$REFEREE_TOKEN``, ``$REFEREE_BOT_TOKEN``) or in a
file only its owner can read (``--token-file PATH``; ``-`` reads standard input). The plain
flags stay for a person who types them on a machine of their own."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def add_token_flag(p: argparse.ArgumentParser | argparse._ArgumentGroup, flag: str, env: str,
                   what: str) -> None:
    """``--FLAG T`` (default ``$ENV``) and ``--FLAG-file PATH`` for the secret ``what``."""
    dest = flag.lstrip("-").replace("-", "_")
    p.add_argument(flag, dest=dest, default=None, metavar="T",
                   help=f"{what} (default: ${env}); unsafe on a shared machine, any user sees "
                        f"it in `ps`: prefer {flag}-file or ${env}")
    p.add_argument(f"{flag}-file", dest=f"{dest}_file", metavar="PATH", default=None,
                   help=f"read {what} from PATH (one line; '-' reads standard input)")


def read_token_file(path: str) -> str:
    """The token in ``path`` (``-``: standard input), surrounding whitespace removed.
    Raises ValueError if it is empty, OSError if it cannot be read."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    token = text.strip()
    if not token:
        raise ValueError(f"{path}: no token in it")
    return token


def token_arg(args: argparse.Namespace, flag: str, env: str) -> str | None:
    """The token of ``--FLAG``/``--FLAG-file``/``$ENV`` (in that order), or None. A file that
    cannot be read is a usage error (``args.usage_error``)."""
    dest = flag.lstrip("-").replace("-", "_")
    given, path = getattr(args, dest, None), getattr(args, f"{dest}_file", None)
    if given and path:
        args.usage_error(f"argument {flag}-file: not allowed with {flag}")
    if path:
        try:
            return read_token_file(path)
        except (OSError, ValueError) as exc:
            args.usage_error(f"argument {flag}-file: {exc}")
    return given or os.environ.get(env) or None
