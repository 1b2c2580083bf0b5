"""Archives built in memory for the upload tests: good ones and hostile ones."""
from __future__ import annotations

import gzip
import io
import tarfile
import zipfile

MANIFEST = b'runtime = "python"\ncommand = ["bot.py"]\n'
BOT = b"print('hello')\n"


def tar_gz(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tf:
        for info, content in members:
            if content is not None:
                info.size = len(content)
                tf.addfile(info, io.BytesIO(content))
            else:
                tf.addfile(info)
    return raw.getvalue()


def reg(name: str, content: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.mode = mode
    return info, content


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    return info, None


def good_tar_gz(extra: list | None = None) -> bytes:
    return tar_gz([reg("bot.toml", MANIFEST), reg("bot.py", BOT), *(extra or [])])


def zip_of(files: dict[str, bytes], modes: dict[str, int] | None = None,
           compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", compression) as zf:
        for name, content in files.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = compression
            mode = (modes or {}).get(name)
            if mode is not None:
                info.external_attr = mode << 16
            zf.writestr(info, content)
    return raw.getvalue()


def zip_bomb(unpacked: int) -> bytes:
    """A small zip whose one file unpacks to ``unpacked`` zero bytes."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bot.toml", MANIFEST)
        with zf.open("bot.py", "w", force_zip64=True) as f:
            block = b"\0" * (1 << 20)
            for _ in range(unpacked >> 20):
                f.write(block)
    return raw.getvalue()


def tar_gz_bomb(unpacked: int) -> bytes:
    """A small tar.gz whose one file unpacks to ``unpacked`` zero bytes."""
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as gz, \
            tarfile.open(fileobj=gz, mode="w") as tf:
        manifest = tarfile.TarInfo("bot.toml")
        manifest.size = len(MANIFEST)
        tf.addfile(manifest, io.BytesIO(MANIFEST))
        info = tarfile.TarInfo("bot.py")
        info.size = unpacked

        class Zeros(io.RawIOBase):
            left = unpacked

            def readable(self):
                return True

            def readinto(self, b):
                n = min(len(b), self.left)
                b[:n] = b"\0" * n
                self.left -= n
                return n

        tf.addfile(info, io.BufferedReader(Zeros()))
    return raw.getvalue()
