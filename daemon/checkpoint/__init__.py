"""Checkpoint: the decisions, constraints and open questions of AI coding-agent sessions, kept."""

# The one place the version is written: pyproject.toml reads it (setuptools' dynamic version), and
# `checkpoint --version` and the daemon's serverInfo print it without importlib.metadata (40-50 ms
# of imports and a walk of sys.path at every start).
__version__ = "0.1.0"
