"""Benchmarks: `python -m bench.run` (make bench)."""
