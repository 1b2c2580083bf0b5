"""The one check the agents' tests make of a match they played to its end: its record is
complete and ``referee replay verify`` replays it to the same result (OK)."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from referee_client import AdminClient


def verified_record(referee: Any, match_id: str, tmp_path: Path) -> str:
    """The finished match's record JSON, once it is complete and verifies."""
    from referee_tournament.procs import referee_command

    with AdminClient(referee.address, referee.admin_token) as admin:
        record = admin.record(match_id)
    assert record.complete
    path = tmp_path / f"record-{match_id}.json"
    path.write_text(record.record_json)
    out = subprocess.run([*referee_command(), "replay", "verify", str(path), "--data-dir",
                          str(referee.data_dir)], capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 0 and out.stdout.startswith("OK"), out.stdout + out.stderr
    return record.record_json
