"""Issue 12, item 6: "has help on every flag". Every option of every (sub-)command of the three
command-line tools says what it does in --help."""
from __future__ import annotations

import argparse

import pytest


def _flags_without_help(parser: argparse.ArgumentParser, path: str) -> list[str]:
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += _flags_without_help(sub, f"{path} {name}")
        elif action.option_strings and (not action.help or action.help == argparse.SUPPRESS
                                        or not action.help.strip()):
            missing.append(f"{path} {'/'.join(action.option_strings)}")
    return missing


@pytest.mark.parametrize("tool, module", [("referee", "referee.cli"),
                                          ("referee-bot", "referee_tools.bot_cli"),
                                          ("referee-tournament", "referee_tournament.cli")])
def test_every_flag_of_every_command_has_help(tool, module):
    import importlib

    parser = importlib.import_module(module).build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert subs and len(subs[0].choices) >= 3  # the walk reaches the sub-commands
    assert _flags_without_help(parser, tool) == []
