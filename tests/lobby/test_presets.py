"""The named clocks (issue 33, item 1): the referee's lobby (``play.lobby.preset_policy``) and
the SDK (``referee_client.clocks``, for command lines) read every name alike and refuse the same
ones."""
from __future__ import annotations

import pytest
from referee_client.clocks import preset_policy as sdk_preset

from referee.server.base.errors import RefereeError
from referee.server.play.lobby import PRESETS, preset_policy

GOOD = [*PRESETS, "bot", "5+3", "1+0", "180+120", "10+5"]
BAD = ["", "0+3", "181+0", "5+121", "5+", "+3", "5 + 3", "５+3", "blitz ", "1000+1"]


@pytest.mark.parametrize("name", GOOD)
def test_each_preset_is_the_same_clock_in_the_sdk_and_the_referee(name):
    assert sdk_preset(name) == preset_policy(name)


@pytest.mark.parametrize("name", BAD)
def test_each_bad_name_is_refused_by_both(name):
    with pytest.raises(RefereeError):
        preset_policy(name)
    with pytest.raises(ValueError, match="unknown clock"):
        sdk_preset(name)


def test_five_plus_three():
    p = preset_policy("5+3")
    assert (p.move_ms, p.bank_ms, p.increment_ms) == (0, 300_000, 3_000)
