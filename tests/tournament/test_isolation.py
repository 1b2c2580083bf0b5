"""The runner is a client: importing every module of it loads nothing of the referee but the
generated protocol modules (referee.v1.*_pb2, *_pb2_grpc)."""
from __future__ import annotations

import json
import subprocess
import sys

CODE = """
import importlib, json, pkgutil, sys
import referee_tournament
for m in pkgutil.iter_modules(referee_tournament.__path__):
    if m.name != "ray_backend":
        importlib.import_module("referee_tournament." + m.name)
print(json.dumps(sorted(n for n in sys.modules if n == "referee" or n.startswith("referee."))))
"""


def test_runner_loads_only_protocol_modules_of_the_referee():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         check=True, timeout=120)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    bad = [n for n in loaded if n not in ("referee", "referee.v1")
           and not (n.startswith("referee.v1.") and n.split(".")[-1].endswith(("_pb2",
                                                                                "_pb2_grpc")))]
    assert not bad, bad
