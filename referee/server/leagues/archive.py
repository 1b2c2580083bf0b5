"""A hosted bot's uploaded archive, checked without trusting its headers, and re-packed, in
bounded memory.

``check_archive(filename, source, limits, workdir)`` accepts a ``.zip``, a ``.tar.gz`` / ``.tgz``
or a single ``.py`` file (``source``: the bytes, or a binary file the upload was spooled to) and
returns a :class:`Checked`: a normalised ``.tar.gz`` of its regular files and directories only
(sorted, modes 0644 or 0755, no owners, time 0, so the same content always gives the same bytes
and SHA-256), written to a temporary file in ``workdir`` (the caller renames it into place or
discards it), with the manifest read. Anything else raises :class:`ArchiveError` naming the
first problem:

* more bytes unpacked than ``limits.max_unpacked``: the members' declared sizes are added up
  before any content is read, and the bytes are counted again while decompressing (never
  trusting a header), so an archive bomb stops at the first limit it passes; more than
  ``limits.max_files`` entries, a path longer than ``limits.max_path``;
* a zip member compressed otherwise than stored or deflated (zipfile decompresses bzip2 and
  LZMA without an output bound), a tar header of metadata (pax, GNU long name) over 64 KiB, or
  a sparse tar member;
* an absolute path, a ``..`` / ``.`` / empty component, a backslash or control character in a
  name, the same name twice (or a file where a folder is), a symbolic or hard link, a device
  file, a fifo or any other special entry;
* no ``bot.toml`` at the root (except a single ``.py``), or one that is not valid: ``runtime``
  is ``python``, ``node`` or ``binary``, ``command`` a list of strings whose first names a
  regular file of the archive.

Memory (issue 31, item 4): nothing is held whole. Unpacked contents go, 64 KiB at a time, to
an anonymous scratch file in ``workdir``; the packed result is written to its temporary file in
blocks; what stays in memory is one entry per path (name, mode, offset, length), the manifest
(at most 64 KiB) and the decompressors' windows. A refused bomb costs a few hundred KB, whatever
it would unpack to.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

MANIFEST = "bot.toml"
RUNTIMES = ("python", "node", "binary")
BLOCK = 64 * 1024  # bytes read, decompressed or copied at a time
MAX_MANIFEST = 64 * 1024  # bytes of bot.toml
MAX_META = 64 * 1024  # bytes of one tar metadata header (pax, GNU long name or link)
#: zip compression methods read: zipfile bounds the output of a deflate read by the size asked
#: for, but decompresses a bzip2 or LZMA block whole (a few KB can unpack to hundreds of MB)
ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


@dataclass(frozen=True, slots=True)
class Limits:
    """The upload limits (``referee serve --upload-max-bytes`` and its siblings): of one archive
    (the first four) and of a bot's versions (the last three; 0 = no limit)."""

    max_received: int = 16 * 1024 * 1024  # archive bytes received
    max_unpacked: int = 64 * 1024 * 1024  # bytes of file content once unpacked
    max_files: int = 1000  # entries (files and folders)
    max_path: int = 200  # characters of a path
    versions_per_day: int = 5  # versions a bot may upload in any 24 hours
    max_stored_bytes: int = 50 * 1024 * 1024  # bytes of stored archives a bot may keep
    keep_versions: int = 5  # newest versions kept; older ones are pruned unless still needed


@dataclass(slots=True)
class Checked:
    path: Path  # the normalised .tar.gz, a temporary file in the work directory
    sha256: str
    stored: int  # bytes of the normalised .tar.gz
    size: int  # bytes unpacked
    files: int  # regular files
    runtime: str
    command: list[str]

    @property
    def tar_gz(self) -> bytes:
        """The normalised archive's bytes (read from its file: for tests and small tools)."""
        return self.path.read_bytes()

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)


class ArchiveError(Exception):
    """The archive is refused; the message names the first problem."""


