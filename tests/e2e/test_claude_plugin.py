"""The plugin in claude-plugin/, loaded by the REAL Claude Code CLI (pinned, scripts/install-agent-clis.sh)
with `--plugin-dir`, against the fake API on 127.0.0.1 (never the live API), HOME in a temp dir,
`checkpoint` on PATH from this venv, the database in the temp dir.

After `checkpoint now` over sessions run in a workspace folder (and in another workspace), `claude -p`
started in that folder:
- sends a first model request that holds that workspace's decisions, and none of the other's
  (the SessionStart hook's context);
- when the fake model calls the search_decisions tool (as a model does: Claude Code 2.1.328 defers MCP
  tools, so first ToolSearch loads its schema, then the call), the tool result in the next request
  holds the item (compact: id, statement, state, files; the plugin's MCP server);
- the Stop hook leads to the new session being captured (the database is polled);
- and Checkpoint's own context and answer, which Claude Code writes into that new transcript, are
  left out by the reader (policy `checkpoint_context`, counted), never extracted as new items.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_clis import ROOT, agent_cli, clean_env
from tests.support.agent_corpus import PlannedSession, capture, write_claude_session
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest

PLUGIN = ROOT / "claude-plugin"
LAUNCHER = "${CLAUDE_PLUGIN_ROOT}/bin/checkpoint-launch"  # as the plugin's files say it
VENV_BIN = Path(sys.executable).parent
# The plugin's MCP server is "plugin:checkpoint:checkpoint" to Claude Code, so its tools are named so;
# `claude mcp add checkpoint -- checkpoint mcp` would make them mcp__checkpoint__<tool>.
TOOL = "mcp__plugin_checkpoint_checkpoint__search_decisions"


def request_text(body: dict[str, Any]) -> str:
    """Every text the request carries to the model (system, messages, tool results), as one string."""
    return json.dumps({"system": body.get("system"), "messages": body.get("messages")}, ensure_ascii=False)


def tool_results(body: dict[str, Any]) -> list[str]:
    """The first text of each tool result in the request (Claude Code may add a <system-reminder> block)."""
    out = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                blocks = inner if isinstance(inner, list) else [{"text": inner}]
                texts = [b.get("text", "") for b in blocks if isinstance(b, dict)]
                out.append(str(texts[0]) if texts else "")
    return out


def has_tool(body: dict[str, Any], name: str) -> bool:
    return any(isinstance(t, dict) and t.get("name") == name for t in body.get("tools") or [])


def test_claude_code_gets_the_workspace_decisions_searches_them_and_its_session_is_captured(
    tmp_path: Path,
) -> None:
    claude = agent_cli("claude")
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"  # where the real CLI writes its transcripts, too
    alpha, beta = tmp_path / "ws" / "alpha", tmp_path / "ws" / "beta"
    for folder in (home, alpha, beta):
        folder.mkdir(parents=True)
    db = tmp_path / "data" / "checkpoint.db"
    write_claude_session(projects, PlannedSession("sess-alpha", str(alpha), [
        "We'll use SQLite for the store because it is one file.", "The API must never log keys."]))
    write_claude_session(projects, PlannedSession("sess-beta", str(beta), ["We'll use Postgres for beta."]))
    capture(db, projects)

    agent_requests: list[dict[str, Any]] = []

    def respond(request: MessageRequest) -> Any:
        body = request.body
        if not has_tool(body, "Bash"):  # a side request of Claude Code's (a title, a summary): plain text
            return "A short answer."
        agent_requests.append(body)
        if len(agent_requests) == 1:
            return {"content": [{"type": "tool_use", "id": "toolu_search_1", "name": "ToolSearch",
                                 "input": {"query": f"select:{TOOL}", "max_results": 1}}], "stop_reason": "tool_use"}
        if len(agent_requests) == 2:
            return {"content": [{"type": "tool_use", "id": "toolu_checkpoint_1", "name": TOOL,
                                 "input": {"query": "SQLite"}}], "stop_reason": "tool_use"}
        return "Decision: we keep the parser in Rust for this release."

    env_extra = {
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "CHECKPOINT_DB": str(db), "CHECKPOINT_SOURCES": str(projects), "CHECKPOINT_EXTRACTOR": "heuristic",
        "IS_SANDBOX": "1",  # root may use --permission-mode bypassPermissions (notes/agents-cli.md §1)
        # `claude -p` waits ~5 s for MCP servers before its first request; `checkpoint mcp` needs ~0.75 s of
        # CPU to import the SDK, which on this shared machine can take longer: wait for it, as
        # --debug showed (the probe timed out, the first request went out without the tools).
        "CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "60000",
    }
    with FakeAnthropic() as fake:
        fake.responder = respond
        env = clean_env(home, **fake.env(), **env_extra)
        env["PATH"] = f"{VENV_BIN}{os.pathsep}{env['PATH']}"
        result = subprocess.run(
            [str(claude), "-p", "Which store did we pick?", "--model", "claude-haiku-4-5", "--plugin-dir",
             str(PLUGIN), "--permission-mode", "bypassPermissions", "--allowedTools", TOOL],
            cwd=alpha, env=env, capture_output=True, text=True, timeout=180,
        )
        assert result.returncode == 0, (result.stdout, result.stderr)

    assert len(agent_requests) == 3, [r.get("messages") for r in agent_requests]
    first = request_text(agent_requests[0])
    assert "Checkpoint context:" in first
    assert "SQLite for the store" in first and "never log keys" in first
    assert "Postgres" not in first  # the other workspace's decision
    assert TOOL in first  # among the deferred tools, and named so in the context
    assert "mcp__plugin_checkpoint_checkpoint__list_decisions lists them" in first

    results = tool_results(agent_requests[2])
    assert len(results) == 2, results  # ToolSearch's, then search_decisions'
    answer = results[1]
    assert answer.startswith('{"checkpoint": "search_decisions"'), answer[:200]  # the text, not JSON in JSON
    found = json.loads(answer)
    [item] = found["items"]  # compact: the provenance is get_decision's
    assert "SQLite for the store" in item["statement"]
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT session_id FROM items WHERE id = ?", (item["id"],)).fetchone() == ("sess-alpha",)

    # The Stop hook asked for the new session to be captured: the detached worker does it.
    new_sessions = [p for p in projects.glob("*/*.jsonl") if not p.stem.startswith("sess-")]
    assert len(new_sessions) == 1, new_sessions
    new_id = new_sessions[0].stem
    deadline = time.monotonic() + 90
    captured = None
    while time.monotonic() < deadline:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            captured = conn.execute("SELECT turns, watermark FROM sessions WHERE id = ?", (new_id,)).fetchone()
        if captured and captured[0] and captured[1] == captured[0]:
            break
        time.sleep(0.5)
    else:
        problems = db.parent / (db.name + ".agent") / "problems.jsonl"
        pytest.fail(f"session {new_id} not captured: {captured}; "
                    f"{problems.read_text() if problems.exists() else 'no problems recorded'}")

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        drops = dict(conn.execute("SELECT policy, records FROM drops WHERE session_id = ?", (new_id,)).fetchall())
        texts = [r[0] for r in conn.execute("SELECT text FROM turns WHERE session_id = ?", (new_id,))]
        new_items = [r[0] for r in conn.execute("SELECT statement FROM items WHERE session_id = ?", (new_id,))]
    # the hook's stdout (hook_success), its context (hook_additional_context), the tool's answer (a tool result)
    assert drops.get("checkpoint_context") == 3, drops
    assert not any("Checkpoint context:" in t or "SQLite for the store" in t for t in texts), texts
    assert not any("SQLite" in s or "log keys" in s for s in new_items), new_items
    assert any("keep the parser in Rust" in s for s in new_items)  # the new session's own words


def test_the_plugin_validates(tmp_path: Path) -> None:
    out = subprocess.run([str(agent_cli("claude")), "plugin", "validate", str(PLUGIN), "--json"], cwd=tmp_path,
                         env=clean_env(tmp_path), capture_output=True, text=True, timeout=120)
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["success"], out.stdout
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    hooks = {(h["event"], h["command"]) for h in report["provides"]["hooks"]}
    hook = f'sh "{LAUNCHER}" hook'  # bin/checkpoint-launch finds Checkpoint (test_claude_plugin_launch.py)
    assert hooks == {("SessionStart", f"{hook} session-start"), ("Stop", f"{hook} stop"),
                     ("PreToolUse", f"{hook} pre-edit"),
                     ("PostCompact", f"{hook} post-compact"), ("SessionEnd", f"{hook} session-end")}
    assert [(s["name"], s["target"], s["args"]) for s in report["provides"]["mcpServers"]] == [
        ("checkpoint", "sh", [LAUNCHER, "mcp"])]


def test_the_plugin_installs_for_good_from_the_repository_marketplace(tmp_path: Path) -> None:
    """What the README tells a user to run: the repository is a marketplace listing the plugin."""
    claude, env = str(agent_cli("claude")), clean_env(tmp_path)

    def run(*args: str) -> str:
        out = subprocess.run([claude, "plugin", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    run("marketplace", "add", str(ROOT))
    run("install", "checkpoint@checkpoint")
    # Ours, by id: Claude Code 2.1.332 and later also list their built-in plugins (`…@builtin`).
    [installed] = [p for p in json.loads(run("list", "--json")) if not p["id"].endswith("@builtin")]
    assert (installed["id"], installed["enabled"], installed["readFromFolder"]) == (
        "checkpoint@checkpoint", True, str(PLUGIN))
    assert installed["mcpServers"] == {"checkpoint": {"command": "sh", "args": [LAUNCHER, "mcp"]}}
    assert str(installed["installPath"]).startswith(str(tmp_path))  # the temp HOME, never the real one
