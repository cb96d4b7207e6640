"""The test tree: tiers (unit, server, e2e, properties) and what they share (support).

A package so that its modules have one name each (`tests.support.synth`), for pytest, mypy and the
scripts alike; pytest puts the repository root on sys.path (pyproject `pythonpath`), and scripts are
run from the root as modules (`python -m scripts.bench`)."""
