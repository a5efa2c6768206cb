"""Benchmarks, outside the installed package: each writes JSON and updates its section of
BENCHMARKS.md. Run as ``python -m benchmarks NAME [options]`` (``--help`` lists them)."""
