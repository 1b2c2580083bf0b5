"""Usage errors of a sub-command found after parsing (a zero concurrency, a running referee
without its admin token, ...) show that sub-command's usage, exit 2, and start nothing."""
from __future__ import annotations

import pytest
from referee_tournament.cli import main


def _usage_error(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    assert exc.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(("argv", "command", "said"), [
    (("run", "t.toml", "-j", "0"), "run", "--concurrency/-j: expected a positive integer, got 0"),
    (("resume", "runs/x", "--referees", "-1"), "resume", "--referees: expected a positive"),
    (("run", "t.toml", "--max-matches", "-3"), "run", "--max-matches: expected an integer >= 0"),
    (("ladder", "t.toml", "--duration", "0"), "ladder", "--duration: expected a positive"),
    (("check", "t.toml", "--join-timeout", "-1"), "check", "--join-timeout: expected a positive"),
    (("run", "t.toml", "--address", "127.0.0.1:1"), "run", "needs its admin token"),
])
def test_a_sub_command_error_shows_that_sub_commands_usage(capsys, monkeypatch, argv, command,
                                                          said):
    monkeypatch.delenv("REFEREE_ADMIN_TOKEN", raising=False)
    err = _usage_error(capsys, *argv)
    assert err.startswith(f"usage: referee-tournament {command} "), err
    assert f"referee-tournament {command}: error: argument " in err and said in err


def test_a_token_from_the_environment_is_enough(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("REFEREE_ADMIN_TOKEN", "t")
    # past the usage checks: the missing file is a bad tournament file (exit 2, no usage)
    assert main(["run", str(tmp_path / "none.toml"), "--address", "127.0.0.1:1"]) == 2
    assert "usage:" not in capsys.readouterr().err
