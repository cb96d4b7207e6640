"""Where the repository and the tests' committed data are, for a test module at any depth under tests/."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "tests" / "data"

# The pre-edit hook's budget in every process a test starts (tests/conftest.py sets it; the env
# builders that start from nothing add it): whether the hook answers must not depend on the machine's
# load. tests/e2e/agent/test_hooks.py tests the budget itself with one no call can meet.
HOOK_BUDGET = {"CHECKPOINT_PRE_EDIT_SECONDS": "120"}
