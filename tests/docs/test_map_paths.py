"""The map tells the truth: every repository path `docs/ARCHITECTURE.md` and the server's READMEs
name in backticks exists, so a file moved or renamed without its map fails here instead of
leaving the map to rot (issue 32: the map still described a referee of flat modules that talked
to SQLite alone, after the server had grown a cluster, a PostgreSQL store and rooms).

What counts as a path, in backticks and without spaces, `*`, `...` or `://`:

* a path from the repository's root: its first part is an entry there (`referee/...`,
  `clients/...`, `tests/...`, `pyproject.toml`);
* a path written from a folder down (`server/play/records.py`, `play/registry.py`,
  `static/viewer.js`): its first folder exists somewhere in the code, and the path must exist
  under one such folder's parent; a first part the code has no folder of is a path the
  referee makes at run time (`hosted/BOT/vN/`) and is left alone, as are paths that start
  with a placeholder (`<data-dir>/...`);
* a bare file name (`runtime.py`): in a README, a file of that README's folder; in the map,
  whose section says which folder it means, a file of that name somewhere in the code (a
  file the referee reads from an upload, `bot.toml`, is listed in `RUNTIME`).

`<game>`, `<kit>` and the like stand for any one folder; a trailing `/` asks for a folder.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "docs" / "ARCHITECTURE.md"
READMES = sorted((ROOT / "referee" / "server").glob("**/README.md"))
TICKED = re.compile(r"`([^`\s]+)`")
PLACEHOLDER = re.compile(r"<[^>/]+>")
BARE = re.compile(r"^[\w-]+\.(?:py|md|json|proto|toml|txt|js|ts|go|cc|yaml|yml)$")
#: where the code is: a relative path or a bare name of the map is looked for there
CODE = ("referee", "clients", "tests", "bench", "docs", "proto", "examples")
#: file names the map gives that are not the repository's: what an uploaded bot's archive holds
RUNTIME = {"bot.toml"}
#: Named by the map ahead of the branches of issue 32 that add them (front: the registry and the
#: handler parity test; web: the reader and its README; games: Goa's sampler renamed sim.py;
#: protocol: Buf's configuration). Once those are merged this set must be emptied.
PLANNED = {
    "buf.yaml",
}


def _roots() -> set[str]:
    return {p.name for p in ROOT.iterdir()} - {".git", ".venv"}


def exists(path: str, base: Path = ROOT) -> bool:
    pattern = PLACEHOLDER.sub("*", path.rstrip("/"))
    matches = list(base.glob(pattern)) if "*" in pattern else [base / pattern]
    hits = [m for m in matches if m.exists()]
    return bool(hits) and (not path.endswith("/") or any(m.is_dir() for m in hits))


def _code_paths(name: str) -> list[Path]:
    """Every file or folder named ``name`` in the code (node_modules left out)."""
    return [p for top in CODE for p in (ROOT / top).rglob(name) if "node_modules" not in p.parts]


def missing_paths(text: str, folder: Path) -> list[str]:
    """The paths ``text`` names in backticks that do not exist; ``folder`` is the folder of the
    document (a README's bare names are its folder's files)."""
    roots = _roots()
    gone = []
    for token in TICKED.findall(text):
        token = token.rstrip(".,:;")
        if any(s in token for s in ("*", "...", "://")) or token.startswith(("-", ".")):
            continue
        first = token.split("/", 1)[0]
        if first in roots and (token in roots or "/" in token or "." in first):
            ok = exists(token)
        elif "/" in token and re.fullmatch(r"[\w-]+(/[\w<>.-]+)+/?", token):
            folders = [p.parent for p in _code_paths(first) if p.is_dir()]
            if not folders:
                continue  # a path made at run time
            ok = any(exists(token, parent) for parent in folders)
        elif BARE.match(token) and token not in RUNTIME:
            ok = exists(token, folder) if folder != MAP.parent else bool(_code_paths(token))
        else:
            continue  # not a path: a name, a command, a value
        if not ok:
            gone.append(token)
    return gone


def missing() -> dict[str, list[str]]:
    found = {}
    for doc in (MAP, *READMES):
        names = sorted(set(missing_paths(doc.read_text(), doc.parent)) - PLANNED)
        if names:
            found[str(doc.relative_to(ROOT))] = names
    return found


def test_every_path_the_map_names_exists():
    assert not missing(), f"paths named in the map that do not exist: {missing()}"


def test_the_check_finds_a_stale_path():
    """The check itself: the names the map used before the server moved into rooms are found,
    each kind of path once; names that are no paths are left alone."""
    text = ("`referee/server/store.py`, `server/pgstore.py`, `referee/games/<game>/nothing/`, "
            "`sampler_of_nothing.py`, `referee serve`, `Store._flush`, `referee.v1`, "
            "`referee/core/rng.py`, `server/play/records.py`, `tests/<game>/hooks.py`, "
            "`<data-dir>/records/`, `hosted/BOT/vN/`, `static/viewer.js`, `rng.py`")
    assert missing_paths(text, MAP.parent) == [
        "referee/server/store.py", "server/pgstore.py", "referee/games/<game>/nothing/",
        "sampler_of_nothing.py"]
    readme = ROOT / "referee" / "server" / "play" / "README.md"
    assert missing_paths("`runtime.py` and `opening.py`", readme.parent) == ["opening.py"]