def check_archive(filename: str, source: bytes | IO[bytes], limits: Limits = Limits(),
                  workdir: str | Path | None = None) -> Checked:
    """Check ``source`` (the archive's bytes, or a seekable binary file holding them) as an
    upload named ``filename``; the normalised archive is written to a temporary file in
    ``workdir`` (default: the system's temporary folder), whose path the result holds."""
    f: IO[bytes] = io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source
    f.seek(0, os.SEEK_END)
    received = f.tell()
    f.seek(0)
    if received > limits.max_received:
        raise ArchiveError(f"the archive is larger than {limits.max_received} bytes")
    name = filename.strip()
    lower = name.lower()
    with tempfile.TemporaryFile(dir=workdir) as scratch:
        reader = _Reader(limits, scratch)
        if lower.endswith(".zip"):
            _read_zip(f, received, reader)
        elif lower.endswith((".tar.gz", ".tgz")):
            _read_tar_gz(f, reader)
        elif lower.endswith(".py"):
            base = name.rsplit("/", 1)[-1]
            reader.add(base, is_dir=False, mode=0o644, chunks=_chunks(f))
            if MANIFEST not in reader.entries:
                reader.manifest = {"runtime": "python", "command": [base]}
        else:
            raise ArchiveError(f"unknown archive format {_quote(name)}: send a .zip, .tar.gz, "
                               ".tgz or a single .py file")
        return reader.finish(workdir)


def _quote(text: str, limit: int = 60) -> str:
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


#: a checked entry: (is_dir, mode, offset of its content in the scratch file, its length)
Entry = tuple[bool, int, int, int]


class _Reader:
    """Collects checked entries (path -> Entry); their contents go to ``scratch``."""

    def __init__(self, limits: Limits, scratch: IO[bytes]):
        self.limits = limits
        self.scratch = scratch
        self.entries: dict[str, Entry] = {}
        self.unpacked = 0
        self.manifest: dict | None = None

    def declared(self, total: int) -> None:
        """Refuse at once an archive whose headers already declare more than the cap (the
        bytes are still counted while decompressing: a header may lie)."""
        if total > self.limits.max_unpacked:
            raise ArchiveError(f"more than {self.limits.max_unpacked} bytes once unpacked "
                               f"({total} declared)")

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

    def add(self, raw: str, *, is_dir: bool, mode: int, chunks: Iterator[bytes]) -> None:
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
            self.entries[path] = (True, 0o755, 0, 0)
            return
        offset = self.scratch.tell()
        for chunk in chunks:
            self.unpacked += len(chunk)
            if self.unpacked > self.limits.max_unpacked:
                raise ArchiveError(f"more than {self.limits.max_unpacked} bytes once unpacked")
            self.scratch.write(chunk)
        length = self.scratch.tell() - offset
        self.entries[path] = (False, 0o755 if mode & 0o111 else 0o644, offset, length)

    def content(self, path: str) -> bytes:
        """A small file's content, read back from the scratch file."""
        _, _, offset, length = self.entries[path]
        end = self.scratch.tell()
        self.scratch.seek(offset)
        data = self.scratch.read(length)
        self.scratch.seek(end)
        return data

    def finish(self, workdir: str | Path | None) -> Checked:
        files = {p: e for p, e in self.entries.items() if not e[0]}
        if not files:
            raise ArchiveError("the archive holds no file")
        manifest = self.manifest
        if manifest is None:
            if MANIFEST not in files:
                raise ArchiveError(f"no {MANIFEST} at the archive's root (see the docs: runtime "
                                   "and command)")
            if files[MANIFEST][3] > MAX_MANIFEST:
                raise ArchiveError(f"{MANIFEST} is larger than {MAX_MANIFEST} bytes")
            try:
                manifest = tomllib.loads(self.content(MANIFEST).decode("utf-8"))
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
            _, _, offset, length = files[target]
            self.entries[target] = (False, 0o755, offset, length)
        path, sha256, stored = _pack(self.entries, self.scratch, workdir)
        return Checked(path=path, sha256=sha256, stored=stored,
                       size=sum(e[3] for e in files.values()), files=len(files),
                       runtime=runtime, command=[target, *command[1:]])


