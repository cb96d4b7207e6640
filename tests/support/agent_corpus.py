"""Small Claude Code transcripts whose sessions ran in chosen folders, with decisions and constraints
the offline heuristic extractor picks up, captured into a database by the real `checkpoint now`:
what the agent front ends (MCP server, hooks) read back."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from checkpoint import cli


@dataclass(frozen=True)
class PlannedSession:
    session_id: str
    cwd: str
    says: Sequence[str]  # assistant texts, one exchange each (the user asks, the assistant says it)


def write_claude_session(root: Path, planned: PlannedSession, day: int = 1) -> Path:
    """<root>/<slug>/<session>.jsonl in Claude Code's format: per text, a user prompt and an answer."""
    path = root / planned.cwd.replace("/", "-") / f"{planned.session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    env = {"sessionId": planned.session_id, "cwd": planned.cwd, "version": "2.1.328", "isSidechain": False,
           "userType": "external"}
    lines = []
    for i, text in enumerate(planned.says):
        ts = f"2026-11-{day:02d}T10:{i // 60:02d}:{i % 60:02d}.000Z"
        lines.append({**env, "type": "user", "uuid": f"{planned.session_id}-u{i}", "timestamp": ts,
                      "message": {"role": "user", "content": f"Go on with part {i}."}})
        lines.append({**env, "type": "assistant", "uuid": f"{planned.session_id}-a{i}", "timestamp": ts,
                      "message": {"id": f"msg-{planned.session_id}-{i}", "role": "assistant",
                                  "model": "claude-haiku-4-5", "content": [{"type": "text", "text": text}]}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def capture(db: Path, root: Path) -> None:
    """`checkpoint now` with the offline extractor, in this process, quietly."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["now", "--db", str(db), "--source", str(root), "--extractor", "heuristic", "--json",
                         "--concurrency", "1"])  # one chunk at a time: items are recorded in transcript order
    assert code == 0, f"checkpoint now exited {code}"
