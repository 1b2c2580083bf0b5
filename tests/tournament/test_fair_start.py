"""The runner's time policy carries the fair start of issue 19, item 4 (referee.proto,
TimePolicy.join_ms and first_move_ms): ``[time] join_ms`` and ``first_move_ms`` are read,
checked and sent with every match, and runner matches get a start-up allowance by default."""
from __future__ import annotations

import pytest
from referee_tournament.config import DEFAULT_FIRST_MOVE_MS, ConfigError, parse
from referee_tournament.formats import schedule
from referee_tournament.play import match_request
from referee_tournament.runner import Runner


def _doc(**time_cfg):
    return {"game": {"name": "batavia", "seats": 3},
            "entrants": [{"name": n, "command": "bot {address} {match} {token}"}
                         for n in ("a", "b", "c")],
            "time": {"move_ms": 1000, **time_cfg}}


def _request(cfg):
    runner = Runner(cfg, progress=False)
    return match_request(runner.job_for(schedule(cfg)[0], None))


def test_join_ms_and_first_move_ms_go_into_every_match(tmp_path):
    cfg = parse(_doc(join_ms=45_000, first_move_ms=7_500), base_dir=tmp_path)
    tp = _request(cfg).time_policy
    assert (tp.move_ms, tp.join_ms, tp.first_move_ms) == (1000, 45_000, 7_500)


def test_an_increment_goes_into_every_match(tmp_path):
    """[time] increment_ms (issue 33: the Fischer increment) reaches CreateMatch."""
    cfg = parse(_doc(increment_ms=2_000), base_dir=tmp_path)
    assert _request(cfg).time_policy.increment_ms == 2_000
    assert _request(parse(_doc(), base_dir=tmp_path)).time_policy.increment_ms == 0


def test_runner_matches_get_a_start_up_allowance_by_default(tmp_path):
    cfg = parse(_doc(), base_dir=tmp_path)
    tp = _request(cfg).time_policy
    assert DEFAULT_FIRST_MOVE_MS > 0
    assert tp.first_move_ms == DEFAULT_FIRST_MOVE_MS
    assert tp.join_ms == 0  # the referee's own default (referee serve --join-ms)


@pytest.mark.parametrize("key, value", [
    ("join_ms", -1), ("join_ms", "soon"), ("join_ms", 2**32),
    ("first_move_ms", -5), ("first_move_ms", 1.5), ("increment_ms", -1),
])
def test_bad_values_are_refused_by_key(tmp_path, key, value):
    with pytest.raises(ConfigError) as ei:
        parse(_doc(**{key: value}), base_dir=tmp_path)
    assert ei.value.key == f"time.{key}"
