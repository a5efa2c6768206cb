"""Benchmarks: each writes JSON and updates its section of BENCHMARKS.md."""
