"""The pre-edit reminder in the REAL Claude Code CLI (pinned, scripts/install-agent-clis.sh) with the
plugin (`--plugin-dir claude-plugin`), against the fake model API on 127.0.0.1, HOME in a temp dir,
`checkpoint` on PATH from this venv.

A decision about store.py was captured from an earlier session of the workspace. In one `claude -p`
run the fake model writes store.py, then other.py, then store.py nineteen more times (one Write per
model turn). The model request after the first write carries the decision's text from the PreToolUse
hook; the one after other.py's write carries no decision; and over the twenty writes of store.py the
decision's text reaches the model once (later writes get a short "still applies")."""

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
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest

PLUGIN = ROOT / "claude-plugin"
VENV_BIN = Path(sys.executable).parent
DECISION = "We'll keep store.py free of network calls because the tests run offline."
OTHER = "We'll use tabs in the Makefile because make needs them."
STORE_WRITES = 20


def _messages_text(body: dict[str, Any], start: int = 0) -> str:
    return json.dumps(body.get("messages", [])[start:], ensure_ascii=False)


def test_the_agent_is_told_the_decision_about_a_file_before_it_edits_it_once(tmp_path: Path) -> None:
    claude = agent_cli("claude")
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    ws = tmp_path / "ws"
    for folder in (home, ws / "src"):
        folder.mkdir(parents=True)
    db = tmp_path / "data" / "checkpoint.db"
    write_claude_session(projects, PlannedSession("sess-earlier", str(ws), [DECISION, OTHER]))
    capture(db, projects)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        # the offline extractor keeps the sentence up to its "because"
        assert {s for (s,) in conn.execute("SELECT statement FROM items")} >= {
            "We'll keep store.py free of network calls", "We'll use tabs in the Makefile"}

    plan = [ws / "src" / "store.py", ws / "src" / "other.py"] + [ws / "src" / "store.py"] * (STORE_WRITES - 1)
    agent_requests: list[dict[str, Any]] = []

    def respond(request: MessageRequest) -> Any:
        body = request.body
        if not any(isinstance(t, dict) and t.get("name") == "Write" for t in body.get("tools") or []):
            return "A short answer."  # a side request of Claude Code's (a title, a summary)
        agent_requests.append(body)
        n = len(agent_requests)
        if n <= len(plan):
            return {"content": [{"type": "tool_use", "id": f"toolu_write_{n}", "name": "Write",
                                 "input": {"file_path": str(plan[n - 1]), "content": f"VALUE = {n}\n"}}],
                    "stop_reason": "tool_use"}
        return "All written."

    with FakeAnthropic() as fake:
        fake.responder = respond
        env = clean_env(home, **fake.env(), CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=str(projects),
                        CHECKPOINT_EXTRACTOR="heuristic", IS_SANDBOX="1")
        env["PATH"] = f"{VENV_BIN}{os.pathsep}{env['PATH']}"
        result = subprocess.run(
            [str(claude), "-p", "Write the files.", "--model", "claude-haiku-4-5", "--plugin-dir", str(PLUGIN),
             "--permission-mode", "bypassPermissions"],
            cwd=ws, env=env, capture_output=True, text=True, timeout=600,
        )
        assert result.returncode == 0, (result.stdout, result.stderr)

    problems = db.parent / (db.name + ".agent") / "problems.jsonl"
    assert not problems.exists(), problems.read_text()
    assert len(agent_requests) == len(plan) + 1, len(agent_requests)
    # What each write added to the conversation: the messages after the previous request's.
    added = [_messages_text(agent_requests[i], len(agent_requests[i - 1].get("messages", [])))
             for i in range(1, len(agent_requests))]
    assert "keep store.py free of network calls" in added[0] and "Checkpoint context:" in added[0]
    assert '\\"src/store.py\\", the file about to be edited' in added[0]  # the path quoted, as data
    assert "Checkpoint context:" not in added[1] and "free of network calls" not in added[1]  # other.py
    assert "free of network calls" not in "".join(added[2:])
    assert "Still applies, shown earlier in this session" in added[2]
    # The whole conversation at the end: the decision once from the reminders (and once in the
    # session-start context, in the first message, which also says reminders come)
    first, *rest = agent_requests[-1]["messages"]
    assert "Checkpoint repeats the decisions and constraints recorded about that file" in json.dumps(first)
    assert json.dumps(rest).count("free of network calls") == 1
    assert "tabs in the Makefile" not in "".join(added)  # about the Makefile, not these files
