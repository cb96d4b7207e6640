"""The command's entry (checkpoint.startup): its imports are made with the cyclic collector held
back and frozen after; the collector's own state is left as it was found."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import gc, sys
if sys.argv[1] == "off":
    gc.disable()
from checkpoint.startup import long_lived_imports
with long_lived_imports():
    during = gc.isenabled()
    import checkpoint.pipeline
print(during, gc.isenabled(), gc.get_freeze_count() > 10_000)
"""


@pytest.mark.parametrize(("before", "after"), [("on", "True"), ("off", "False")])
def test_imports_wait_for_no_collection_and_are_frozen_after(before: str, after: str) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, before], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", after, "True"]


def test_the_command_runs_through_the_entry() -> None:
    done = subprocess.run([sys.executable, "-m", "checkpoint", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("checkpoint ")
