"""Kill the runner (SIGKILL) in the middle of a tournament, run the same command again: the
finished matches are not replayed, the interrupted ones are, the totals are right and no bot or
referee outlives the killed runner."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from .conftest import RANDOM, cli_command, run_cli, write_toml


def _status(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    try:
        con = sqlite3.connect(db, timeout=5)
        try:
            return dict(con.execute("SELECT status, COUNT(*) FROM matches GROUP BY status"))
        finally:
            con.close()
    except sqlite3.OperationalError:
        return {}


def _processes_mentioning(text: str) -> list[int]:
    """Processes whose command line or open files mention ``text`` (the referee's --data-dir;
    a bot's stdout/stderr is its log file in the results folder)."""
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fds = [os.readlink(fd) for fd in (p / "fd").iterdir()]
        except OSError:
            continue
        if text in cmd or any(text in f for f in fds):
            pids.append(int(p.name))
    return pids


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return f"{pid} (gone)"


def test_resume_after_kill(tmp_path):
    out = tmp_path / "res"
    toml = write_toml(tmp_path / "resume.toml", f"""
        name = "resume"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "a"
        command = "{RANDOM}"
        [[entrants]]
        name = "b"
        command = "{RANDOM}"
        [[entrants]]
        name = "c"
        command = "{RANDOM}"
        [format]
        seating = "rotate"
        rounds = 2
        [run]
        concurrency = 2
    """)
    db = out / "tournament.sqlite"
    proc = subprocess.Popen([*cli_command(), "run", str(toml), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Wait (the bound is generous: no time is asserted) for a moment with two matches done,
        # one running and its bots up: the runner, its referee and a bot in flight, so the
        # check below has processes to see. The bots are counted in the same moment: checked
        # once afterwards, a match marked running whose bots had not started yet (or had just
        # exited) failed the test on a loaded machine.
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            st = _status(db)
            if (st.get("done", 0) >= 2 and st.get("running", 0) >= 1
                    and len(_processes_mentioning(str(out))) >= 3):
                break
            assert proc.poll() is None, "the runner finished before it could be interrupted"
            time.sleep(0.05)
        else:
            raise AssertionError(f"no progress: {_status(db)}, processes "
                                 f"{[_cmdline(p) for p in _processes_mentioning(str(out))]}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    before = _status(db)
    assert before.get("running", 0) >= 1 and before.get("done", 0) >= 2
    con = sqlite3.connect(db)
    done_before = dict(con.execute("SELECT idx, match_id FROM matches WHERE status='done'"))
    running_before = [r[0] for r in con.execute("SELECT idx FROM matches WHERE status='running'")]
    con.close()

    # nothing the runner started survives it (parent-death signal)
    deadline = time.monotonic() + 60  # a bound on the wait, not a timing assertion
    while _processes_mentioning(str(out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = _processes_mentioning(str(out))
    assert survivors == [], [_cmdline(p) for p in survivors]

    again = run_cli("run", str(toml), "--no-progress", timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming" in again.stderr
    data = json.loads((out / "results.json").read_text())
    assert data["status"] == {"done": 6}
    assert sum(e["matches"] for e in data["leaderboard"]) == 6 * 3  # 3 entrants at every match
    con = sqlite3.connect(db)
    after = {r[0]: (r[1], r[2]) for r in con.execute("SELECT idx, match_id, attempts FROM matches")}
    sessions = con.execute("SELECT value FROM meta WHERE key='sessions'").fetchone()[0]
    con.close()
    assert sessions == "2"
    for idx, match_id in done_before.items():
        assert after[idx] == (match_id, 1)  # finished matches were not replayed
    for idx in running_before:
        assert after[idx][1] == 2  # in-flight matches were played again
    assert len(list((out / "records").glob("*.json"))) == 6


def test_sigterm_stops_cleanly_and_leaves_nothing_running(tmp_path):
    out = tmp_path / "res"
    toml = write_toml(tmp_path / "term.toml", f"""
        name = "term"
        output = "{out}"
        [game]
        name = "batavia"
        seats = 3
        [[entrants]]
        name = "a"
        command = "{RANDOM} --delay-ms 20"
        [[entrants]]
        name = "b"
        command = "{RANDOM}"
        [format]
        seating = "rotate"
        rounds = 2
        [run]
        concurrency = 2
    """)
    db = out / "tournament.sqlite"
    proc = subprocess.Popen([*cli_command(), "run", str(toml), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while _status(db).get("running", 0) < 1:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert "resume" in err
    st = _status(db)
    assert st.get("running", 0) == 0 and st.get("pending", 0) >= 1  # in flight -> pending
    assert (out / "results.json").is_file()  # partial report written
    deadline = time.monotonic() + 60  # a bound on the wait, not a timing assertion
    while _processes_mentioning(str(out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_mentioning(str(out)) == []
