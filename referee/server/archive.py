"""A hosted bot's uploaded archive, checked without trusting its headers, and re-packed.

``check_archive(filename, data, limits)`` accepts a ``.zip``, a ``.tar.gz`` / ``.tgz`` or a single
``.py`` file and returns a :class:`Checked`: a normalised ``.tar.gz`` of its regular files and
directories only (sorted, modes 0644 or 0755, no owners, time 0, so the same content always
gives the same bytes and SHA-256), with the manifest read. Anything else raises
:class:`ArchiveError` naming the first problem:

* more bytes unpacked than ``limits.max_unpacked`` (counted while decompressing, never from a
  header: an archive bomb is stopped when the count passes the cap, with nothing more read),
  more than ``limits.max_files`` entries, a path longer than ``limits.max_path``;
* an absolute path, a ``..`` / ``.`` / empty component, a backslash or control character in a
  name, the same name twice (or a file where a folder is), a symbolic or hard link, a device
  file, a fifo or any other special entry;
* no ``bot.toml`` at the root (except a single ``.py``), or one that is not valid: ``runtime``
  is ``python``, ``node`` or ``binary``, ``command`` a list of strings whose first names a
  regular file of the archive.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import stat
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field

MANIFEST = "bot.toml"
RUNTIMES = ("python", "node", "binary")


@dataclass(frozen=True, slots=True)
class Limits:
    """The upload limits (``referee serve --upload-max-bytes`` and its siblings)."""

    max_received: int = 16 * 1024 * 1024  # archive bytes received
    max_unpacked: int = 64 * 1024 * 1024  # bytes of file content once unpacked
    max_files: int = 1000  # entries (files and folders)
    max_path: int = 200  # characters of a path


@dataclass(slots=True)
class Checked:
    tar_gz: bytes
    sha256: str
    size: int  # bytes unpacked
    files: int  # regular files
    runtime: str
    command: list[str]
    entries: dict[str, tuple[bool, int, bytes]] = field(default_factory=dict, repr=False)


class ArchiveError(Exception):
    """The archive is refused; the message names the first problem."""


def check_archive(filename: str, data: bytes, limits: Limits = Limits()) -> Checked:
    if len(data) > limits.max_received:
        raise ArchiveError(f"the archive is larger than {limits.max_received} bytes")
    name = filename.strip()
    lower = name.lower()
    reader = _Reader(limits)
    if lower.endswith(".zip"):
        _read_zip(data, reader)
    elif lower.endswith((".tar.gz", ".tgz")):
        _read_tar_gz(data, reader)
    elif lower.endswith(".py"):
        base = name.rsplit("/", 1)[-1]
        reader.add(base, is_dir=False, mode=0o644, chunks=[data])
        if MANIFEST not in reader.entries:
            reader.manifest = {"runtime": "python", "command": [base]}
    else:
        raise ArchiveError(f"unknown archive format {_quote(name)}: send a .zip, .tar.gz, "
                           ".tgz or a single .py file")
    return reader.finish()


def _quote(text: str, limit: int = 60) -> str:
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


class _Reader:
    """Collects checked entries: path -> (is_dir, mode, content)."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.entries: dict[str, tuple[bool, int, bytes]] = {}
        self.unpacked = 0
        self.manifest: dict | None = None

    def check_name(self, raw: str, is_dir: bool) -> str:
        lim = self.limits
        if len(self.entries) >= lim.max_files:
            raise ArchiveError(f"more than {lim.max_files} files and folders")
        if any(ord(c) < 32 or ord(c) == 127 for c in raw):
            raise ArchiveError(f"a name holds a control character: {_quote(raw)}")
        if "\\" in raw:
            raise ArchiveError(f"a name holds a backslash: {_quote(raw)}")
        if raw.startswith("/"):
            raise ArchiveError(f"absolute path {_quote(raw)}")
        path = raw[:-1] if is_dir and raw.endswith("/") else raw
        parts = path.split("/")
        for part in parts:
            if part == "..":
                raise ArchiveError(f"path {_quote(raw)} leaves the archive ('..')")
            if part in ("", "."):
                raise ArchiveError(f"path {_quote(raw)} has an empty or '.' component")
        if len(path) > lim.max_path:
            raise ArchiveError(f"path longer than {lim.max_path} characters: {_quote(path)}")
        if path in self.entries:
            raise ArchiveError(f"{_quote(path)} is in the archive twice")
        return path

    def add(self, raw: str, *, is_dir: bool, mode: int, chunks) -> None:
        path = self.check_name(raw, is_dir)
        # every parent must be a folder, never a file
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            entry = self.entries.get(parent)
            if entry is not None and not entry[0]:
                raise ArchiveError(f"{_quote(parent)} is a file and a folder")
        if not is_dir and any(other.startswith(path + "/") for other in self.entries):
            raise ArchiveError(f"{_quote(path)} is a file and a folder")
        if is_dir:
            self.entries[path] = (True, 0o755, b"")
            return
        buf = bytearray()
        for chunk in chunks:
            self.unpacked += len(chunk)
            if self.unpacked > self.limits.max_unpacked:
                raise ArchiveError(f"more than {self.limits.max_unpacked} bytes once unpacked")
            buf += chunk
        self.entries[path] = (False, 0o755 if mode & 0o111 else 0o644, bytes(buf))

    def finish(self) -> Checked:
        files = {p: e for p, e in self.entries.items() if not e[0]}
        if not files:
            raise ArchiveError("the archive holds no file")
        manifest = self.manifest
        if manifest is None:
            if MANIFEST not in files:
                raise ArchiveError(f"no {MANIFEST} at the archive's root (see the docs: runtime "
                                   "and command)")
            try:
                manifest = tomllib.loads(files[MANIFEST][2].decode("utf-8"))
            except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ArchiveError(f"{MANIFEST} is not valid TOML: {exc}") from None
        runtime = manifest.get("runtime")
        if runtime not in RUNTIMES:
            raise ArchiveError(f"{MANIFEST}: runtime must be one of {', '.join(RUNTIMES)}, "
                               f"not {_quote(str(runtime))}")
        command = manifest.get("command")
        if (not isinstance(command, list) or not command
                or not all(isinstance(c, str) for c in command)):
            raise ArchiveError(f"{MANIFEST}: command must be a list of strings, the file to run "
                               "first (e.g. [\"bot.py\"])")
        if len(command) > 64 or sum(len(c) for c in command) > 4096:
            raise ArchiveError(f"{MANIFEST}: command is too long")
        target = command[0].removeprefix("./")
        if target not in files:
            raise ArchiveError(f"{MANIFEST}: command names {_quote(command[0])}, which is not a "
                               "file of the archive")
        if runtime == "binary":
            _, _, content = files[target]
            self.entries[target] = (False, 0o755, content)
        out = _pack(self.entries)
        return Checked(tar_gz=out, sha256=hashlib.sha256(out).hexdigest(),
                       size=sum(len(e[2]) for e in files.values()), files=len(files),
                       runtime=runtime, command=[target, *command[1:]], entries=self.entries)


