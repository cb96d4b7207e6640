"""The real public transcripts committed under tests/data/samples/, and where the larger real corpus kept
outside the repository is."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.paths import DATA_DIR, REPO_ROOT

SAMPLES = DATA_DIR / "samples"
CLAUDE_SAMPLES = sorted((SAMPLES / "claude").glob("*.jsonl"))
CODEX_SAMPLES = sorted((SAMPLES / "codex").glob("*.jsonl"))
# The larger real corpus the project keeps beside its repositories (../shared/samples/real), where
# this checkout has it; CHECKPOINT_REAL_SAMPLES names it elsewhere (a worktree).
REAL = Path(os.environ.get("CHECKPOINT_REAL_SAMPLES") or REPO_ROOT.parent / "shared" / "samples" / "real")
