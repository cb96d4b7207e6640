"""The pre-edit check in the REAL Claude Code CLI with the plugin, against the fake model API: the
workspace decided "We'll use httpx instead of requests" (an earlier session, captured by the offline
extractor, accepted), and the model writes src/api.py with `import requests`. The model request after
the write carries the decision's id and the offending line from the PreToolUse hook; the edit itself
goes ahead (the hook never denies)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.agent_clis import ROOT, agent_cli, clean_env
from tests.support.agent_corpus import PlannedSession, capture, write_claude_session
from tests.support.cli_run import cli_env
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest

PLUGIN = ROOT / "claude-plugin"
VENV_BIN = Path(sys.executable).parent
DECISION = "We'll use httpx instead of requests because it supports async."


def test_claude_code_is_told_the_decision_and_the_line_its_edit_would_break(tmp_path: Path) -> None:
    claude = agent_cli("claude")
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    ws = tmp_path / "ws"
    for folder in (home, ws / "src"):
        folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    db = tmp_path / "data" / "checkpoint.db"
    write_claude_session(projects, PlannedSession("sess-earlier", str(ws), [DECISION]))
    capture(db, projects)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        [(item_id,)] = conn.execute("SELECT id FROM items").fetchall()
    accepted = subprocess.run([str(VENV_BIN / "checkpoint"), "accept", item_id], cwd=ws, capture_output=True,
                              text=True, timeout=60, env=cli_env(home, CHECKPOINT_DB=str(db)))
    assert accepted.returncode == 0, accepted.stderr
    api = ws / "src" / "api.py"
    requests: list[dict[str, Any]] = []

    def respond(request: MessageRequest) -> Any:
        body = request.body
        if not any(isinstance(t, dict) and t.get("name") == "Write" for t in body.get("tools") or []):
            return "A short answer."
        requests.append(body)
        if len(requests) == 1:
            return {"content": [{"type": "tool_use", "id": "toolu_write_1", "name": "Write",
                                 "input": {"file_path": str(api), "content": "import os\nimport requests\n"}}],
                    "stop_reason": "tool_use"}
        return "Written."

    with FakeAnthropic() as fake:
        fake.responder = respond
        env = clean_env(home, **fake.env(), CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=str(projects),
                        CHECKPOINT_EXTRACTOR="heuristic", CHECKPOINT_AGENT_CAPTURE="0", IS_SANDBOX="1")
        env["PATH"] = f"{VENV_BIN}{os.pathsep}{env['PATH']}"
        result = subprocess.run(
            [str(claude), "-p", "Write the API module.", "--model", "claude-haiku-4-5", "--plugin-dir",
             str(PLUGIN), "--permission-mode", "bypassPermissions"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=600,
        )
        assert result.returncode == 0, (result.stdout, result.stderr)

    assert len(requests) == 2, len(requests)
    added = json.dumps(requests[1]["messages"][len(requests[0]["messages"]):], ensure_ascii=False)
    assert f"`import requests` breaks decision {item_id}" in added
    assert "src/api.py, line 2 of the new text" in added
    assert api.read_text() == "import os\nimport requests\n"  # told, never denied
