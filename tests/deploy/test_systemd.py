"""The systemd units of deploy/systemd (issue 37 item 2): `systemd-analyze verify` accepts each
(directives, sections, specifiers, the ExecStart binaries), and each keeps the hardening,
credential, restart and stop settings the referee's operation relies on.

verify needs the ExecStart binaries to exist: the units name the venv /opt/referee, so the test
verifies a copy whose /opt/referee/bin/ is this Python's own bin folder (where `referee` and
`referee-tournament` are installed).
"""
from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = sorted((ROOT / "deploy" / "systemd").glob("*.service"))
BIN = Path(sys.executable).parent

#: what every unit keeps: the service's own user, a read-only system, the token as a credential
HARDENING = {"DynamicUser": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
             "PrivateTmp": "yes", "NoNewPrivileges": "yes", "Restart": "on-failure",
             "KillSignal": "SIGTERM", "KillMode": "mixed"}


def _service(unit: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(unit.read_text())
    return dict(parser["Service"])


def test_units_are_there():
    assert {u.name for u in UNITS} == {"referee.service", "referee-cluster.service",
                                       "referee-league@.service"}


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_unit_keeps_its_hardening(unit: Path):
    service = _service(unit)
    for key, value in HARDENING.items():
        assert service.get(key) == value, f"{unit.name}: {key}={service.get(key)}"
    assert service["StateDirectory"] in {"referee", "referee-league"}
    # the admin token, copied for the service's user by a root step (not LoadCredential=,
    # which systemd 252 leaves to root under DynamicUser=), read from the state directory
    state = f"/var/lib/{service['StateDirectory']}"
    assert "LoadCredential" not in service
    assert service["ExecStartPre"].startswith("+/bin/sh -ec 'install -m 0400 ")
    assert '/etc/referee/admin.token "$$STATE_DIRECTORY/admin.token"' in service["ExecStartPre"]
    command = service["ExecStart"]
    assert f"--admin-token-file {state}/admin.token" in command
    assert "--admin-token " not in command and "REFEREE_ADMIN_TOKEN" not in unit.read_text()
    # the graceful stop fits: the cluster's supervisor gives nginx then the workers 10 s each
    assert int(service["TimeoutStopSec"]) >= 25


def test_systemd_analyze_verify(tmp_path: Path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("no systemd-analyze (Debian: systemd)")
    for name in ("referee", "referee-tournament"):
        assert (BIN / name).exists(), f"{name} is not installed beside {sys.executable}"
    copies = []
    for unit in UNITS:
        copy = tmp_path / unit.name
        copy.write_text(unit.read_text().replace("/opt/referee/bin/", f"{BIN}/"))
        copies.append(copy)
    # a template is verified through an instance of it
    league = tmp_path / "referee-league@.service"
    instance = tmp_path / "referee-league@open.service"
    league.rename(instance)
    copies[copies.index(league)] = instance
    proc = subprocess.run([analyze, "verify", "--man=no", *map(str, copies)],
                          capture_output=True, text=True, check=False, timeout=120)
    # verify reports problems of the units named (and of units they pull in, which are the
    # machine's: only lines about ours count)
    ours = [line for line in (proc.stdout + proc.stderr).splitlines()
            if any(c.name in line for c in copies)]
    assert proc.returncode == 0 and not ours, proc.stdout + proc.stderr
