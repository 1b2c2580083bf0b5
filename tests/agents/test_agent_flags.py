"""The agents' commands take no secret on the command line and listen on loopback only."""
from __future__ import annotations

import argparse

import pytest
from referee_tools.bot_cli import build_parser, main


def _flags(command: str) -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {f for a in sub.choices[command]._actions for f in a.option_strings}


def test_no_flag_takes_a_key_or_a_bot_token_itself():
    assert not _flags("llm") & {"--api-key", "--key", "--bot-token"}
    assert {"--api-key-file", "--bot-token-file"} <= _flags("llm")
    assert not _flags("mcp") & {"--token", "--bot-token", "--admin-token", "--api-key"}
    assert {"--token-file", "--bot-token-file", "--admin-token-file"} <= _flags("mcp")


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.org"])
def test_the_mcp_endpoint_listens_on_loopback_only(host, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["mcp", "--transport", "http", "--host", host])
    assert exit_.value.code == 2
    assert "not a loopback address" in capsys.readouterr().err
