"""What machine a figure was measured on: its CPU, for ``make bench``'s ``machine`` and the SPRT
tables' ``machines`` (a figure of CPU time, or a table played at a second of CPU a move, reads
differently on a CPU half as fast)."""
from __future__ import annotations

import os
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name (Linux's ``/proc/cpuinfo``), or "" where it cannot be read."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def label() -> str:
    """The CPU and how many this process may use, e.g. "AMD EPYC, 2 CPUs"."""
    usable = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
              else os.cpu_count() or 0)
    return f"{cpu_model() or 'unknown CPU'}, {usable} CPU{'s' if usable != 1 else ''}"
