"""Fixtures the daemon's server tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "queue.py").write_text("class Queue:\n    def put(self, job):\n        self.jobs.append(job)\n")
    return ws
