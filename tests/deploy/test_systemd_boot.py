"""deploy/systemd's units started under a real systemd (issue 37 item 2): the image built with
Debian's systemd (``SYSTEMD=1 deploy/image/build.sh``) boots /sbin/init as PID 1 in a podman
container; referee.service is copied in as the operator guide installs it (the unit in
/etc/systemd/system, the admin token in /etc/referee/admin.token, root's, mode 0600), started,
plays a match with the SDK's bots, shows its hardening in ``systemctl show`` (a dynamic user
owns the state directory) and, after a restart, still serves the finished match from the store.

Opt-in like the image test (``make test-systemd``, ``REFEREE_IMAGE_TEST=1``): building the image
takes minutes. The container is ``--privileged`` (this test only): without it systemd boots but
every hardened unit fails at start with status 226/NAMESPACE (it cannot set up the mount
namespace of ProtectSystem/PrivateTmp/DynamicUser in an unprivileged container here).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.deploy.test_image import ROOT, Podman, built_archive

OUT = ROOT / "build" / "image"
ARCHIVE = OUT / "referee-systemd.oci.tar"
ADMIN = "systemd-test-admin-token"
NAME = "referee-systemd"
#: played inside the container with the image's venv: the unit listens on 127.0.0.1 only
PLAY = """
import asyncio, sys, grpc
from referee_client.bot import play
from referee_client.bots.random_bot import RandomBot
from referee.v1 import referee_pb2 as pb, referee_pb2_grpc

async def main():
    address = "127.0.0.1:50051"
    async with grpc.aio.insecure_channel(address) as channel:
        stub = referee_pb2_grpc.RefereeStub(channel)
        made = await stub.CreateMatch(pb.CreateMatchRequest(game="santa_maria", seats=2, seed=37),
                                      metadata=(("authorization", "Bearer " + sys.argv[1]),))
    overs = await asyncio.gather(*(play(RandomBot(k), address, made.match_id, s.token)
                                   for k, s in enumerate(made.seats)))
    assert all(stats.refused == 0 for _o, stats in overs)
    print(made.match_id)

asyncio.run(main())
"""
RECORD = """
import sys, grpc
from referee.v1 import referee_pb2 as pb, referee_pb2_grpc
with grpc.insecure_channel("127.0.0.1:50051") as channel:
    print(referee_pb2_grpc.RefereeStub(channel).GetRecord(
        pb.GetRecordRequest(match_id=sys.argv[2]), timeout=10,
        metadata=(("authorization", "Bearer " + sys.argv[1]),)).record_json)
"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("REFEREE_IMAGE_TEST") != "1",
                       reason="opt-in: `make test-systemd` (building the image takes minutes)"),
]


def _archive() -> Path:
    """The systemd image's archive when fresh, else built now, else a skip saying why."""
    return built_archive(ARCHIVE, "make test-systemd", {"SYSTEMD": "1"})
    missing = [c for c in ("mmdebstrap", "buildah") if shutil.which(c) is None]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"no fresh {ARCHIVE.relative_to(ROOT)} and cannot build one "
                    f"({'not root' if os.geteuid() else 'missing ' + ' '.join(missing)}): "
                    "run `make test-systemd` as root")
    proc = subprocess.run([str(ROOT / "deploy/image/build.sh"), str(OUT), sys.executable],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "SYSTEMD": "1"})
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return ARCHIVE


@pytest.fixture(scope="module")
def booted(tmp_path_factory: pytest.TempPathFactory):
    if shutil.which("podman") is None:
        pytest.skip("no podman (Debian: podman, runc; `make test-image` installs them as root)")
    podman = Podman(tmp_path_factory.mktemp("podman"))
    archive = _archive()
    podman("load", "--quiet", "--input", str(archive))
    image = (OUT / "referee-systemd.oci.name").read_text().strip()
    podman("run", "--detach", "--name", NAME, "--privileged", "--systemd=always",
           "--user", "root", "--entrypoint", "/sbin/init", image)
    try:
        deadline = time.monotonic() + 120
        while True:
            state = podman("exec", NAME, "systemctl", "is-system-running", check=False)
            if state in ("running", "degraded"):
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"systemd did not boot ({state}):\n"
                                     + podman("logs", NAME, check=False)[-3000:])
            time.sleep(0.5)
        yield podman
    finally:
        podman("rm", "--force", "--time", "0", NAME, check=False)


