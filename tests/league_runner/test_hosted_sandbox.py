"""Issue 19, quality bar: "a bot that reads the token of another [is] contained". Two hosted
versions run at once the way the league starts them (the league's match job, the runner's
sandboxed start); the first tries to read the second's files and token, the league's database
and log, and the environment of every process it can see. It gets its own folder and its own
seat token only."""
from __future__ import annotations

import asyncio
import io
import tarfile
import textwrap
from pathlib import Path

import pytest
from referee_tournament.league import hosted
from referee_tournament.league.config import parse
from referee_tournament.league.serve import LeagueRunner
from referee_tournament.play import _Bot, _end_bots, start_seat_bot
from referee_tournament.sandbox import unavailable_reason

pytestmark = pytest.mark.skipif(unavailable_reason() is not None,
                                reason=f"no sandbox here: {unavailable_reason()}")

SNOOP = textwrap.dedent('''
    import glob, os, sys, time
    def read(p):
        try:
            with open(p, "rb") as f:
                return f.read()
        except OSError as exc:
            return type(exc).__name__.encode()
    other, out = sys.argv[1], sys.argv[2]
    print("own", os.environ.get("REFEREE_TOKEN"))
    print("admin", os.environ.get("REFEREE_ADMIN_TOKEN"))
    print("other_file", read(other + "/bot.py")[:40])
    print("db", read(out + "/league.sqlite")[:40])
    print("log", read(out + "/league.log")[:40])
    print("other_log", read(out + "/bots/00001-seat1-victim@1.log")[:40])
    for env in glob.glob("/proc/[0-9]*/environ"):
        data = read(env)
        print("environ", env, b"victim-token" in data)
    print("listing", sorted(os.listdir(os.path.dirname(os.getcwd()))))
    print("done", flush=True)
''')
VICTIM = "import time\ntime.sleep(30)\n"


def _archive(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            data = text.encode()
            info.size, info.mode = len(data), 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_a_hosted_bot_cannot_read_another_bots_files_or_token(tmp_path):
    out = tmp_path / "league-x"
    sock = tmp_path / "referee.sock"
    sock.write_text("")  # stands for the referee's socket: only bound into the sandbox
    cfg = parse({"league": {"name": "x"}, "games": [{"name": "batavia", "seats": 2}],
                 "referee": {"unix_socket": str(sock)}})
    runner = LeagueRunner(cfg, "admin-secret", out=out)
    runner.log.info("league_open", note="victim-token never logged")  # something to read
    snoop_dir, victim_dir = out / "hosted" / "snoop" / "v1", out / "hosted" / "victim" / "v1"
    hosted.unpack(_archive({"bot.py": SNOOP}), snoop_dir, max_bytes=1 << 20, max_files=10)
    hosted.unpack(_archive({"bot.py": VICTIM, "secret.txt": "victim's own"}), victim_dir,
                  max_bytes=1 << 20, max_files=10)
    snoop_cmd = hosted.command(snoop_dir, "python")
    snoop_cmd += [str(victim_dir), str(out)]
    victim_cmd = hosted.command(victim_dir, "python")
    job = runner._job(1, cfg.games[0], ["snoop@1", "victim@1"], 1,
                      {0: (snoop_cmd, str(snoop_dir)), 1: (victim_cmd, str(victim_dir))})
    assert job.sandboxes[0] and job.sandboxes[1] and job.seat_bots == ["", ""]

    async def go() -> str:
        bots = [_Bot(0, "snoop@1", out / "bots" / "00001-seat0-snoop@1.log"),
                _Bot(1, "victim@1", out / "bots" / "00001-seat1-victim@1.log")]
        await start_seat_bot(job, bots[1], "m1", "victim-token")
        await asyncio.sleep(0.5)
        await start_seat_bot(job, bots[0], "m1", "snoop-token")
        assert bots[0].waiter is not None
        await asyncio.wait_for(bots[0].waiter, 60)
        await _end_bots(bots, 0.0)
        return bots[0].log_path.read_text()

    try:
        text = asyncio.run(go())
    finally:
        runner.store.close()
        runner.logf.close()
    assert "done" in text, text
    lines = dict(line.split(" ", 1) for line in text.splitlines() if " " in line
                 and not line.startswith("environ"))
    assert lines["own"] == "snoop-token"  # its own seat token, in $REFEREE_TOKEN
    assert lines["admin"] == "None"
    for what in ("other_file", "db", "log", "other_log"):
        assert "Error" in lines[what], (what, lines[what])  # not there at all
    assert "victim-token" not in text.replace("b'victim-token'", "")
    assert all(line.endswith("False") for line in text.splitlines() if line.startswith("environ"))
    assert lines["listing"] == "['v1']"  # its own version folder, nothing beside it
    assert Path(victim_dir / "secret.txt").read_text() == "victim's own"
