"""The referee's OCI image (issue 37 item 2), run with podman: a pair of the SDK's bots on this
machine plays a match against the container through a port published on 127.0.0.1, and the
record the container wrote into its volume verifies (signature, seed commitment, the bots'
receipts, the replay). Also: the referee runs as a non-root user, takes its admin token from a
mounted secret, keeps its data across a restart, and the image carries its labels.

Opt-in (``make test-image``, which builds the image first with ``make image``; CI does not run
it): building the image takes minutes. Run alone, the test reuses ``build/image/referee.oci.tar``
when it is newer than every source file, else builds it (as root, with mmdebstrap and buildah),
else skips and says why. podman keeps this test's images, volumes and secrets in a private store
under the test's temporary folder, and runs with the settings these machines need (root inside a
sandbox): runc, the cgroupfs manager, no default ulimits (crun fails on setrlimit there).
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from referee_client import check_record
from referee_client.bot import play
from referee_client.bots.random_bot import RandomBot

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "image"
ARCHIVE = OUT / "referee.oci.tar"
#: what the image is built from: the archive is fresh when newer than all of these
SOURCES = ("referee", "clients", "deploy/image", "proto", "pyproject.toml", "setup.py")
CONTAINERS_CONF = """\
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
"""
ADMIN = "image-test-admin-token"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("REFEREE_IMAGE_TEST") != "1",
                       reason="opt-in: `make test-image` (building the image takes minutes)"),
]


def _newest_source() -> float:
    newest = 0.0
    for name in SOURCES:
        path = ROOT / name
        files = [path] if path.is_file() else (
            p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
            and "v1" not in p.relative_to(ROOT).parts[:2])
        newest = max([newest, *(p.stat().st_mtime for p in files)])
    return newest


def _archive() -> Path:
    """`make image`'s archive when fresh, else built now, else a skip saying why."""
    if ARCHIVE.exists() and ARCHIVE.stat().st_mtime > _newest_source():
        return ARCHIVE
    missing = [c for c in ("mmdebstrap", "buildah") if shutil.which(c) is None]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"no fresh {ARCHIVE.relative_to(ROOT)} and cannot build one "
                    f"({'not root' if os.geteuid() else 'missing ' + ' '.join(missing)}): "
                    "run `make image` as root")
    proc = subprocess.run([str(ROOT / "deploy/image/build.sh"), str(OUT), sys.executable],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return ARCHIVE


class Podman:
    """podman with a private store and this machine's settings."""

    def __init__(self, base: Path):
        conf = base / "containers.conf"
        conf.write_text(CONTAINERS_CONF)
        self.env = {**os.environ, "CONTAINERS_CONF": str(conf)}
        self.base = [shutil.which("podman") or "podman", "--root", str(base / "root"),
                     "--runroot", str(base / "run"), "--storage-driver", "vfs"]

    def __call__(self, *args: str, check: bool = True, stdin: str | None = None) -> str:
        proc = subprocess.run([*self.base, *args], capture_output=True, text=True, env=self.env,
                              input=stdin, check=False, timeout=600)
        if check and proc.returncode != 0:
            raise AssertionError(f"podman {' '.join(args)}: {proc.stderr[-3000:]}")
        return proc.stdout.strip()


@pytest.fixture(scope="module")
def podman(tmp_path_factory: pytest.TempPathFactory) -> Podman:
    if shutil.which("podman") is None:
        pytest.skip("no podman (Debian: podman, runc; `make test-image` installs them as root)")
    pm = Podman(tmp_path_factory.mktemp("podman"))
    probe = subprocess.run([*pm.base, "info"], capture_output=True, text=True, env=pm.env,
                           check=False)
    if probe.returncode != 0:
        pytest.skip(f"podman cannot run on this machine: {probe.stderr.strip()[-500:]}")
    return pm


@pytest.fixture(scope="module")
def image(podman: Podman) -> str:
    archive = _archive()
    podman("load", "--quiet", "--input", str(archive))
    return (OUT / "referee.oci.name").read_text().strip()


def _port(podman: Podman, name: str) -> int:
    out = podman("port", name, "50051/tcp")  # 127.0.0.1:PORT
    return int(out.rsplit(":", 1)[1])


def _serving(podman: Podman, name: str, address: str) -> None:
    """Wait until the container's referee answers ListGames (it starts in a few seconds)."""
    deadline = time.monotonic() + 90
    while True:
        try:
            with grpc.insecure_channel(address) as channel:
                referee_pb2_grpc.RefereeStub(channel).ListGames(pb.ListGamesRequest(), timeout=2)
            return
        except grpc.RpcError:
            state = podman("inspect", "--format", "{{.State.Status}}", name)
            if state != "running" or time.monotonic() > deadline:
                logs = podman("logs", name, check=False)
                raise AssertionError(f"the container is {state}:\n{logs[-3000:]}") from None
            time.sleep(0.5)


def _run(podman: Podman, name: str, image: str) -> str:
    podman("run", "--detach", "--name", name, "--publish", "127.0.0.1::50051",
           "--volume", "referee-data:/var/lib/referee",
           "--secret", "referee_admin_token", image)
    address = f"127.0.0.1:{_port(podman, name)}"
    _serving(podman, name, address)
    return address


def test_image_plays_a_match_from_the_host(podman: Podman, image: str, tmp_path: Path):
    labels = json.loads(podman("image", "inspect", "--format", "{{json .Labels}}", image))
    assert labels["org.opencontainers.image.version"] == image.rsplit(":", 1)[1]
    assert labels["org.opencontainers.image.source"]
    token = tmp_path / "admin.token"
    token.write_text(ADMIN + "\n")
    podman("secret", "create", "referee_admin_token", str(token))
    podman("volume", "create", "referee-data")
    address = _run(podman, "referee", image)
    try:
        # the referee is not root, and its token is the secret's: none generated in the volume
        assert podman("exec", "referee", "id", "-u") == "10001"
        volume = Path(podman("volume", "inspect", "--format", "{{.Mountpoint}}",
                             "referee-data"))
        assert not (volume / "admin.token").exists()

        async def go() -> tuple[str, list]:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = referee_pb2_grpc.RefereeStub(channel)
                auth = (("authorization", f"Bearer {ADMIN}"),)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.CreateMatch(pb.CreateMatchRequest(game="batavia", seats=2),
                                           metadata=(("authorization", "Bearer wrong"),))
                assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
                made = await stub.CreateMatch(
                    pb.CreateMatchRequest(game="santa_maria", seats=2, seed=37), metadata=auth)
                overs = await asyncio.gather(*(
                    play(RandomBot(k), address, made.match_id, s.token)
                    for k, s in enumerate(made.seats)))
                return made.match_id, overs

        match_id, overs = asyncio.run(go())
        for over, stats in overs:
            assert over.match_id == match_id and stats.refused == 0
        record_file = volume / "records" / f"{match_id}.json"
        record = json.loads(record_file.read_text())
        for _over, stats in overs:
            assert check_record(record, stats.receipts) == []
        verify = subprocess.run(
            [sys.executable, "-m", "referee.cli", "replay", "verify", "--referee", address,
             "--require-signature", str(record_file)],
            capture_output=True, text=True, check=False, timeout=120)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        lines = verify.stdout.splitlines()
        assert any(line.startswith("OK ") for line in lines), verify.stdout
        assert any(line.strip().startswith("signature: OK") for line in lines), verify.stdout

        # a new container on the same volume serves the finished match from the store
        podman("stop", "--time", "30", "referee")
        assert podman("inspect", "--format", "{{.State.ExitCode}}", "referee") == "0"
        podman("rm", "referee")
        address = _run(podman, "referee", image)

        async def again() -> pb.GetRecordResponse:
            async with grpc.aio.insecure_channel(address) as channel:
                return await referee_pb2_grpc.RefereeStub(channel).GetRecord(
                    pb.GetRecordRequest(match_id=match_id),
                    metadata=(("authorization", f"Bearer {ADMIN}"),))

        assert json.loads(asyncio.run(again()).record_json)["moves"] == record["moves"]
    finally:
        podman("rm", "--force", "--time", "0", "referee", check=False)