def _sh(podman: Podman, script: str) -> str:
    return podman("exec", NAME, "sh", "-ec", script)


def _start(podman: Podman, unit: str) -> None:
    """Start (or restart) a unit and wait until it is active and its gRPC port answers."""
    podman("exec", NAME, "systemctl", "restart", unit, check=False)
    deadline = time.monotonic() + 90
    while True:
        active = podman("exec", NAME, "systemctl", "is-active", unit, check=False)
        if active == "active" and podman(
                "exec", NAME, "/opt/referee/bin/python", "-c",
                "import socket; socket.create_connection(('127.0.0.1', 50051), 2); print('up')",
                check=False) == "up":
            return
        if active == "failed" or time.monotonic() > deadline:
            journal = podman("exec", NAME, "journalctl", "--no-pager", "-n", "60", "-u", unit,
                             check=False)
            # (found by this test: bookworm's systemd 252 leaves the credential folder root's
            # under DynamicUser=, systemd issue 24291; the units' ExecStartPre=+ step hands the
            # service's user a copy, and without it this start fails with Permission denied)
            raise AssertionError(f"{unit} is {active}:\n{journal}")
        time.sleep(0.5)


def _install(podman: Podman, unit: str) -> None:
    """The unit and the admin token installed as docs/organizer/operations.md says."""
    podman("exec", "-i", NAME, "sh", "-ec", f"cat > /etc/systemd/system/{unit}",
           stdin=(ROOT / "deploy/systemd" / unit).read_text())
    _sh(podman, f"install -d -m 0755 /etc/referee && umask 077 && "
                f"printf '%s\\n' '{ADMIN}' > /etc/referee/admin.token")
    podman("exec", NAME, "systemctl", "daemon-reload")


def _stop(podman: Podman, unit: str) -> None:
    """Stop the unit; it must end inactive (a stop), not failed (its journal says why)."""
    podman("exec", NAME, "systemctl", "stop", unit)
    assert podman("exec", NAME, "systemctl", "is-active", unit, check=False) == "inactive", \
        podman("exec", NAME, "journalctl", "--no-pager", "-n", "40", "-u", unit, check=False)


def _show(podman: Podman, unit: str, properties: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in podman(
        "exec", NAME, "systemctl", "show", unit, "--property", properties).splitlines())


def test_referee_service_under_systemd(booted: Podman):
    podman = booted
    _install(podman, "referee.service")
    _start(podman, "referee.service")

    show = _show(podman, "referee.service",
                 "DynamicUser,ProtectSystem,NoNewPrivileges,PrivateTmp,StateDirectory,MainPID,User")
    assert show["DynamicUser"] == "yes" and show["ProtectSystem"] == "strict"
    assert show["NoNewPrivileges"] == "yes" and show["StateDirectory"] == "referee"
    pid = show["MainPID"]
    uid = _sh(podman, f"stat -c %u /proc/{pid}")
    assert uid != "0"
    # the state directory (DynamicUser puts it under /var/lib/private) is the dynamic user's
    assert _sh(podman, "stat -L -c '%u %a' /var/lib/referee") == f"{uid} 700"
    assert _sh(podman, "getent passwd " + uid).split(":")[0] == "referee"
    # the admin token it reads: its user's own copy of the credential, readable by it alone
    assert _sh(podman, "stat -L -c '%u %a' /var/lib/referee/admin.token") == f"{uid} 400"

    match_id = podman("exec", NAME, "/opt/referee/bin/python", "-c", PLAY, ADMIN)
    record = json.loads(_sh(podman, f"cat /var/lib/referee/records/{match_id}.json"))
    assert record["moves"]

    # a restart keeps the state directory: the finished match is served from the store
    _start(podman, "referee.service")
    again = json.loads(podman("exec", NAME, "/opt/referee/bin/python", "-c", RECORD, ADMIN,
                              match_id))
    assert again["moves"] == record["moves"]


