"""Toolchains and builds for the starter kits (clients/typescript, go, cpp) and the Node bot.

Each kit lists its Debian packages in its own `debian-packages.txt` (tests/debian.py reads them).
A missing toolchain is installed from that list alone when the tests run as root (apt-get; npm ci
for node_modules) and the test is skipped with the reason otherwise; tests/kits/conftest.py
installs every kit's list before any build, so no build depends on which ran first, and
tests/kits/test_packages.py proves each list brings in every package its build uses. Installs
and builds take a file lock under build/kits/ (ignored by git), so the pytest-xdist workers do
each once; the builds themselves are incremental (make, and an mtime check for the TypeScript
compile), so later sessions reuse them.
"""
from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .. import debian

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
CACHE = ROOT / "build" / "kits"

#: Debian packages per toolchain: each kit's own list (its README names the same).
APT = {kit: debian.read(debian.kit_list(kit)) for kit in ("node", "typescript", "go", "cpp")}
#: Commands each toolchain must put on PATH.
COMMANDS = {
    "node": ["node", "npm"],
    "typescript": ["node", "npm"],
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


def _missing(toolchain: str) -> list[str]:
    """What ``toolchain`` lacks: its list's packages not installed (Node.js counts as installed
    when on PATH, however it got there), and "(commands)" when one of its commands is not on
    PATH."""
    commands = [c for c in COMMANDS[toolchain] if shutil.which(c) is None]
    return sorted(set(debian.missing(APT[toolchain])) | ({"(commands)"} if commands else set()))


def _log(text: str) -> None:
    with (CACHE / "toolchains.log").open("a") as fh:
        fh.write(text + "\n")


def install_every_list() -> None:
    """Install every kit's list (when root), before any build: whichever kit builds first,
    every toolchain is already there. A list that cannot be installed is left to its kit's
    own test (:func:`ensure`), which skips or fails naming it."""
    if debian.cannot_install():
        return
    for toolchain in APT:
        if _missing(toolchain):
            with locked("apt"):
                if _missing(toolchain):
                    _install(toolchain)


def _install(toolchain: str) -> str | None:
    start = time.monotonic()
    error = debian.install(APT[toolchain])
    _log(f"apt-get install {toolchain}: {'failed' if error else 'ok'} "
         f"in {time.monotonic() - start:.0f}s")
    return error


def ensure(toolchain: str) -> None:
    """Install ``toolchain``'s Debian packages, from its own list, if missing and root; skip the
    test if not root."""
    if not _missing(toolchain):
        return
    with locked("apt"):
        if not _missing(toolchain):
            return
        packages = APT[toolchain]
        why = debian.cannot_install()
        if why:
            pytest.skip(
                f"the {toolchain} toolchain is missing and this user cannot install it "
                f"({why}); as root run: apt-get install {' '.join(packages)}"
            )
        error = _install(toolchain)
        if error or _missing(toolchain):
            pytest.fail(f"apt-get install {' '.join(packages)} failed; still missing "
                        f"{_missing(toolchain)}:\n{error or ''}")


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
    ensure("typescript")
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


def _once(build: Callable[[], list[str]]) -> Callable[[], list[str]]:
    """``build`` run once per test process (its argv kept): the sources do not change during a
    session, and a no-op ``make`` still costs seconds on a loaded machine at each kit test. A
    build that skipped or failed is tried again by the next test."""
    cached = functools.cache(build)
    return lambda: list(cached())


KITS = {
    "python": python_bot,
    "node": _once(node_bot),
    "typescript": _once(typescript_bot),
    "go": _once(go_bot),
    "cpp": _once(cpp_bot),
}


# ---- the files each kit's build uses, for test_packages.py to find their Debian packages

def _make_var(folder: Path, name: str) -> str:
    """A variable of the kit's Makefile as make expands it."""
    proc = subprocess.run(["make", "-s", "--no-print-directory", "--eval",
                           f"print-var: ; @echo $({name})", "print-var"],
                          cwd=folder, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _commands(names: list[str]) -> list[str]:
    found = [shutil.which(n) for n in names]
    missing = [n for n, path in zip(names, found, strict=True) if path is None]
    if missing:
        pytest.fail(f"not on PATH: {missing}")
    return [p for p in found if p]


def _node_files() -> list[str]:
    return _commands(COMMANDS["node"])


def _go_files() -> list[str]:
    """The commands, the Go toolchain's compiler and linker, and one source file of every Go
    package the bot is built from (standard library and /usr/share/gocode alike)."""
    folder = CLIENTS / "go"
    env = dict(os.environ)
    for setting in _make_var(folder, "GOENV").split():
        key, _, value = setting.partition("=")
        env[key] = value
    tooldir = subprocess.run(["go", "env", "GOTOOLDIR"], cwd=folder, env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
    listed = subprocess.run(["go", "list", "-deps", "-f", '{{with .GoFiles}}{{$.Dir}}/{{index . 0}}{{end}}', "."],
                            cwd=folder, env=env, capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        pytest.fail(f"go list failed in {folder}:\n{listed.stderr[-2000:]}")
    tools = [str(Path(tooldir) / t) for t in ("compile", "link", "asm")]
    return _outside_repo([*_commands(COMMANDS["go"]), *tools, *listed.stdout.split()])


def _cpp_files() -> list[str]:
    """The commands and the compiler's parts, the pkg-config modules (and those they require),
    every header the sources include, and the libraries and start files the link reads."""
    folder = CLIENTS / "cpp"
    files = _commands(COMMANDS["cpp"])
    gxx = shutil.which("g++") or "g++"

    def gcc_path(option: str) -> str:
        out = subprocess.run([gxx, option], capture_output=True, text=True, check=True).stdout
        return out.strip()

    for prog in ("cc1plus", "collect2", "as", "ld"):
        path = gcc_path(f"-print-prog-name={prog}")
        files.append(path if os.path.isabs(path) else (shutil.which(path) or path))
    modules, seen = _make_var(folder, "PKGS").split(), set()
    while modules:
        module = modules.pop()
        if module in seen:
            continue
        seen.add(module)
        pcdir = subprocess.run(["pkg-config", "--variable=pcfiledir", module], capture_output=True,
                               text=True, check=False)
        if pcdir.returncode != 0:
            pytest.fail(f"pkg-config does not find module {module}, which the C++ build uses: "
                        f"the package that ships {module}.pc is not installed\n{pcdir.stderr}")
        files.append(f"{pcdir.stdout.strip()}/{module}.pc")
        for flag in ("--print-requires", "--print-requires-private"):
            req = subprocess.run(["pkg-config", flag, module], capture_output=True, text=True,
                                 check=True).stdout
            modules += [line.split()[0] for line in req.splitlines() if line.strip()]
    build = folder / _make_var(folder, "BUILD")
    sources = ["main.cc", *sorted(str(p) for p in (build / "gen").rglob("*.cc"))]
    deps = subprocess.run([gxx, "-M", *_make_var(folder, "CXXFLAGS").split(), *sources],
                          cwd=folder, capture_output=True, text=True, check=False)
    if deps.returncode != 0:
        pytest.fail(f"g++ -M failed in {folder}:\n{deps.stderr[-2000:]}")
    files += [t for t in deps.stdout.replace("\\\n", " ").split()
              if t.startswith("/") and not t.endswith(":")]
    for flag in _make_var(folder, "LDLIBS").split():
        if flag.startswith("-l"):
            for suffix in (".so", ".a"):
                path = gcc_path(f"-print-file-name=lib{flag[2:]}{suffix}")
                if os.path.isabs(path):
                    files.append(path)
                    break
    files += [gcc_path(f"-print-file-name={name}")
              for name in ("crt1.o", "crtbegin.o", "libstdc++.so")]
    return _outside_repo(files)


def _outside_repo(files: list[str]) -> list[str]:
    """The absolute paths not in this checkout (its generated code belongs to no package)."""
    root = str(ROOT) + os.sep
    return sorted({f for f in files if os.path.isabs(f) and not f.startswith(root)})


#: what each kit's build and run use from the system, by kit
USED_FILES = {
    "node": _node_files,
    "typescript": _node_files,
    "go": _go_files,
    "cpp": _cpp_files,
}
