"""Toolchains and builds for the starter kits (clients/typescript, go, cpp) and the Node bot.

A missing toolchain is installed when the tests run as root (apt-get for Debian packages, npm ci
for node_modules) and the test is skipped with the reason otherwise. Installs and builds take a
file lock under build/kits/ (ignored by git), so the pytest-xdist workers do each once; the
builds themselves are incremental (make, and an mtime check for the TypeScript compile), so
later sessions reuse them.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
CACHE = ROOT / "build" / "kits"

#: Debian packages per toolchain (README of each kit lists the same).
APT = {
    "node": ["nodejs", "npm"],
    "go": ["golang-go", "golang-google-grpc-dev", "golang-github-golang-protobuf-1-5-dev",
           "golang-google-protobuf-dev", "protoc-gen-go", "protoc-gen-go-grpc",
           "protobuf-compiler", "make"],
    "cpp": ["libgrpc++-dev", "protobuf-compiler-grpc", "protobuf-compiler", "pkg-config", "g++",
            "make"],
}
#: Commands each toolchain must put on PATH.
COMMANDS = {
    "node": ["node", "npm"],
    "go": ["go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc", "make"],
    "cpp": ["protoc", "grpc_cpp_plugin", "pkg-config", "g++", "make"],
}


@contextmanager
def locked(name: str) -> Iterator[None]:
    """An exclusive lock shared by every test process on this checkout."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _dpkg_missing(packages: list[str]) -> list[str]:
    query = shutil.which("dpkg-query")
    if query is None:
        return []  # not Debian: trust the commands on PATH
    missing = []
    for pkg in packages:
        out = subprocess.run([query, "-W", "-f=${Status}", pkg], capture_output=True, text=True, check=False)
        if out.returncode != 0 or "install ok installed" not in out.stdout:
            missing.append(pkg)
    return missing


def _missing(toolchain: str) -> list[str]:
    commands = [c for c in COMMANDS[toolchain] if shutil.which(c) is None]
    if toolchain == "node":  # any Node.js >= 18 on PATH will do, however it was installed
        return APT["node"] if commands else []
    return sorted(set(_dpkg_missing(APT[toolchain])) | ({"(commands)"} if commands else set()))


def _log(text: str) -> None:
    with (CACHE / "toolchains.log").open("a") as fh:
        fh.write(text + "\n")


def ensure(toolchain: str) -> None:
    """Install ``toolchain``'s Debian packages if missing and root; skip the test if not root."""
    if not _missing(toolchain):
        return
    with locked("apt"):
        if not _missing(toolchain):
            return
        packages = APT[toolchain]
        apt = shutil.which("apt-get")
        if os.geteuid() != 0 or apt is None:
            pytest.skip(
                f"the {toolchain} toolchain is missing and this user cannot install it "
                f"({'not root' if apt else 'no apt-get'}); as root run: "
                f"apt-get install {' '.join(packages)}"
            )
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        # wait for dpkg's own lock too: another checkout's tests may be installing
        cmd = [apt, "install", "-y", "-q", "--no-install-recommends",
               "-o", "DPkg::Lock::Timeout=600", *packages]
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:  # an old or empty package list: refresh it once
            subprocess.run([apt, "update", "-q"], capture_output=True, env=env, check=False)
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        _log(f"apt-get install {toolchain}: exit {proc.returncode} "
             f"in {time.monotonic() - start:.0f}s")
        if proc.returncode != 0 or _missing(toolchain):
            pytest.fail(f"apt-get install {' '.join(packages)} failed:\n{proc.stderr[-2000:]}")


def _run(cmd: list[str], cwd: Path, what: str, timeout: float = 900) -> None:
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          check=False)
    _log(f"{what}: exit {proc.returncode} in {time.monotonic() - start:.0f}s")
    if proc.returncode != 0:
        pytest.fail(f"{what} failed ({' '.join(cmd)} in {cwd}):\n"
                    f"{(proc.stdout + proc.stderr)[-3000:]}")


def _newest(paths: list[Path]) -> float:
    return max((p.stat().st_mtime for p in paths if p.exists()), default=0.0)


def _npm_ci(folder: Path) -> None:
    """``npm ci`` when node_modules is missing or older than package-lock.json."""
    stamp = folder / "node_modules" / ".package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < (folder / "package-lock.json").stat().st_mtime:
        _run(["npm", "ci", "--no-audit", "--no-fund"], folder, f"npm ci in {folder.name}")


def python_bot() -> list[str]:
    script = Path(sys.executable).parent / "referee-bot"
    return [str(script), "random"] if script.exists() else [
        sys.executable, "-m", "referee_client.cli", "random"]


def node_bot() -> list[str]:
    ensure("node")
    with locked("node"):
        _npm_ci(CLIENTS / "node")
    return ["node", str(CLIENTS / "node" / "bot.js")]


def typescript_bot() -> list[str]:
    ensure("node")
    folder = CLIENTS / "typescript"
    with locked("typescript"):
        _npm_ci(folder)  # its prepare script generates the types and compiles
        out = folder / "dist" / "bot.js"
        sources = [*(folder / "src").glob("*.ts"), *(ROOT / "proto").rglob("*.proto"),
                   folder / "package.json", folder / "tsconfig.json"]
        if not out.exists() or out.stat().st_mtime < _newest(sources):
            _run(["npm", "run", "build"], folder, "npm run build in typescript")
    return ["node", str(out)]


def go_bot() -> list[str]:
    ensure("go")
    with locked("go"):
        _run(["make"], CLIENTS / "go", "make in go")
    return [str(CLIENTS / "go" / "bin" / "bot")]


def cpp_bot() -> list[str]:
    ensure("cpp")
    with locked("cpp"):
        _run(["make", "-j2"], CLIENTS / "cpp", "make in cpp")
    return [str(CLIENTS / "cpp" / "bin" / "bot")]


KITS = {
    "python": python_bot,
    "node": node_bot,
    "typescript": typescript_bot,
    "go": go_bot,
    "cpp": cpp_bot,
}
