"""The optional compiled build of the engines (bench/compiled.py, issue 36).

In ``make test``: the build's module lists name modules that exist, and a build that is present
matches the sources it shadows (an edited rule module is never silently replaced by an old
build). With ``REFEREE_COMPILED_TEST=1`` (``make test-compiled``, after ``make compiled``): every
module of the build really is imported from its extension module, so the golden records and the
contract tests that run beside this file test the compiled engines."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import compiled

COMPILED_RUN = os.environ.get("REFEREE_COMPILED_TEST") == "1"


def test_the_build_lists_existing_modules_once():
    named = [*compiled.MODULES, *compiled.LEFT_OUT]
    assert len(set(named)) == len(named), "a module is both compiled and left out, or twice"
    missing = [m for m in named if not compiled.source(m).is_file()]
    assert missing == [], f"no such module: {missing}"
    assert all(why for why in compiled.LEFT_OUT.values())


def test_a_present_build_matches_its_sources():
    assert compiled.stale() == [], (
        "the compiled build shadows .py files edited since it was built: "
        "`make compiled` again, or `make clean-compiled`")


@pytest.mark.skipif(not COMPILED_RUN, reason="opt-in: make test-compiled (REFEREE_COMPILED_TEST=1)")
def test_the_compiled_build_is_what_runs():
    python = [m for m in compiled.MODULES if not compiled.compiled(m)]
    assert python == [], f"imported from .py, not the build: {python}"
    for module in compiled.LEFT_OUT:
        assert (importlib.import_module(module).__file__ or "").endswith(".py"), module


@pytest.mark.skipif(not COMPILED_RUN, reason="opt-in: make test-compiled (REFEREE_COMPILED_TEST=1)")
def test_the_installed_commands_find_the_build(tmp_path):
    """The console scripts run outside the checkout, with no PYTHONPATH: the build's shared
    library must be found through the ``referee`` package (it once sat at the repository root,
    and `referee serve` then failed at start with the build present)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = Path(sys.executable).with_name("referee")
    done = subprocess.run([str(script), "games"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
