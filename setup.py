"""Generates the protocol code (``referee/v1``, what ``make proto`` makes) when a build starts
from a tree that has none, so ``pip install .`` from a fresh clone gives a working SDK; the rest
of the packaging is in pyproject.toml."""
from __future__ import annotations

from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
GENERATED = HERE / "referee" / "v1"


def generate_protocol() -> None:
    if (GENERATED / "referee_pb2.py").exists():
        return
    from grpc_tools import protoc  # a build requirement (pyproject.toml)

    protos = sorted(str(p) for p in (HERE / "proto").rglob("*.proto"))
    status = protoc.main(["grpc_tools.protoc", f"-I{HERE / 'proto'}", f"--python_out={HERE}",
                          f"--pyi_out={HERE}", f"--grpc_python_out={HERE}", *protos])
    if status != 0:
        raise SystemExit(f"protoc failed ({status}) on {protos}")


generate_protocol()
setup()