def test_referee_cluster_service_under_systemd(booted: Podman):
    """referee-cluster.service (instead of referee.service: it conflicts with it) starts its
    supervisor, two workers and nginx as its dynamic user, serves a match through nginx, and
    stops them all with the unit."""
    podman = booted
    _install(podman, "referee-cluster.service")
    _start(podman, "referee-cluster.service")
    assert podman("exec", NAME, "systemctl", "is-active", "referee.service",
                  check=False) != "active"  # Conflicts=

    show = _show(podman, "referee-cluster.service",
                 "DynamicUser,ProtectSystem,NoNewPrivileges,MainPID")
    assert show["DynamicUser"] == "yes" and show["ProtectSystem"] == "strict"
    assert show["NoNewPrivileges"] == "yes"
    uid = _sh(podman, f"stat -c %u /proc/{show['MainPID']}")
    assert uid != "0"
    # every process of the unit (supervisor, workers, nginx) is its user's
    procs = _sh(podman, "for p in /proc/[0-9]*; do grep -qs 'referee-cluster.service' "
                        "$p/cgroup && echo ${p#/proc/}; done; true").split()
    owners = {_sh(podman, f"stat -c %u /proc/{p}") for p in procs}
    commands = [_sh(podman, f"tr '\\0' ' ' < /proc/{p}/cmdline") for p in procs]
    assert owners == {uid}, commands
    assert sum("--shard" in c for c in commands) == 2, commands
    assert any(c.startswith("nginx") or "/nginx " in c for c in commands), commands

    match_id = podman("exec", NAME, "/opt/referee/bin/python", "-c", PLAY, ADMIN)
    record = json.loads(podman("exec", NAME, "/opt/referee/bin/python", "-c", RECORD, ADMIN,
                               match_id))
    assert record["moves"] and record["result"]

    _stop(podman, "referee-cluster.service")


LEAGUE = """\
[league]
name = "open"
registration = "open"

[referee]
address = "127.0.0.1:50051"

[[games]]
name = "batavia"
seats = 3
"""
GET_LEAGUE = """
import sys, grpc
from referee.v1 import referee_pb2 as pb, referee_pb2_grpc
with grpc.insecure_channel("127.0.0.1:50051") as channel:
    got = referee_pb2_grpc.RefereeStub(channel).GetLeague(
        pb.GetLeagueRequest(name="open"), timeout=10,
        metadata=(("authorization", "Bearer " + sys.argv[1]),))
    print(got.name, pb.LeagueState.Name(got.state))
"""


def test_referee_league_service_under_systemd(booted: Podman):
    """One referee-league@ instance beside referee.service: it runs as its own dynamic user,
    opens its league on the referee (the admin token copied for it as for the referee), keeps
    its run folder in its state directory, and stops with the unit."""
    podman = booted
    _install(podman, "referee.service")
    _start(podman, "referee.service")
    _install(podman, "referee-league@.service")
    _sh(podman, "install -d -m 0755 /etc/referee/leagues")
    podman("exec", "-i", NAME, "sh", "-ec", "cat > /etc/referee/leagues/open.toml",
           stdin=LEAGUE)
    _start(podman, "referee-league@open.service")
    deadline = time.monotonic() + 60
    while "league_open" not in (journal := podman(
            "exec", NAME, "journalctl", "--no-pager", "-u", "referee-league@open.service",
            check=False)):
        assert time.monotonic() < deadline, journal[-3000:]
        time.sleep(0.5)
    assert podman("exec", NAME, "/opt/referee/bin/python", "-c", GET_LEAGUE,
                  ADMIN).split()[0] == "open"

    show = _show(podman, "referee-league@open.service",
                 "DynamicUser,ProtectSystem,NoNewPrivileges,MainPID,StateDirectory")
    assert show["DynamicUser"] == "yes" and show["ProtectSystem"] == "strict"
    assert show["NoNewPrivileges"] == "yes" and show["StateDirectory"] == "referee-league"
    uid = _sh(podman, f"stat -c %u /proc/{show['MainPID']}")
    assert uid not in ("0", _sh(podman, "stat -L -c %u /var/lib/referee"))  # a user of its own
    assert _sh(podman, "stat -L -c '%u %a' /var/lib/referee-league/admin.token") == f"{uid} 400"
    assert _sh(podman, "stat -L -c %u /var/lib/referee-league/open") == uid

    _stop(podman, "referee-league@open.service")
