"""A temp HOME holding a Claude Code project and a Codex sessions folder (the default roots) for the real
`checkpoint` process, records whose every turn plants a decision ("We'll use marker-good-NN ..."), and
the problems the process reports about a file's line (status --json, stderr)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli_run import Result, cli_env, item_markers, run

SESSION = "0bad1a9e-0000-4000-8000-00000000cafe"
CODEX_SESSION = "0bad1a9e-0000-4000-8000-0000000c0de0"
MAX_LINE = 16 << 20  # the default CHECKPOINT_MAX_LINE_BYTES
TAIL = "re-read from the start (turns already stored are kept, not duplicated)"


def marker(n: int) -> str:
    return f"marker-good-{n:02d}"


def claude_record(n: int, text: str | None = None) -> dict[str, Any]:
    # Texts of different lengths, so that "half the file" falls inside a line.
    return {
        "type": "user", "uuid": f"00000000-0000-4000-8000-{n:012d}", "parentUuid": None, "sessionId": SESSION,
        "cwd": "/home/dev/bad", "timestamp": f"2026-01-05T10:00:{n:02d}.000Z",
        "message": {"role": "user", "content": text or f"We'll use {marker(n)} for the parser layer.{' ok' * n}"},
    }


def codex_record(n: int) -> dict[str, Any]:
    return {"timestamp": f"2026-01-05T10:00:{n:02d}.000Z", "type": "response_item", "payload": {
        "type": "message", "role": "user" if n % 2 else "assistant",
        "content": [{"type": "input_text", "text": f"We'll use {marker(n)} for the cache layer."}]}}


def line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Home:
    """A temp HOME with a Claude Code project (and a Codex sessions dir): the default roots."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.path = self.home / ".claude" / "projects" / "-home-dev-bad" / f"{SESSION}.jsonl"
        self.codex_path = (self.home / ".codex" / "sessions" / "2026" / "01" / "05"
                           / f"rollout-2026-01-05T10-00-00-{CODEX_SESSION}.jsonl")
        self.path.parent.mkdir(parents=True)
        self.codex_path.parent.mkdir(parents=True)
        self.env = cli_env(self.home)

    def cli(self, *args: str, measure: Path | None = None) -> Result:
        return run(list(args), self.env, measure=measure)

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = self.cli("status", "--json").check().json()
        return status

    def markers(self) -> list[str]:
        items = self.cli("items", "--json").check().json()["items"]
        return sorted(m for _, kind, m in item_markers(items) if kind == "decision")

    def assert_captured(self, numbers: list[int], turns: int | None = None) -> dict[str, Any]:
        """Exactly these planted decisions, once each; every turn captured, none pending or failed."""
        status = self.status()
        n = len(numbers) if turns is None else turns
        assert status["totals"] == {"turns": n, "captured": n, "pending": 0, "failed": 0}
        assert self.markers() == sorted(marker(i) for i in numbers)
        return status


def problems_at(status: dict[str, Any], path: Path, line_no: int) -> list[str]:
    """The messages status --json holds for this file and line."""
    return [p["message"] for p in status["problems"] if p["path"] == str(path) and p["line"] == line_no]


def problem(status: dict[str, Any], path: Path, line_no: int) -> str:
    """The one message status --json holds for this file and line."""
    found = problems_at(status, path, line_no)
    assert len(found) == 1, status["problems"]
    return found[0]


def warning(result: Result, path: Path, line_no: int) -> str:
    """The one warning on stderr for this file and line, without its prefix."""
    prefix = f"warning: {path}:{line_no}: "
    found = [w[len(prefix):] for w in result.err.splitlines() if w.startswith(prefix)]
    assert len(found) == 1, result.err
    return found[0]