def _count(f: IO[bytes], signature: bytes) -> int:
    """How many times ``signature`` occurs in the file, read a block at a time."""
    count, tail = 0, b""
    f.seek(0)
    while block := f.read(BLOCK):
        data = tail + block
        count += data.count(signature)
        tail = data[-(len(signature) - 1):]
        # a signature split over the boundary is counted once: the tail is too short to hold
        # a whole one
    f.seek(0)
    return count


def _read_zip(f: IO[bytes], received: int, reader: _Reader) -> None:
    # a bound on what zipfile will parse: every central directory entry starts with this
    # signature, so far more of them than allowed files means a crafted directory
    if _count(f, b"PK\x01\x02") > 4 * reader.limits.max_files:
        raise ArchiveError(f"more than {reader.limits.max_files} files and folders")
    try:
        zf = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ArchiveError(f"not a valid zip archive ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > reader.limits.max_files:
            raise ArchiveError(f"more than {reader.limits.max_files} files and folders")
        reader.declared(sum(i.file_size for i in infos))
        for info in infos:
            mode = (info.external_attr >> 16) & 0xFFFF
            kind = stat.S_IFMT(mode)
            is_dir = info.is_dir() or kind == stat.S_IFDIR
            if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
                what = "a symbolic link" if kind == stat.S_IFLNK else "a special file"
                raise ArchiveError(f"{_quote(info.filename)} is {what}; only regular files and "
                                   "folders are allowed")
            if is_dir:
                reader.add(info.filename, is_dir=True, mode=0o755, chunks=iter(()))
                continue
            if info.compress_type not in ZIP_METHODS:
                raise ArchiveError(f"{_quote(info.filename)} is compressed with method "
                                   f"{info.compress_type}; only stored and deflated members "
                                   "are read")
            try:
                with zf.open(info) as member:
                    reader.add(info.filename, is_dir=False, mode=mode, chunks=_chunks(member))
            except (zipfile.BadZipFile, OSError, ValueError, EOFError,
                    NotImplementedError, RuntimeError) as exc:
                raise ArchiveError(f"cannot read {_quote(info.filename)} from the zip "
                                   f"({exc})") from None


class _Capped(io.RawIOBase):
    """A gzip stream decompressed at most ``cap`` bytes: past it, ArchiveError. GzipFile
    decompresses at most what is asked for, and tarfile asks for a block at a time."""

    def __init__(self, f: IO[bytes], cap: int, max_unpacked: int):
        self.gz = gzip.GzipFile(fileobj=f, mode="rb")
        self.cap = cap
        self.max_unpacked = max_unpacked
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            n = BLOCK
        try:
            out = self.gz.read(min(n, 1 << 20))
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise ArchiveError(f"not a valid gzip stream ({exc})") from None
        self.count += len(out)
        if self.count > self.cap:
            raise ArchiveError(f"more than {self.max_unpacked} bytes once unpacked")
        return out


#: tar headers whose content tarfile reads whole into memory (pax, GNU long names)
_META_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE,
               tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)


def _bounded_tarinfo(budget: list[int]) -> type[tarfile.TarInfo]:
    """A TarInfo that refuses, before tarfile reads them into memory, a metadata header over
    MAX_META bytes, more metadata in all than ``budget[0]`` bytes, and sparse members (whose
    maps tarfile reads into lists of any length). ``_proc_member`` is the hook tarfile's source
    names for subclasses; ``_proc_gnusparse_10`` reads a pax sparse map."""

    class BoundedTarInfo(tarfile.TarInfo):
        def _proc_member(self, tarfile_: Any) -> Any:
            if self.type == tarfile.GNUTYPE_SPARSE:
                raise ArchiveError(f"{_quote(self.name)} is a sparse file; only regular files "
                                   "and folders are allowed")
            if self.type in _META_TYPES:
                budget[0] -= self.size
                if self.size > MAX_META or budget[0] < 0:
                    raise ArchiveError(f"a tar metadata header (pax or long name) of {self.size} "
                                       f"bytes: at most {MAX_META} are read")
            return super()._proc_member(tarfile_)  # type: ignore[misc]

        def _proc_gnusparse_10(self, next_: Any, pax_headers: Any, tarfile_: Any) -> None:
            raise ArchiveError("a sparse file (pax GNU.sparse); only regular files and folders "
                               "are allowed")

    return BoundedTarInfo


