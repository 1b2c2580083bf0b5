"""Issue 18: every token flag of the command-line tools has a ``-file`` twin, so nobody has to
put a secret on a command line (``ps`` shows it to every user of the machine)."""
from __future__ import annotations

import argparse
import io

import pytest
from referee_client.tokens import add_token_flag, token_arg


def _parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_token_flag(p, "--token", "REFEREE_TOKEN", "the seat token")
    args = p.parse_args(argv)
    args.usage_error = p.error
    return args


def test_a_token_comes_from_its_file_stdin_the_flag_or_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("REFEREE_TOKEN", raising=False)
    path = tmp_path / "seat.token"
    path.write_text("abc123\n")
    assert token_arg(_parse("--token-file", str(path)), "--token", "REFEREE_TOKEN") == "abc123"
    monkeypatch.setattr("sys.stdin", io.StringIO("from-stdin\n"))
    assert token_arg(_parse("--token-file", "-"), "--token", "REFEREE_TOKEN") == "from-stdin"
    assert token_arg(_parse("--token", "typed"), "--token", "REFEREE_TOKEN") == "typed"
    assert token_arg(_parse(), "--token", "REFEREE_TOKEN") is None
    monkeypatch.setenv("REFEREE_TOKEN", "from-env")
    assert token_arg(_parse(), "--token", "REFEREE_TOKEN") == "from-env"


@pytest.mark.parametrize("case", ["absent", "empty", "both"])
def test_an_unusable_token_file_is_a_usage_error(tmp_path, case, capsys):
    path = tmp_path / "seat.token"
    if case == "empty":
        path.write_text("  \n")
    argv = ("--token-file", str(path), *(("--token", "t") if case == "both" else ()))
    with pytest.raises(SystemExit) as ei:
        token_arg(_parse(*argv), "--token", "REFEREE_TOKEN")
    assert ei.value.code == 2
    assert "--token-file" in capsys.readouterr().err
