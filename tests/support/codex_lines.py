"""Codex rollout lines in the shapes docs/architecture.md ("Codex rollouts") describes, and rollout files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checkpoint.sources.codex import CodexReader

CODEX = CodexReader()
CODEX_ID = "0199bbbb-0000-7000-8000-000000000001"


def codex_line(kind: str, payload: dict[str, Any], ts: str = "2026-01-05T10:00:05.000Z") -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}, separators=(",", ":"))


def write_rollout(path: Path, *lines: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path
