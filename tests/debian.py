"""The Debian packages the test suite and the starter kits need.

Every consumer keeps its list in a `debian-packages.txt` beside it (one package a line, `#`
starts a comment): each kit in `clients/<kit>/`, and `tests/` for what the other tests run
(Chromium, bubblewrap, openssl, Node.js). This module reads those lists, says which packages are
missing, installs them (as root, with apt-get), and answers what a list brings in on a fresh
machine, which is what `tests/test_debian_packages.py` and `tests/kits/test_packages.py` hold
each list to. `python -m tests.debian LIST...` installs what the lists miss (`make test` runs it
first); it is pytest-free so the Makefile can call it.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the suite's own list (what tests outside tests/kits run)
SUITE = ROOT / "tests" / "debian-packages.txt"
#: packages that count as present when their command is on PATH, however it was installed
#: (any Node.js >= 18 will do, from nodesource or nvm as well as Debian)
ON_PATH = {"nodejs": "node", "npm": "npm"}
#: top-level folders that Debian's merged /usr makes aliases of /usr/<folder>
_MERGED = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


def kit_list(kit: str) -> Path:
    return ROOT / "clients" / kit / "debian-packages.txt"


def read(path: Path) -> list[str]:
    """The packages a list names, in order."""
    names = []
    for line in path.read_text().splitlines():
        names += line.split("#", 1)[0].split()
    return names


def is_debian() -> bool:
    return shutil.which("dpkg-query") is not None and shutil.which("apt-get") is not None


def missing(packages: Iterable[str]) -> list[str]:
    """The packages not installed (none off Debian: there only the commands on PATH count)."""
    query = shutil.which("dpkg-query")
    if query is None:
        return []
    out = []
    for pkg in packages:
        if pkg in ON_PATH and shutil.which(ON_PATH[pkg]):
            continue
        proc = subprocess.run([query, "-W", "-f=${Status}", pkg], capture_output=True, text=True,
                              check=False)
        if proc.returncode != 0 or "install ok installed" not in proc.stdout:
            out.append(pkg)
    return out


def cannot_install() -> str | None:
    """Why this process cannot run apt-get install, or None."""
    if not is_debian():
        return "no apt-get"
    if os.geteuid() != 0:
        return "not root"
    return None


def _apt_env() -> dict[str, str]:
    return {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}


def install(packages: list[str]) -> str | None:
    """apt-get install ``packages`` (no Recommends), refreshing the package index once if that
    fails; None on success, else apt-get's error output. Waits for dpkg's lock: another checkout
    or test process may be installing."""
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends",
           "-o", "DPkg::Lock::Timeout=600", *packages]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_apt_env(), check=False)
    if proc.returncode != 0:  # an old or empty package index
        subprocess.run(["apt-get", "update", "-q", "-o", "DPkg::Lock::Timeout=600"],
                       capture_output=True, env=_apt_env(), check=False)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_apt_env(), check=False)
    return None if proc.returncode == 0 else (proc.stdout + proc.stderr)[-2000:]


_DEPENDS = ("Depends:", "PreDepends:")


def _depends(packages: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
         "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *packages],
        capture_output=True, text=True, check=False)


def _dependency_table(text: str) -> dict[str, list[list[tuple[str, list[str]]]]]:
    """`apt-cache depends` output as package -> its or-groups, each a list of alternatives
    (name, what satisfies it: the package itself, or a virtual name's (<name>) providers)."""
    table: dict[str, list[list[tuple[str, list[str]]]]] = {}
    groups: list[list[tuple[str, list[str]]]] = []
    open_group = False  # the previous alternative ended with "|": this one joins its group
    for line in text.splitlines():
        if not line.startswith(" "):
            groups = table.setdefault(line.strip().strip("<>").split(":")[0], [])
            open_group = False
        elif line.startswith("    "):  # a provider of the virtual name just listed
            groups[-1][-1][1].append(line.strip().split(":")[0])
        else:
            kind, _, name = line.strip().lstrip("|").partition(" ")
            if kind not in _DEPENDS:
                open_group = False
                continue
            virtual = name.startswith("<")
            alternative = (name.strip("<>").split(":")[0], [] if virtual else [name.split(":")[0]])
            if open_group:
                groups[-1].append(alternative)
            else:
                groups.append([alternative])
            open_group = line.startswith(" |")
    return table


@functools.cache
def base() -> frozenset[str]:
    """What every Debian system has: the Essential and the Priority: required packages."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Essential}\t${Priority}\n"],
                         capture_output=True, text=True, check=True).stdout
    return frozenset(name for name, essential, priority in
                     (line.split("\t") for line in out.splitlines() if line.count("\t") == 2)
                     if essential == "yes" or priority == "required")


@functools.cache
def fresh_install(packages: tuple[str, ...]) -> frozenset[str]:
    """Every package on a fresh machine after `apt-get install --no-install-recommends
    PACKAGES`, the base system included: the Depends and Pre-Depends closure from
    `apt-cache depends --recurse` (no Recommends or Suggests), taking of each or-dependency only
    the alternative apt picks (one already asked for or chosen, else the first that exists),
    where `--recurse` itself follows all of them. Raises RuntimeError when apt has no package
    index (run apt-get update), ValueError when it does not know a package of the list."""
    start = (*packages, *sorted(base() - set(packages)))
    proc = _depends(start)
    if proc.returncode != 0 and cannot_install() is None:
        subprocess.run(["apt-get", "update", "-q", "-o", "DPkg::Lock::Timeout=600"],
                       capture_output=True, env=_apt_env(), check=False)
        proc = _depends(start)
    table = _dependency_table(proc.stdout)
    if proc.returncode != 0 or not table:
        raise RuntimeError(f"apt-cache depends {' '.join(packages)} failed:\n"
                           f"{(proc.stdout[:500] + proc.stderr)[-2000:]}")
    unknown = [p for p in packages if p not in table]
    if unknown:
        raise ValueError(f"apt knows no package {unknown}")
    chosen = set(start)
    todo = list(reversed(start))
    while todo:
        for group in table.get(todo.pop(), []):
            if any(chosen.intersection(satisfy) for _, satisfy in group):
                continue
            pick = next((satisfy[0] for _, satisfy in group if satisfy), None)
            if pick is not None:
                chosen.add(pick)
                todo.append(pick)
    return frozenset(chosen)


def _aliases(path: str) -> set[str]:
    """``path`` as dpkg may have recorded it: as given, resolved, and without /usr/ for the
    folders merged /usr aliases."""
    forms = {os.path.normpath(path), os.path.realpath(path)}
    unmerged = {"/" + "/".join(parts[2:]) for parts in (form.split("/") for form in forms)
                if len(parts) > 3 and parts[1] == "usr" and parts[2] in _MERGED}
    return forms | unmerged


def owners(paths: Iterable[str | Path]) -> dict[str, set[str]]:
    """The Debian packages that own each file (an empty set: no package does, so it came from
    elsewhere, e.g. /usr/local or a build folder)."""
    wanted = {str(p): _aliases(str(p)) for p in paths}
    forms = sorted(set().union(*wanted.values())) if wanted else []
    owned: dict[str, set[str]] = {}
    for i in range(0, len(forms), 500):
        proc = subprocess.run(["dpkg-query", "-S", *forms[i:i + 500]], capture_output=True,
                              text=True, check=False)
        for line in proc.stdout.splitlines():
            if line.startswith("diversion by") or ": " not in line:
                continue
            names, path = line.split(": ", 1)
            owned.setdefault(path, set()).update(n.strip().split(":")[0]
                                                 for n in names.split(","))
    return {p: set().union(*(owned.get(f, set()) for f in fs)) for p, fs in wanted.items()}


def unbrought(packages: list[str], paths: Iterable[str | Path]) -> dict[str, list[str]]:
    """The packages owning some of ``paths`` that installing ``packages`` alone on a fresh
    machine does not bring in, each with the files of ``paths`` it owns; files no package owns
    are not counted."""
    present = fresh_install(tuple(packages))
    out: dict[str, list[str]] = {}
    for path, pkgs in sorted(owners(paths).items()):
        if pkgs and not pkgs & present:
            out.setdefault(" or ".join(sorted(pkgs)), []).append(path)
    return out


def explain(list_path: Path, gaps: dict[str, list[str]]) -> str:
    """A failure message naming each package a list lacks and a file it is needed for."""
    head = (f"{list_path.relative_to(ROOT)} is incomplete: `apt-get install "
            "--no-install-recommends` of it alone does not bring in")
    lines = [head]
    for pkg, files in gaps.items():
        more = f" (and {len(files) - 1} more of its files)" if len(files) > 1 else ""
        lines.append(f"  {pkg}, which owns {files[0]}{more}, used here")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Install what the lists named on the command line miss, when root; else say what to run.
    Never fails the caller: the tests that need a package skip or fail and say why."""
    packages = list(dict.fromkeys(p for arg in argv for p in read(Path(arg))))
    absent = missing(packages)
    if not absent:
        return 0
    why = cannot_install()
    if why:
        print(f"missing Debian packages ({why}): as root run apt-get install {' '.join(absent)}; "
              "the tests that need them will be skipped")
        return 0
    print(f"installing the Debian packages the tests use: {' '.join(absent)}")
    error = install(absent)
    if error:
        print(f"apt-get install failed: the tests that need them will say so\n{error}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