def _read_zip(data: bytes, reader: _Reader) -> None:
    # a bound on what zipfile will parse: every central directory entry starts with this
    # signature, so far more of them than allowed files means a crafted directory
    if data.count(b"PK\x01\x02") > 4 * reader.limits.max_files:
        raise ArchiveError(f"more than {reader.limits.max_files} files and folders")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ArchiveError(f"not a valid zip archive ({exc})") from None
    with zf:
        for info in zf.infolist():
            mode = (info.external_attr >> 16) & 0xFFFF
            kind = stat.S_IFMT(mode)
            is_dir = info.is_dir() or kind == stat.S_IFDIR
            if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                what = "a symbolic link" if kind == stat.S_IFLNK else "a special file"
                raise ArchiveError(f"{_quote(info.filename)} is {what}; only regular files and "
                                   "folders are allowed")
            if is_dir:
                reader.add(info.filename, is_dir=True, mode=0o755, chunks=())
                continue
            try:
                with zf.open(info) as f:
                    reader.add(info.filename, is_dir=False, mode=mode,
                               chunks=_chunks(f))
            except (zipfile.BadZipFile, OSError, ValueError, EOFError,
                    NotImplementedError, RuntimeError) as exc:
                raise ArchiveError(f"cannot read {_quote(info.filename)} from the zip "
                                   f"({exc})") from None


class _Capped(io.RawIOBase):
    """A gzip stream decompressed at most ``cap`` bytes: past it, ArchiveError."""

    def __init__(self, data: bytes, cap: int, max_unpacked: int):
        self.gz = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
        self.cap = cap
        self.max_unpacked = max_unpacked
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = 65536
        try:
            out = self.gz.read(min(n, 1 << 20))
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise ArchiveError(f"not a valid gzip stream ({exc})") from None
        self.count += len(out)
        if self.count > self.cap:
            raise ArchiveError(f"more than {self.max_unpacked} bytes once unpacked")
        return out


def _read_tar_gz(data: bytes, reader: _Reader) -> None:
    lim = reader.limits
    # tar headers and padding are at most ~1.5 KiB per entry on top of the contents
    stream = _Capped(data, lim.max_unpacked + (lim.max_files + 16) * 2048, lim.max_unpacked)
    try:
        tf = tarfile.open(fileobj=stream, mode="r|")  # noqa: SIM115 - closed below
    except tarfile.TarError as exc:
        raise ArchiveError(f"not a valid tar.gz archive ({exc})") from None
    try:
        for member in tf:
            if member.issym() or member.islnk():
                kind = "a symbolic link" if member.issym() else "a hard link"
                raise ArchiveError(f"{_quote(member.name)} is {kind} (to "
                                   f"{_quote(member.linkname)}); links are not allowed")
            if member.isdir():
                reader.add(member.name + "/", is_dir=True, mode=0o755, chunks=())
                continue
            if not member.isreg():
                raise ArchiveError(f"{_quote(member.name)} is a device file, fifo or other "
                                   "special entry; only regular files and folders are allowed")
            f = tf.extractfile(member)
            assert f is not None  # a regular file's
            reader.add(member.name, is_dir=False, mode=member.mode,
                       chunks=_chunks(f))
    except tarfile.TarError as exc:
        raise ArchiveError(f"not a valid tar.gz archive ({exc})") from None
    finally:
        tf.close()


def _chunks(f) -> Iterator[bytes]:
    """A member's content, 64 KiB at a time (the caller counts them against the cap)."""
    while chunk := f.read(65536):
        yield chunk


def _pack(entries: dict[str, tuple[bool, int, bytes]]) -> bytes:
    """A deterministic .tar.gz: sorted paths, parents added, modes 0644/0755, no owners, time 0."""
    paths = dict(entries)
    for path in list(entries):
        parts = path.split("/")
        for i in range(1, len(parts)):
            paths.setdefault("/".join(parts[:i]), (True, 0o755, b""))
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for path in sorted(paths):
            is_dir, mode, content = paths[path]
            info = tarfile.TarInfo(path)
            info.mode = mode
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if is_dir:
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
            else:
                info.size = len(content)
                tf.addfile(info, io.BytesIO(content))
    return raw.getvalue()
