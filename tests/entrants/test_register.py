"""`referee-bot register` (issue 19, item 2): an entrant registers a bot into a league with an
invite code and gets its token once, against a real referee (in-process)."""
from __future__ import annotations

import os
import stat
import subprocess
import time

from referee.v1 import referee_pb2 as pb

from .helpers import CLI, bots, invite, open_league, run_cli, set_state


def test_register_with_an_invite_file_writes_the_token_0600_and_prints_it_nowhere(
        server, tmp_path, monkeypatch, capsys):
    open_league(server)
    code_file = tmp_path / "invite"
    code_file.write_text(invite(server) + "\n")
    token_file = tmp_path / "alpha.token"
    code, out, err = run_cli(monkeypatch, capsys, [
        "register", "alpha", "--league", "spring", "--kind", "hosted", "--owner", "Ada",
        "--description", "greedy", "--invite-file", str(code_file), "--token-file",
        str(token_file), "--address", server.target])
    assert code == 0, err
    token = token_file.read_text().strip()
    assert len(token) == 64
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert token not in out + err and "0600" in err
    bot = bots(server)["alpha"]
    assert (bot.kind, bot.owner, bot.description) == (pb.BOT_KIND_HOSTED, "Ada", "greedy")


def test_register_reads_the_invite_from_stdin_and_prints_the_token_once(
        server, monkeypatch, capsys):
    open_league(server)
    code, out, err = run_cli(monkeypatch, capsys, [
        "register", "beta", "--league", "spring", "--address", server.target],
        stdin=invite(server) + "\n")
    assert code == 0, err
    assert len(out.strip()) == 64 and out.count("\n") == 1  # the token alone, for a pipe
    assert "shown this once" in err
    assert bots(server)["beta"].kind == pb.BOT_KIND_REMOTE


def test_an_open_league_needs_no_invite(server, monkeypatch, capsys):
    open_league(server, registration=pb.REGISTRATION_OPEN)
    code, out, err = run_cli(monkeypatch, capsys, [
        "register", "gamma", "--league", "spring", "--address", server.target])
    assert code == 0, err
    assert len(out.strip()) == 64


def test_refusals_say_what_is_wrong_and_register_nothing(server, tmp_path, monkeypatch,
                                                         capsys):
    open_league(server)
    once = invite(server, uses=1)

    def register(name, code, league="spring"):
        return run_cli(monkeypatch, capsys, ["register", name, "--league", league, "--address",
                                             server.target], stdin=code + "\n")

    assert register("first", once)[0] == 0
    result = register("second", once)
    assert result[0] == 1 and "refused the invite code: this invite code is used up" in result[2]
    result = register("second", "not-a-code")
    assert result[0] == 1 and "unknown invite code" in result[2]
    result = register("second", "")
    assert result[0] == 1 and "needs an invite code" in result[2]
    result = register("first", invite(server))
    assert result[0] == 1 and "the name first is taken" in result[2]
    result = register("second", invite(server), league="autumn")
    assert result[0] == 1 and "no league autumn on this referee" in result[2]
    stopped = invite(server)
    set_state(server, "spring", pb.LEAGUE_STOPPED)
    result = register("second", stopped)
    assert result[0] == 1 and "league spring is stopped" in result[2]
    assert set(bots(server)) == {"first"}


def test_an_existing_token_file_is_kept_unless_forced(server, tmp_path, monkeypatch, capsys):
    open_league(server, registration=pb.REGISTRATION_OPEN)
    token_file = tmp_path / "delta.token"
    token_file.write_text("someone's token\n")
    argv = ["register", "delta", "--league", "spring", "--token-file", str(token_file),
            "--address", server.target]
    code, _, err = run_cli(monkeypatch, capsys, argv)
    assert code == 2 and "exists (--force overwrites it)" in err
    assert token_file.read_text() == "someone's token\n" and "delta" not in bots(server)
    token_file.chmod(0o644)
    code, _, err = run_cli(monkeypatch, capsys, [*argv, "--force"])
    assert code == 0, err
    assert len(token_file.read_text().strip()) == 64
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


def test_a_refused_registration_leaves_no_token_file(server, tmp_path, monkeypatch, capsys):
    open_league(server)
    token_file = tmp_path / "eps.token"
    code, _, err = run_cli(monkeypatch, capsys, [
        "register", "eps", "--league", "spring", "--token-file", str(token_file), "--address",
        server.target], stdin="wrong\n")
    assert code == 1 and "invite code" in err
    assert not token_file.exists()


def _cmdline(pid: int) -> str:
    return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()


def test_the_invite_code_and_the_token_never_show_in_the_process_list(server, tmp_path):
    """What `ps` shows of register and upload (their command lines) holds neither secret:
    the code goes in on standard input, the token out to a 0600 file and back in from it."""
    open_league(server, registration=pb.REGISTRATION_INVITE)
    code = invite(server)
    token_file = tmp_path / "zeta.token"
    proc = subprocess.Popen(
        [CLI, "register", "zeta", "--league", "spring", "--kind", "hosted", "--token-file",
         str(token_file), "--address", server.target],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = [_cmdline(proc.pid)]
    time.sleep(0.5)  # it waits for the code on standard input
    seen.append(_cmdline(proc.pid))
    out, err = proc.communicate(code + "\n", timeout=60)
    assert proc.returncode == 0, err
    token = token_file.read_text().strip()
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text('runtime = "python"\ncommand = ["bot.py"]\n')
    (folder / "bot.py").write_text("print('hi')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REFEREE_")}
    up = subprocess.Popen([CLI, "upload", str(folder), "--token-file", str(token_file),
                           "--address", server.target], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    seen.append(_cmdline(up.pid))
    out2, err2 = up.communicate(timeout=60)
    assert up.returncode == 0, err2
    assert "version 1" in out2
    for line in seen:
        assert code not in line and token not in line, line
    assert token not in out + err + out2 + err2
