"""TLS: a referee serving a self-signed certificate; the SDK and the bot command trust it
with --ca-cert / TlsConfig(ca_file=...), and refuse a plaintext connection to it."""
from __future__ import annotations

import shutil
import subprocess

import pytest
from referee_client import AdminClient, RefereeError, TlsConfig
from referee_tournament.procs import LocalReferee

from .conftest import ROOT, bot_command, bot_env, server_available

pytestmark = [
    pytest.mark.skipif(not server_available(), reason="referee/server is not there yet"),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command"),
]


def self_signed(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=referee.test",
         "-addext", "subjectAltName=DNS:referee.test,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    return key, cert


def test_bot_plays_over_tls(tmp_path):
    key, cert = self_signed(tmp_path)
    server = LocalReferee(tmp_path / "data",
                          extra_args=("--tls-cert", str(cert), "--tls-key", str(key)))
    server.start()
    try:
        tls = TlsConfig(ca_file=str(cert))
        with AdminClient(server.address, server.admin_token, tls=tls) as admin:
            created = admin.create_match("batavia", 3, seed=8)
        plain = AdminClient(server.address, server.admin_token, timeout=3)
        with plain, pytest.raises(RefereeError):
            plain.list_games()  # plaintext to a TLS port fails
        procs = [
            subprocess.Popen(
                [*bot_command("random"), "--address", server.address, "--match",
                 created.match_id, "--ca-cert", str(cert), "--give-up-after", "20"],
                env={**bot_env(), "REFEREE_TOKEN": s.token}, cwd=ROOT,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            for s in created.seats
        ]
        for p in procs:
            out, _ = p.communicate(timeout=90)
            assert p.returncode == 0, out[-3000:]
            assert "game over" in out
    finally:
        server.stop()