def _read_tar_gz(f: IO[bytes], reader: _Reader) -> None:
    lim = reader.limits
    # tar headers and padding are at most ~1.5 KiB per entry on top of the contents
    stream = _Capped(f, lim.max_unpacked + (lim.max_files + 16) * 2048, lim.max_unpacked)
    info_class = _bounded_tarinfo([max(1 << 20, lim.max_files * 1024)])
    try:
        tf = tarfile.open(fileobj=stream, mode="r|", tarinfo=info_class)  # noqa: SIM115
    except tarfile.TarError as exc:
        raise ArchiveError(f"not a valid tar.gz archive ({exc})") from None
    declared = 0
    try:
        for member in tf:
            if member.issym() or member.islnk():
                kind = "a symbolic link" if member.issym() else "a hard link"
                raise ArchiveError(f"{_quote(member.name)} is {kind} (to "
                                   f"{_quote(member.linkname)}); links are not allowed")
            if member.isdir():
                reader.add(member.name + "/", is_dir=True, mode=0o755, chunks=iter(()))
                continue
            if not member.isreg() or member.sparse is not None:
                raise ArchiveError(f"{_quote(member.name)} is a device file, fifo or other "
                                   "special entry; only regular files and folders are allowed")
            declared += member.size
            reader.declared(declared)
            content = tf.extractfile(member)
            assert content is not None  # a regular file's
            reader.add(member.name, is_dir=False, mode=member.mode, chunks=_chunks(content))
    except tarfile.TarError as exc:
        raise ArchiveError(f"not a valid tar.gz archive ({exc})") from None
    finally:
        tf.close()


def _chunks(f: IO[bytes]) -> Iterator[bytes]:
    """A member's content, 64 KiB at a time (the caller counts them against the cap)."""
    while chunk := f.read(BLOCK):
        yield chunk


class _Slice(io.RawIOBase):
    """``length`` bytes of ``f`` from ``offset``: one entry's content for tarfile.addfile."""

    def __init__(self, f: IO[bytes], offset: int, length: int):
        self.f, self.left = f, length
        f.seek(offset)

    def readable(self) -> bool:
        return True

    def read(self, n: int | None = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.f.read(n)
        self.left -= len(data)
        return data


def _pack(entries: dict[str, Entry], scratch: IO[bytes],
          workdir: str | Path | None) -> tuple[Path, str, int]:
    """A deterministic .tar.gz in a temporary file of ``workdir``: sorted paths, parents
    added, modes 0644/0755, no owners, time 0. Returns its path, SHA-256 and size."""
    paths = dict(entries)
    for path in list(entries):
        parts = path.split("/")
        for i in range(1, len(parts)):
            paths.setdefault("/".join(parts[:i]), (True, 0o755, 0, 0))
    fd, name = tempfile.mkstemp(dir=workdir, prefix=".upload-", suffix=".tar.gz")
    out = Path(name)
    try:
        with os.fdopen(fd, "w+b") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, \
                    tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tf:
                for path in sorted(paths):
                    is_dir, mode, offset, length = paths[path]
                    info = tarfile.TarInfo(path)
                    info.mode = mode
                    info.mtime = 0
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    if is_dir:
                        info.type = tarfile.DIRTYPE
                        tf.addfile(info)
                    else:
                        info.size = length
                        tf.addfile(info, _Slice(scratch, offset, length))
            size = raw.tell()
            raw.seek(0)
            digest = hashlib.sha256()
            while block := raw.read(BLOCK):
                digest.update(block)
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    return out, digest.hexdigest(), size
