"""`referee serve`'s flags repeat the defaults of the classes they fill (issue 33: the lobby's
--seek-ttl, --seeks-per-client, --seeks-per-address, --max-seeks, --seek-rate mirror
LobbyLimits, --house-capacity ServerConfig, and so on for every flag of ServerConfig and the
upload Limits): the numbers are written twice, once in cli.py (argparse, and the --help text)
and once in the class. These tests hold them equal, so changing one without the other fails
here instead of giving `referee serve` and a ServerConfig() built in code different limits."""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any

from referee import cli
from referee.server.config import ServerConfig

#: fields that `referee serve` gets from the test rather than from a default it repeats
SET_BY_THE_TEST = {"data_dir"}


def class_defaults(cls: type) -> dict[str, Any]:
    """Each field's default as the class declares it (a slots dataclass keeps no class
    attribute to read it from: dataclasses.fields has it)."""
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def served_config(monkeypatch, tmp_path) -> ServerConfig:
    """The ServerConfig `referee serve` builds from its flags' defaults (the serving itself,
    the umask and the logging set-up stubbed out: the test process keeps its own)."""
    import referee.server
    from referee.server.base import logs

    got: list[ServerConfig] = []

    async def fake_serve(config: ServerConfig) -> None:
        got.append(config)

    monkeypatch.setattr(referee.server, "serve", fake_serve)
    monkeypatch.setattr(logs, "configure", lambda *a, **k: None)
    monkeypatch.setattr(os, "umask", lambda mask: 0o022)
    assert cli.main(["serve", "--data-dir", str(tmp_path)]) == 0
    assert len(got) == 1
    return got[0]


def test_every_serve_flag_default_is_the_class_default_it_mirrors(monkeypatch, tmp_path):
    config = served_config(monkeypatch, tmp_path)
    want = class_defaults(ServerConfig)
    for name, default in want.items():
        if name in SET_BY_THE_TEST:
            continue
        value = getattr(config, name)
        if dataclasses.is_dataclass(default):  # LobbyLimits, the upload Limits: each field
            for sub, sub_default in class_defaults(type(default)).items():
                assert getattr(value, sub) == sub_default, (
                    f"referee serve's default for {name}.{sub} is {getattr(value, sub)!r}, "
                    f"{type(default).__name__}'s is {sub_default!r}")
            continue
        assert value == default, (f"referee serve's default for ServerConfig.{name} is "
                                  f"{value!r}, the class's is {default!r}")


def _serve_parser():
    parser = cli.build_parser()
    subs = next(a for a in parser._actions if isinstance(a.choices, dict) and "serve" in a.choices)
    return subs.choices["serve"]


UNITS = {"": 1, "MiB": 1024 * 1024}


def test_the_help_says_the_default_the_flag_has():
    """A "(default N)" in a flag's --help text is the number argparse gives it; the seek rate's
    burst, which has no flag, is LobbyLimits'."""
    from referee.server.play.lobby import LobbyLimits

    checked = 0
    for action in _serve_parser()._actions:
        said = re.search(r"\(default:? ([0-9]+(?:\.[0-9]+)?)(?![0-9.]) ?(MiB)?", action.help or "")
        if said is None:
            continue
        number = float(said.group(1)) * UNITS[said.group(2) or ""]
        assert number == float(action.default), (action.option_strings, action.help)
        checked += 1
        if action.dest == "seek_rate":
            burst = re.search(r"in bursts of ([0-9.]+)", action.help)
            assert burst and float(burst.group(1)) == LobbyLimits().open_burst, action.help
    assert checked > 20  # the pattern still finds the help texts' defaults
