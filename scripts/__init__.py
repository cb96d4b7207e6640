"""Benchmarks and measurements, run from the repository root as modules: `python -m scripts.bench`."""
