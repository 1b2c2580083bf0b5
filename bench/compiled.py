"""The optional compiled build of the engines (issue 36: "compiling the existing, typed engine
modules with mypyc ... as an optional build with the pure-Python modules kept as the reference").

``make compiled`` (``python -m bench.compiled build``) compiles ``MODULES`` with mypyc, which
ships with mypy, into C extension modules written next to their ``.py`` files
(``referee/games/goa/rules.cpython-311-x86_64-linux-gnu.so``...) plus one shared library in the
``referee`` package (``referee/compiled__mypyc...so``, the code of every module: mypyc compiles
them as one group, so calls between them are native calls; inside the package, so a process
that finds ``referee`` finds it, the ``referee`` console script included). Python's import system tries an
extension module before the source of the same name, so the build shadows those ``.py`` files
while it is present and nothing else changes: no import, no flag, no engine edit.
``make clean-compiled`` (``python -m bench.compiled clean``) removes it and the pure-Python
modules, which stay the reference, are what runs again. ``.gitignore`` keeps the build out of
``git status``.

A build is only right for the sources it was made from: ``build`` writes ``MANIFEST`` (each
module's source hash) and ``stale()`` names the modules whose ``.py`` changed since, which
``tests/bench/test_compiled.py`` (part of ``make test``) reports as a failure, so an edited rule
is never silently shadowed by an old build.

``make test-compiled`` builds, checks that every module of ``MODULES`` imports from its
extension module, and runs the golden records and the contract tests (tests/contract/) and each
game's rule tests against the build. ``python -m bench.run --compiled`` measures the engines and
the move path's server CPU with the build (``engine_compiled.*``, ``server_compiled.*`` in
bench/results.json).
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the group whose shared library (``referee/compiled__mypyc...so``) holds the compiled code
GROUP = "referee.compiled"
#: where the build keeps its C sources and objects (under build/, which git ignores)
BUILD_DIR = ROOT / "build" / "compiled"
#: the source hashes of the modules of the build present (written by ``build``)
MANIFEST = BUILD_DIR / "manifest.json"

#: Compiled: each game's rule modules that mypyc takes as they are (the rules, scoring and the
#: modules they call; Batavia's state), each game's view and observation planes, and the core's
#: match record and state hash: what a decision, a move, the server's view and hash of each
#: move and a research environment's observation run through. Not the adapters, sheets, texts
#: or wording, which run once a match or build protobuf messages from JSON.
MODULES: tuple[str, ...] = (
    "referee.core.match",
    "referee.core.hashing",
    *(f"referee.games.{g}.{m}" for g in ("batavia", "goa", "santa_maria")
      for m in ("view", "view_parts", "planes")),
    *(f"referee.games.batavia.{m}" for m in ("rules", "state", "scoring", "auction",
                                             "heuristic")),
    *(f"referee.games.goa.{m}" for m in ("rules", "scoring", "auction", "board", "resources",
                                         "sim", "heuristic")),
    *(f"referee.games.santa_maria.{m}" for m in (
        "rules", "moves", "scoring", "dice", "geometry", "payments", "tracks", "turn",
        "game_setup", "heuristic")),
)

# What mypyc (2.x) cannot take as the engines write it, found by building and running the tests:
_PENDING_DATACLASS = ("its pending decisions are dataclasses deriving from the Pending protocol "
                      "(referee.core.pending) with ClassVar defaults: compiled, the module fails "
                      "at import ('attribute __dict__ of type objects is not writable', and "
                      "'object attribute ... is read-only' for a ClassVar default)")

#: Candidates left out, and why (mypyc refuses them, or they would need more than a type-level
#: change; they stay pure Python in the build, and the compiled modules call them as Python).
LEFT_OUT: dict[str, str] = {
    "referee.core.rng": "Streams.from_root builds with cls.__new__(cls), which mypyc cannot "
                        "compile (an internal error), and the class sets __hash__ = None",
    "referee.core.codec": "its conversions are frozen slotted dataclasses deriving from an "
                          "abstract base: the compiled module fails at import ('attribute "
                          "__dict__ of type objects is not writable')",
    **{f"referee.games.{g}.moves": (
        "its moves are frozen slotted dataclasses: compiled, copy.deepcopy and pickle of one fail "
        "(FrozenInstanceError: the dataclass's __setstate__ meets the compiled frozen __setattr__)")
       for g in ("batavia", "goa")},
    "referee.games.batavia.sim": "its clone's test reads the clone's source (inspect.getsource, "
                                 "which a compiled function has not)",
    "referee.games.santa_maria.sim": "its clone's test reads the clone's source, and its sampler "
                                     "fails the forward model's tests compiled: left for a "
                                     "closer look",
    "referee.core.pending": "a Protocol, no code to speed up; the modules above derive from it",
    "referee.core.planes": "the interface every game's planes derive from, with no hot code: "
                           "compiled, no interpreted class could derive from it (another "
                           "game's planes, a test's wrapper: 'interpreted classes cannot "
                           "inherit from compiled')",
    **{f"referee.games.goa.{m}": _PENDING_DATACLASS for m in (
        "state", "actions", "cards", "colonies", "spices", "tiles")},
    **{f"referee.games.santa_maria.{m}": _PENDING_DATACLASS for m in (
        "state", "action_tasks", "effect_tasks")},
}


def source(module: str) -> Path:
    """The ``.py`` file of a dotted module name of this repository."""
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def extensions() -> list[Path]:
    """The build's files present: the extension modules under referee/ and the shared library."""
    return sorted(ROOT.joinpath("referee").rglob("*.so"))  # the shared library is there too


