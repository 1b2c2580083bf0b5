"""A chat-model entrant in a tournament (issue 34 item 4): the TOML's `kind = "chat-model"`
plays through `referee-bot llm` against the stand-in server, and the report shows its tokens
per move, illegal answers per 100 moves and re-asks beside the ratings (read from the cost line
of its moves' notes in the records)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from referee_tournament.config import ConfigError, parse

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ("referee-bot random --address {address} --match {match} --seed {seed} "
          "--log-level warning")


def _toml(out: Path, base_url: str, key_file: Path) -> str:
    return textwrap.dedent(f"""
        name = "models"
        seed = 3
        output = "{out}"
        [game]
        name = "santa_maria"
        seats = 2
        [[entrants]]
        name = "random"
        command = "{RANDOM}"
        [[entrants]]
        name = "model"
        kind = "chat-model"
        base_url = "{base_url}"
        model = "stand-in"
        api_key_file = "{key_file}"
        [time]
        move_ms = 5000
        [run]
        concurrency = 2
    """).lstrip()


def test_a_chat_model_entrant_gets_its_costs_in_the_report(standin, tmp_path):
    # two illegal answers, each asked again: 2 illegal, 2 re-asks
    chat_server = standin(script=["wrong", "correct", "correct", "wrong"], seed=2)
    key_file = tmp_path / "model.key"
    key_file.write_text("sk-organizer-key\n")
    out = tmp_path / "results"
    toml = tmp_path / "t.toml"
    toml.write_text(_toml(out, chat_server.base_url, key_file))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), str(ROOT / "clients"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "referee_tournament.cli", "run", str(toml),
                           "--no-progress"], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((out / "results.json").read_text())
    assert data["status"] == {"done": 2}
    board = {e["name"]: e for e in data["leaderboard"]}
    model = board["model"]
    assert model["llm_illegal"] == 2 and model["llm_reasks"] == 2
    assert model["llm_tokens"] > 0 and model["llm_tokens_per_move"] > 0
    assert 0 < model["llm_illegal_per_100"] < 100
    assert "llm_tokens" not in board["random"]
    html = (out / "index.html").read_text()
    assert "tokens / move" in html and "illegal / 100" in html
    assert "tok/move" in (out / "leaderboard.txt").read_text()
    assert set(chat_server.keys) == {"Bearer sk-organizer-key"}
    for m in data["matches"]:  # the key is in no record
        assert "sk-organizer-key" not in (out / m["record"]).read_text()


@pytest.mark.parametrize(("extra", "key", "words"), [
    ({"base_url": "http://user:pw@127.0.0.1:1/v1"}, "base_url", "no credentials"),
    ({"base_url": "ftp://127.0.0.1/v1"}, "base_url", "http(s) URL"),
    ({"model": None}, "model", "missing"),
    ({"api_key_file": "nowhere.key"}, "api_key_file", "no file"),
    ({"command": "x {address} {match}"}, "command", "unknown key"),
])
def test_a_bad_chat_model_entrant_is_refused_by_name(tmp_path, extra, key, words):
    entrant = {"name": "model", "kind": "chat-model", "base_url": "http://127.0.0.1:1/v1",
               "model": "m", **extra}
    entrant = {k: v for k, v in entrant.items() if v is not None}
    data = {"name": "t", "game": {"name": "goa", "seats": 2},
            "entrants": [{"name": "r", "command": RANDOM}, entrant]}
    with pytest.raises(ConfigError) as err:
        parse(data, base_dir=tmp_path)
    assert key in str(err.value) and words in str(err.value), str(err.value)
