"""clients/node/common.js, shared by the Node.js bots (bot.js, session_bot.js): the command-line
parser and the seeded random number generator. Runs when `node` is on PATH."""
from __future__ import annotations

import json
import subprocess

import pytest

from .test_node_bot import NODE_DIR, node_bot  # noqa: F401 - the fixture

SCRIPTS = {
    "bot.js": ["--match", "m", "--token=t"],
    "session_bot.js": ["--bot-token-file", "-"],
}


def node(node_bot, *argv, stdin: str = "t\n"):  # noqa: F811
    return subprocess.run([node_bot, *argv], cwd=NODE_DIR, capture_output=True, text=True,
                          input=stdin, timeout=60, check=False)


def parse(node_bot, argv):  # noqa: F811
    """What common.parseArgs returns for bot.js's flags."""
    script = f"""
    const {{ parseArgs }} = require('./common');
    const args = parseArgs({json.dumps(argv)}, {{
      usage: 'usage', defaults: {{ address: 'a:1', seed: undefined }},
      flags: {{ '--address': ['address', String], '--token': ['token', String],
                '--seed': ['seed', Number] }},
      valid: (args) => Boolean(args.token),
    }});
    console.log(JSON.stringify(args));"""
    proc = node(node_bot, "-e", script)
    return proc.returncode, json.loads(proc.stdout) if proc.returncode == 0 else proc.stderr


def test_values_follow_their_flag_or_are_glued_with_an_equals_sign(node_bot):  # noqa: F811
    assert parse(node_bot, ["--token=-starts-with-dash", "--seed", "7"]) == (
        0, {"address": "a:1", "token": "-starts-with-dash", "seed": 7})
    assert parse(node_bot, ["--address=h:2", "--token", "t"]) == (
        0, {"address": "h:2", "token": "t"})


def test_bad_usage_exits_2_with_the_usage(node_bot):  # noqa: F811
    for argv in (["--seed", "1"], ["--token=t", "--bogus"], ["--token"], ["--token=t", "--seed"]):
        code, err = parse(node_bot, argv)
        assert code == 2 and "usage" in err, argv


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_each_bot_parses_its_own_flags(node_bot, script):  # noqa: F811
    helped = node(node_bot, script, "--help")
    assert helped.returncode == 0 and helped.stdout.startswith(f"usage: node {script}")
    for argv in ([], [*SCRIPTS[script], "--bogus"], [*SCRIPTS[script], "--seed"]):
        proc = node(node_bot, script, *argv)
        assert proc.returncode == 2 and f"usage: node {script}" in proc.stderr, argv
    if script == "session_bot.js":
        proc = node(node_bot, script, "--bot-token-file", "-", "--capacity", "0")
        assert proc.returncode == 2, "capacity must be 1..256"
        # the bot token is never taken from the command line
        proc = node(node_bot, script, "--bot-token=t")
        assert proc.returncode == 2 and "unknown argument --bot-token" in proc.stderr
        proc = node(node_bot, script, "--bot-token-file", "-", stdin="")
        assert proc.returncode == 2 and "no token in it" in proc.stderr


def test_the_seeded_generator_is_mulberry32(node_bot):  # noqa: F811
    """A seeded bot is reproducible: the same seed draws the same numbers, as it always did."""
    proc = node(node_bot, "-e", "const r = require('./common').rng(7);"
                                "console.log(JSON.stringify([r(), r(), r()]))")
    assert json.loads(proc.stdout) == [0.011704753153026104, 0.06195825757458806,
                                       0.97690763277933]
