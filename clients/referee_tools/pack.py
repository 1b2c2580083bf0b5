"""A hosted bot's folder packed into the .tar.gz a league takes, checked first, locally.

The referee checks every upload itself and refuses a bad one (BAD_ARCHIVE); this module looks
at the folder the same way before anything is sent, so a problem is named at once with the
path it is about: a symbolic link (the referee takes no link at all), a fifo, socket or device
file, a name with a control character or a backslash, a path longer than 200 characters, more
than 1,000 files and folders, more than 64 MiB of files, a packed archive over 16 MiB (the
referee's default limits; an organizer may set others), and the manifest: ``bot.toml`` at the
folder's root, with ``runtime`` ``python``, ``node`` or ``binary`` and ``command`` a list of
strings whose first names a regular file of the folder. ``.git`` and ``__pycache__`` folders
are left out.

The archive holds regular files and folders only, in sorted order, modes 0644 or 0755 (0755
for a file executable by its owner), no owner names, time 0: the same folder always packs to
the same bytes.
"""
from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "bot.toml"
RUNTIMES = ("python", "node", "binary")
SKIPPED = (".git", "__pycache__")
#: file names the referee takes as an archive (a single .py needs no manifest)
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip", ".py")


@dataclass(frozen=True, slots=True)
class Limits:
    """The referee's default upload limits (``referee serve`` may set others)."""

    max_archive: int = 16 * 1024 * 1024  # bytes sent
    max_unpacked: int = 64 * 1024 * 1024  # bytes of files
    max_entries: int = 1000  # files and folders
    max_path: int = 200  # characters of a path in the archive


class PackError(Exception):
    """The folder cannot be uploaded as it is; the message names the first problem."""


@dataclass(slots=True)
class Packed:
    data: bytes  # the .tar.gz
    files: int
    size: int  # bytes of files, unpacked
    runtime: str
    command: list[str]


def _entries(folder: Path, limits: Limits) -> list[tuple[str, Path, bool]]:
    """Every (archive path, file, is a folder) under ``folder``, sorted, checked one by one."""
    found: list[tuple[str, Path, bool]] = []
    total = 0

    def visit(directory: Path, prefix: str) -> None:
        nonlocal total
        try:
            names = sorted(os.listdir(directory))
        except OSError as exc:
            raise PackError(f"cannot read the folder {directory}: {exc.strerror}") from None
        for name in names:
            if name in SKIPPED:
                continue
            rel = f"{prefix}{name}"
            path = directory / name
            if any(ord(c) < 32 or ord(c) == 127 for c in name) or "\\" in name:
                raise PackError(f"{rel!r}: a name with a control character or a backslash")
            if len(rel) > limits.max_path:
                raise PackError(f"{rel}: a path longer than {limits.max_path} characters")
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise PackError(f"{rel} is a symbolic link (to {os.readlink(path)}); the referee "
                                "takes no links: put the file itself in the folder")
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise PackError(f"{rel} is a fifo, socket or device file; only regular files "
                                "and folders can be uploaded")
            found.append((rel, path, stat.S_ISDIR(mode)))
            if len(found) > limits.max_entries:
                raise PackError(f"more than {limits.max_entries} files and folders")
            if stat.S_ISDIR(mode):
                visit(path, rel + "/")
            else:
                total += path.lstat().st_size
                if total > limits.max_unpacked:
                    raise PackError(f"more than {limits.max_unpacked} bytes of files")

    visit(folder, "")
    return found


def _manifest(folder: Path, files: set[str]) -> tuple[str, list[str]]:
    """The runtime and command of ``bot.toml``, checked."""
    if MANIFEST not in files:
        raise PackError(f"no {MANIFEST} in {folder}: it names the runtime (python, node or "
                        'binary) and the command, e.g. runtime = "python", command = ["bot.py"]')
    try:
        doc = tomllib.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PackError(f"{MANIFEST} is not valid TOML: {exc}") from None
    runtime, command = doc.get("runtime"), doc.get("command")
    if runtime not in RUNTIMES:
        raise PackError(f"{MANIFEST}: runtime is one of {', '.join(RUNTIMES)}, not {runtime!r}")
    if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
        raise PackError(f'{MANIFEST}: command is a list of strings, the file to run first '
                        '(e.g. ["bot.py"])')
    target = command[0].removeprefix("./")
    if target not in files:
        raise PackError(f"{MANIFEST}: command names {command[0]!r}, which is not a file of "
                        "the folder")
    return runtime, command


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    info.mode = 0o755 if info.isdir() or info.mode & 0o100 else 0o644
    return info


def pack_folder(folder: Path | str, limits: Limits = Limits()) -> Packed:
    """Check ``folder`` and pack it; :class:`PackError` names the first problem."""
    folder = Path(folder)
    if not folder.is_dir():
        raise PackError(f"{folder} is not a folder")
    entries = _entries(folder, limits)
    files = {rel for rel, _, is_dir in entries if not is_dir}
    runtime, command = _manifest(folder, files)
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, path, _ in entries:
            tar.add(path, arcname=rel, recursive=False, filter=_normalised)
    data = raw.getvalue()
    if len(data) > limits.max_archive:
        raise PackError(f"the packed archive is {len(data)} bytes, more than the "
                        f"{limits.max_archive} the referee takes")
    size = sum(path.lstat().st_size for _, path, is_dir in entries if not is_dir)
    return Packed(data, len(files), size, runtime, command)


def read_archive(path: Path | str, limits: Limits = Limits()) -> bytes:
    """An archive file's bytes, after the checks that need no unpacking (its name says a
    format the referee takes, its size); the referee checks the rest."""
    path = Path(path)
    if not path.name.lower().endswith(ARCHIVE_SUFFIXES):
        raise PackError(f"{path.name}: upload a folder, or a .tar.gz, .tgz, .zip or single .py "
                        "file")
    if path.is_symlink() or not path.is_file():
        raise PackError(f"{path} is not a regular file")
    if path.stat().st_size > limits.max_archive:
        raise PackError(f"{path} is {path.stat().st_size} bytes, more than the "
                        f"{limits.max_archive} the referee takes")
    return path.read_bytes()