def extension(module: str) -> Path | None:
    """The extension module that shadows ``module``'s ``.py`` file, if the build is present."""
    src = source(module)
    found = sorted(src.parent.glob(f"{src.stem}.*.so"))
    return found[0] if found else None


def stale() -> list[str]:
    """The modules whose extension module is present but was built from another source than the
    ``.py`` there now (or with no manifest): the build shadows a file it does not match."""
    recorded: dict[str, str] = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    return [m for m in MODULES
            if extension(m) is not None and recorded.get(m) != _digest(source(m))]


def compiled(module: str) -> bool:
    """Whether ``module`` is imported from an extension module (the build present)."""
    mod = importlib.import_module(module)
    return (mod.__file__ or "").endswith(".so")


def clean() -> list[Path]:
    """Removes the build's extension modules and the manifest; the ``.py`` files run again."""
    gone = extensions()
    for path in gone:
        path.unlink()
    MANIFEST.unlink(missing_ok=True)
    return gone


def build(opt_level: str = "3", jobs: int = 2, multi_file: bool = False) -> None:
    """Compiles ``MODULES`` in place (minutes: mypy's analysis, then the C compiler).
    ``multi_file`` writes one C file per module, which ``jobs`` compilers share (a faster build,
    slightly slower code); the default is one C file, as mypyc's own default."""
    from mypyc.build import mypycify  # mypy's compiler: only the build needs it
    from setuptools import setup  # type: ignore[import-untyped]  # no stubs in the venv

    clean()
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    paths = [str(source(m).relative_to(ROOT)) for m in MODULES]
    here = Path.cwd()
    os.chdir(ROOT)  # mypy reads pyproject.toml's [tool.mypy] and the paths from the root
    try:
        setup(name="referee-compiled", script_args=[
            "build_ext", "--inplace", "--build-temp", str(BUILD_DIR / "temp"),
            "--build-lib", str(BUILD_DIR / "lib"), "--parallel", str(jobs)],
            ext_modules=mypycify(paths, opt_level=opt_level, multi_file=multi_file,
                                 group_name=GROUP, target_dir=str(BUILD_DIR / "c")))
    finally:
        os.chdir(here)
    MANIFEST.write_text(json.dumps({m: _digest(source(m)) for m in MODULES}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.compiled",
        description="The optional mypyc build of the engines (make compiled / clean-compiled).")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile the modules in place (minutes)")
    b.add_argument("--opt-level", default="3", help="the C compiler's -O level (default 3)")
    b.add_argument("--jobs", type=int, default=2, help="C compilers at once (default 2)")
    b.add_argument("--multi-file", action="store_true",
                   help="one C file per module: a faster build of slightly slower code")
    sub.add_parser("clean", help="remove the build: the pure-Python modules run again")
    sub.add_parser("status", help="which modules are compiled, and whether any is stale")
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.opt_level, args.jobs, args.multi_file)
        missing = [m for m in MODULES if not compiled(m)]
        if missing:
            print(f"not compiled after the build: {', '.join(missing)}", file=sys.stderr)
            return 1
        print(f"compiled {len(MODULES)} modules; `make clean-compiled` removes them")
    elif args.command == "clean":
        for path in clean():
            print(f"removed {path.relative_to(ROOT)}")
    else:
        old = stale()
        for m in MODULES:
            print(f"{'compiled' if compiled(m) else 'python  '}  {m}"
                  f"{'  (STALE: make compiled)' if m in old else ''}")
        for m, why in LEFT_OUT.items():
            print(f"left out  {m}: {why}")
        return 1 if old else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
