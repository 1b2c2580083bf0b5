"""The typed sub-decisions: each hashes as the ``(tag, field, ...)`` tuple the golden records pin,
and each kind that asks a choice names its decision kind, prompt and rule."""
from __future__ import annotations

import dataclasses

from referee.core import hashing
from referee.games.santa_maria import action_tasks, effect_tasks

from .helpers import R

TASK_CLASSES = [cls for module in (action_tasks, effect_tasks) for cls in vars(module).values()
                if isinstance(cls, type) and issubclass(cls, R.Task)
                and cls.__module__ == module.__name__]


def test_tasks_hash_as_their_tagged_tuples():
    assert hashing.canonical(R.ExchangeOffer(1, 7, 14, 0)) == ["exch", 1, 7, 14, 0]
    assert hashing.canonical(R.DiePlacement(0, R.ROW, 3, R.WHITE)) == ["die", 0, R.ROW, 3, R.WHITE]
    assert hashing.canonical(R.Production(2, (1, 0, 0, 0, 0, 2, 0))) == [
        "gain", 2, [1, 0, 0, 0, 0, 2, 0]]
    assert hashing.canonical([R.MonkRecruitment(1)]) == [["monk", 1]]


def test_every_task_is_a_slotted_dataclass_with_a_distinct_tag():
    assert len(TASK_CLASSES) == 15
    assert len({cls.tag for cls in TASK_CLASSES}) == len(TASK_CLASSES)
    for cls in TASK_CLASSES:
        assert dataclasses.is_dataclass(cls) and "__slots__" in vars(cls), cls
        assert dataclasses.fields(cls)[0].name == "seat", cls
        asks = cls.legal_moves is not R.Task.legal_moves
        assert asks == (cls.play is not R.Task.play), cls
        if asks:
            assert cls.kind.startswith("santa_maria.") and cls.prompt and cls.rule, cls
