"""Hosted bots: a version's checked archive, fetched from the referee, unpacked and run.

The referee checked the upload before storing it (size, file count, paths, links, device
files, the manifest) and keeps a normalised ``.tar.gz``; the runner trusts none of that:
:func:`unpack` checks every member again (regular files and folders only, relative paths
without ``..`` or control characters, at most ``max_files`` files and ``max_bytes`` bytes,
counted while reading) and extracts with :mod:`tarfile`'s ``data`` filter into a fresh folder
that replaces the version's folder only when everything passed. :func:`command` reads the
manifest (``bot.toml``: ``runtime`` python / node / binary, ``command`` = the file and its
arguments); a version without one is a single ``.py`` file.

Each version lives in ``<run folder>/hosted/<bot>/v<N>/``; its bot runs with that folder as its
working folder inside the bubblewrap sandbox (:mod:`..sandbox`), which shows it that folder
read-only and nothing else of the run folder: no other bot's files, no log, no database.
"""
from __future__ import annotations

import io
import os
import re
import shutil
import stat
import sys
import tarfile
import tomllib
from pathlib import Path, PurePosixPath

import grpc

from referee.v1 import referee_pb2 as pb

RUNTIMES = ("python", "node", "binary")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class BadArchive(ValueError):
    """The stored archive or its manifest is unusable; the message is the error line."""


class FetchError(Exception):
    """The archive could not be fetched now (the referee refused or is unreachable)."""


async def fetch(stub, admin, bot: str, version: int, max_bytes: int
                ) -> tuple[pb.BotVersion, bytes]:
    """A version's archive from the referee (``GetBotArchive``), at most ``max_bytes``."""
    header: pb.BotVersion | None = None
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in stub.GetBotArchive(pb.GetBotArchiveRequest(bot=bot, version=version),
                                              metadata=admin, timeout=120):
            if header is None and chunk.HasField("version"):
                header = chunk.version
            size += len(chunk.data)
            if size > max_bytes:
                raise BadArchive(f"the stored archive is larger than {max_bytes} bytes")
            parts.append(chunk.data)
    except grpc.aio.AioRpcError as err:
        raise FetchError(f"GetBotArchive failed: {err.code().name}: {err.details()}") from None
    if header is None:
        raise FetchError("GetBotArchive sent no version header")
    return header, b"".join(parts)


def _check_name(name: str) -> str:
    if not name or _CONTROL.search(name):
        raise BadArchive(f"bad file name {name!r}")
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts:
        raise BadArchive(f"path leaves the archive: {name!r}")
    return str(p)


def unpack(data: bytes, dest: Path, *, max_bytes: int, max_files: int) -> None:
    """Check the archive ``data`` (.tar.gz) again and unpack it as ``dest`` (replaced whole)."""
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")  # noqa: SIM115 - with below
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BadArchive(f"not a .tar.gz archive: {exc}") from None
    seen: set[str] = set()
    total = files = 0
    tmp = dest.with_name(dest.name + ".unpacking")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        with tar:
            members = []
            while True:
                try:
                    m = tar.next()
                except (tarfile.TarError, OSError, EOFError) as exc:
                    raise BadArchive(f"damaged archive: {exc}") from None
                if m is None:
                    break
                name = _check_name(m.name)
                if name in seen:
                    raise BadArchive(f"duplicate name {name!r}")
                seen.add(name)
                if m.isdir():
                    members.append(m)
                    continue
                if not m.isreg():
                    raise BadArchive(f"{name!r} is not a regular file or folder")
                files += 1
                total += m.size
                if files > max_files:
                    raise BadArchive(f"more than {max_files} files")
                if total > max_bytes:
                    raise BadArchive(f"more than {max_bytes} bytes unpacked")
                members.append(m)
            try:
                tar.extractall(tmp, members=members, filter="data")
            except (tarfile.TarError, OSError, EOFError) as exc:
                raise BadArchive(f"cannot unpack: {exc}") from None
        # the unpacked bytes, counted on disk (a header's size is no proof)
        real = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())
        if real > max_bytes:
            raise BadArchive(f"more than {max_bytes} bytes unpacked")
        for p in [tmp, *tmp.rglob("*")]:  # readable by the sandbox's own user id
            os.chmod(p, 0o755 if p.is_dir() or os.stat(p).st_mode & stat.S_IXUSR else 0o644)
        old = dest.with_name(dest.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if dest.exists():
            dest.rename(old)
        tmp.rename(dest)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def command(folder: Path, runtime: str, *, node: str = "node") -> list[str]:
    """The argv that starts the bot unpacked in ``folder`` (its working folder): from its
    manifest ``bot.toml``, else its only ``.py`` file."""
    manifest = folder / "bot.toml"
    if manifest.is_file():
        try:
            data = tomllib.loads(manifest.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise BadArchive(f"bot.toml: {exc}") from None
        runtime = data.get("runtime", runtime or "python")
        cmd = data.get("command")
        if isinstance(cmd, str):
            cmd = [cmd]
        if (not isinstance(cmd, list) or not cmd
                or not all(isinstance(a, str) and a for a in cmd)):
            raise BadArchive("bot.toml: command must be a list of strings (the file first)")
    else:
        scripts = sorted(p.name for p in folder.iterdir() if p.suffix == ".py" and p.is_file())
        if len(scripts) != 1:
            raise BadArchive("no bot.toml and not a single .py file")
        runtime, cmd = "python", [scripts[0]]
    if runtime not in RUNTIMES:
        raise BadArchive(f"bot.toml: runtime must be one of {', '.join(RUNTIMES)}")
    if any("{" in a or "}" in a for a in cmd):
        # the runner fills {token}-style placeholders of commands: never an upload's
        raise BadArchive("bot.toml: command may not contain '{' or '}'")
    target = (folder / _check_name(cmd[0])).resolve()
    if not target.is_relative_to(folder.resolve()) or not target.is_file():
        raise BadArchive(f"bot.toml: command file {cmd[0]!r} is not in the archive")
    if runtime == "python":
        return [sys.executable, str(target), *cmd[1:]]
    if runtime == "node":
        found = shutil.which(node)
        if not found:
            raise BadArchive(f"this league has no Node.js ({node!r} not found)")
        return [found, str(target), *cmd[1:]]
    os.chmod(target, 0o755)
    return [str(target), *cmd[1:]]
