"""No project file cites a path outside this repository: every file a relative path names must be
reachable from a checkout. The design brief and the research files (rules texts, component data)
the project was started from are not part of it, so sheets and docs cite rulebooks by title and
edition, or files inside the repository, instead of them."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"\bDESIGN\.md\b|(?<![\w/.-])shared/(?:rules|data)/")
RELATIVE = re.compile(r"(?<![\w/.-])(?:\.\./)+[\w.-][\w./-]*")


def tracked_texts():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True,
                           ).stdout.decode().split("\0")
    for name in filter(None, files):
        path = ROOT / name
        if path == Path(__file__).resolve() or name.endswith("package-lock.json"):
            continue
        try:
            yield name, path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # binary, or deleted in the working tree


def test_no_file_cites_a_path_outside_the_repository():
    root = ROOT.resolve()
    found = []
    for name, text in tracked_texts():
        for n, line in enumerate(text.splitlines(), 1):
            found += [f"{name}:{n}: {m.group()}" for m in OUTSIDE.finditer(line)]
            for m in RELATIVE.finditer(line):
                target = ((ROOT / name).parent / m.group()).resolve()
                if not target.is_relative_to(root):
                    found.append(f"{name}:{n}: {m.group()}")
    assert not found, "\n".join(found)
