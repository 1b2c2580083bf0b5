"""No refusal without a machine-readable reason (issue 31 item 3): a MoveResult refusal never
carries REASON_UNSPECIFIED, whatever reason name reaches ``wire.refusal``, and every reason name
the referee can put on a move's path is in the protocol's Reason enum."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from referee.server.base import errors, wire
from referee.v1 import referee_pb2 as pb

ROOT = Path(__file__).resolve().parents[2] / "referee"
#: The modules a move passes through before its MoveResult: validation (wire), the match's
#: runtime (apply, commit, the failures answered on the stream) and the stores it commits to.
MOVE_PATH = ("server/base/wire.py", "server/play/runtime.py", "server/store/sqlite.py", "server/store/postgres.py",
             "server/store/opening.py")
#: Calls whose first argument is a refusal reason by name, wherever they are.
REFUSING_CALLS = {"refusal", "_refused", "reject", "IllegalMove"}


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _helper_reasons() -> dict[str, str]:
    """errors.py's helpers that build a RefereeError with a fixed reason: name -> reason."""
    out = {}
    tree = ast.parse((ROOT / "server/base/errors.py").read_text())
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and _name(node.func) == "RefereeError"
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
                out[fn.name] = node.args[1].value
    return out


def _reasons_on_move_paths() -> set[tuple[str, str]]:
    """(place, reason) of every reason name written in the code that can become a refusal."""
    helpers = _helper_reasons()
    found: set[tuple[str, str]] = set()
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("v1/"):
            continue
        on_path = rel in MOVE_PATH
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = _name(node.func)
            first = node.args[0] if node.args else None
            literal = first.value if isinstance(first, ast.Constant) and isinstance(
                first.value, str) else None
            # precondition(reason, ...) builds a status on any call (leagues' LEAGUE_STOPPED...);
            # on a move's path its reason becomes a refusal
            if literal is not None and (name in REFUSING_CALLS
                                        or (on_path and name == "precondition")):
                found.add((f"{rel}:{node.lineno}", literal))
            elif on_path and name in helpers:
                found.add((f"{rel}:{node.lineno}", helpers[name]))
            elif on_path and name == "RefereeError" and len(node.args) >= 2 and isinstance(
                    node.args[1], ast.Constant):
                found.add((f"{rel}:{node.lineno}", node.args[1].value))
    return found


def test_every_reason_a_move_can_be_refused_with_is_in_the_enum():
    """issue 31 item 3: a reason name outside Reason would reach the bot as REASON_UNSPECIFIED
    (or, now, INTERNAL): none of those the referee writes on a move's path is outside it."""
    found = _reasons_on_move_paths()
    names = {r for _, r in found}
    # the scan sees the move path's own reasons (a scan that finds nothing pins nothing)
    assert {"MALFORMED", "WRONG_GAME", "ILLEGAL_MOVE", "NOT_YOUR_TURN", "STALE_STATE",
            "MATCH_OVER", "NOT_OWNER"} <= names, names
    outside = sorted((place, r) for place, r in found
                     if r not in pb.Reason.keys() or r == "REASON_UNSPECIFIED")  # noqa: SIM118
    assert not outside, f"refusal reasons outside the Reason enum: {outside}"


def test_the_move_path_helpers_name_enum_reasons():
    """issue 31 item 3: the errors helpers a move's path raises (malformed, wrong_game,
    store_unavailable, internal, not_owner) carry a reason of the enum."""
    helpers = _helper_reasons()
    for name in ("malformed", "wrong_game", "store_unavailable", "internal", "not_owner"):
        assert helpers[name] in pb.Reason.keys(), name  # noqa: SIM118


@pytest.mark.parametrize("name", ["NO_SUCH_REASON", "RESOURCE_EXHAUSTED", "REASON_UNSPECIFIED",
                                  ""])
def test_a_refusal_never_carries_reason_unspecified(name):
    """issue 31 item 3: ``refusal()`` with a name outside the enum (a referee bug) sends
    INTERNAL, never REASON_UNSPECIFIED, and logs the bug."""
    with capture_logs() as logs:
        r = wire.refusal(name, "why", 7, "rid")
    assert r.reason == pb.INTERNAL
    assert (r.accepted, r.message, r.state_version, r.request_id) == (False, "why", 7, "rid")
    assert [e["event"] for e in logs] == ["refusal_reason_unknown"]


def test_a_known_reason_is_sent_as_it_is_and_not_logged():
    with capture_logs() as logs:
        for name in pb.Reason.keys():  # noqa: SIM118
            if name != "REASON_UNSPECIFIED":
                assert wire.refusal(name, "m", 1).reason == pb.Reason.Value(name)
    assert logs == []


def test_wrong_game_is_its_own_reason():
    """issue 31 item 4: a move of another game is refused WRONG_GAME (INVALID_ARGUMENT)."""
    err = errors.wrong_game("this match plays batavia, not goa")
    assert (err.code, err.reason) == (errors.grpc.StatusCode.INVALID_ARGUMENT, "WRONG_GAME")
