"""Checkpoint's own output, read back from transcripts the REAL agent CLIs wrote (pinned,
scripts/install-agent-clis.sh), each against its fake model API on 127.0.0.1, HOME in a temp dir.

- Codex 0.169.0 (`codex exec`) with `checkpoint mcp` as an MCP server (`-c mcp_servers.checkpoint=...`)
  and `checkpoint hook session-start` as its SessionStart hook (hooks.json, `features.hooks`): the
  context becomes a developer message, and when the fake model calls `search_decisions` Codex
  writes the answer into its rollout as a `function_call_output` block;
- Gemini CLI 0.61.0 (`gemini -p`) with `checkpoint mcp` in settings.json's `mcpServers` and
  `checkpoint hook session-start` as its SessionStart hook: the context becomes a `<hook_context>`
  block leading the prompt's text, the answer an `<untrusted_context>`-wrapped function response;
- opencode 1.18.33 (`opencode run`) with `checkpoint mcp` as a local MCP server in opencode.json:
  the answer is the output of a tool part in its SQLite database.

Then the real `checkpoint now` reads those files: Checkpoint's context and answers are no turns and
are counted under `checkpoint_context`; the agent's own words around them (the prompt, the call,
the answer after it) are turns, and only they give items."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from checkpoint.model import AGENT_ANSWER_MARK, AGENT_CONTEXT_MARK
from tests.support import opencode_sessions as oc
from tests.support.agent_clis import agent_cli, clean_env
from tests.support.agent_corpus import PlannedSession, capture, write_claude_session
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest, last_user_turn, tool_use
from tests.support.fake_gemini import FakeGemini, GeminiRequest
from tests.support.fake_openai import FakeOpenAI, ResponsesRequest, provider_overrides
from tests.support.gemini_transcripts import MODEL as GEMINI_MODEL
from tests.support.gemini_transcripts import SETTINGS as GEMINI_SETTINGS

CHECKPOINT = Path(sys.executable).with_name("checkpoint")
PROMPT = "Which store did we pick?"
OWN_WORDS = "Decision: we keep the parser in Rust for this release."


class Setup:
    """A workspace with one recorded decision (from a Claude session), and an empty HOME."""

    def __init__(self, tmp: Path) -> None:
        self.home, self.ws = tmp / "home", tmp / "ws"
        self.db = tmp / "data" / "checkpoint.db"
        self.home.mkdir()
        self.ws.mkdir()
        write_claude_session(tmp / "projects", PlannedSession("sess-earlier", str(self.ws), [
            "We'll use SQLite for the store because it is one file."]))
        capture(self.db, tmp / "projects")

    def session_read_back(self, root: Path, agent: str) -> tuple[dict[str, int], list[str], list[str]]:
        """`checkpoint now` over the agent's files: its one session's drops, turn texts and items."""
        capture(self.db, root)
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as conn:
            ids = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE agent = ?", (agent,))]
            assert len(ids) == 1, ids
            drops = dict(conn.execute("SELECT policy, records FROM drops WHERE session_id = ?", (ids[0],)).fetchall())
            texts = [r[0] for r in conn.execute("SELECT text FROM turns WHERE session_id = ? ORDER BY seq", (ids[0],))]
            items = [r[0] for r in conn.execute("SELECT statement FROM items WHERE session_id = ?", (ids[0],))]
        return drops, texts, items


def _not_checkpoints(texts: list[str]) -> None:
    ours = (AGENT_CONTEXT_MARK, AGENT_ANSWER_MARK, "SQLite for the store")
    assert not any(mark in t for mark in ours for t in texts), texts


def test_codex_mcp_answer_in_its_rollout_is_no_turn(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    (s.home / ".codex").mkdir()
    hook = {"type": "command", "command": f"CHECKPOINT_DB={s.db} {CHECKPOINT} hook session-start"}
    (s.home / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}}))
    requests: list[dict[str, Any]] = []
    offered: list[list[Any]] = []

    def respond(request: ResponsesRequest) -> str | dict[str, Any]:
        requests.append(request.body)
        offered.append([t.get("name") for t in request.body.get("tools") or [] if isinstance(t, dict)])
        if not any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in request.body["input"]):
            # Codex 0.169 offers an MCP server's tools as one namespace, `mcp__<server>`.
            return {"output": [{"type": "function_call", "id": "fc_cp1", "status": "completed",
                                "namespace": "mcp__checkpoint", "name": "search_decisions",
                                "arguments": json.dumps({"query": "SQLite"}), "call_id": "call_cp1"}]}
        return OWN_WORDS

    server = (f'mcp_servers.checkpoint={{ command = "{CHECKPOINT}", args = ["mcp"], '
              f'env = {{ CHECKPOINT_DB = "{s.db}" }}, startup_timeout_sec = 120, required = true }}')
    # required: the first request waits for the server's tools (without it, it may go out before them)
    with FakeOpenAI() as fake:
        fake.responder = respond
        overrides = [a for o in [*provider_overrides(fake.base_url), server, "features.hooks=true"] for a in ("-c", o)]
        result = subprocess.run(
            [str(agent_cli("codex")), "exec", *overrides, "-m", "fake-model", "--skip-git-repo-check",
             "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", PROMPT],
            cwd=s.ws, env=clean_env(s.home, FAKE_KEY="fake-key"), capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (result.stdout, result.stderr[-3000:])

    assert len(requests) == 2, requests
    assert "mcp__checkpoint" in offered[0], offered[0]
    assert AGENT_CONTEXT_MARK in json.dumps(requests[0]["input"])  # the hook's context went in
    sent_back = json.dumps(requests[1]["input"])
    assert "SQLite for the store" in sent_back and "search_decisions" in sent_back  # the tool really answered
    rollout = next((s.home / ".codex" / "sessions").rglob("rollout-*.jsonl")).read_text()
    assert '"type":"function_call_output"' in rollout and "SQLite for the store" in rollout

    drops, texts, items = s.session_read_back(s.home / ".codex" / "sessions", "codex")
    # the hook's developer message; the answer once (its event copies are event_copy)
    assert drops.get("checkpoint_context") == 2, drops
    _not_checkpoints(texts)
    assert PROMPT in texts and OWN_WORDS in texts
    assert any(t.startswith("[tool search_decisions]") for t in texts)  # the agent's call stays
    assert any(t.startswith("[tool result]") for t in texts)  # its result, without the answer
    assert not any("SQLite" in i for i in items), items
    assert any("keep the parser in Rust" in i for i in items)


def test_gemini_hook_context_and_mcp_answer_are_no_turns(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    (s.home / ".gemini").mkdir()
    settings = {**GEMINI_SETTINGS,
                "mcpServers": {"checkpoint": {"command": str(CHECKPOINT), "args": ["mcp"], "trust": True,
                                              "env": {"CHECKPOINT_DB": str(s.db)}, "timeout": 120_000}},
                "hooks": {"SessionStart": [{"hooks": [{
                    "type": "command", "name": "checkpoint",
                    "command": f"CHECKPOINT_DB={s.db} {CHECKPOINT} hook session-start"}]}]}}
    (s.home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    requests: list[GeminiRequest] = []

    def respond(request: GeminiRequest) -> str | list[dict[str, Any]]:
        requests.append(request)
        if request.responses:
            return OWN_WORDS
        # gemini-cli 0.61 names an MCP server's tools mcp_<server>_<tool>.
        assert "mcp_checkpoint_search_decisions" in request.tools, sorted(request.tools)
        return [{"functionCall": {"name": "mcp_checkpoint_search_decisions", "args": {"query": "SQLite"}}}]

    with FakeGemini() as fake:
        fake.responder = respond
        result = subprocess.run(
            [str(agent_cli("gemini")), "-p", PROMPT, "-m", GEMINI_MODEL, "--skip-trust", "--approval-mode", "yolo"],
            cwd=s.ws, env=clean_env(s.home, **fake.env()), capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (result.stdout, result.stderr[-3000:])

    assert len(requests) == 2, [r.prompt for r in requests]
    first = json.dumps(requests[0].body.get("contents"))
    assert AGENT_CONTEXT_MARK in first and "SQLite for the store" in first  # the hook's context went in
    assert "SQLite for the store" in json.dumps(requests[1].responses)  # the tool really answered

    drops, texts, items = s.session_read_back(s.home / ".gemini" / "tmp", "gemini")
    # the <hook_context> message; the answer once (the user record's copy of it is tool_result_copy)
    assert drops.get("checkpoint_context") == 2, drops
    _not_checkpoints(texts)
    assert PROMPT in texts and OWN_WORDS in texts
    assert any(t.startswith("[tool mcp_checkpoint_search_decisions]") for t in texts)
    assert not any("SQLite" in i for i in items), items
    assert any("keep the parser in Rust" in i for i in items)


def test_opencode_mcp_answer_in_its_database_is_no_turn(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    requests: list[dict[str, Any]] = []

    def respond(request: MessageRequest) -> Any:
        body = request.body
        if not body.get("tools"):
            return "A short title"  # opencode's title request
        requests.append(body)
        _, answered = last_user_turn(body)
        if "toolu_cp_1" in answered:
            return OWN_WORDS
        # opencode 1.18 names an MCP server's tools <server>_<tool>.
        names = [t.get("name") for t in body["tools"] if isinstance(t, dict)]
        assert "checkpoint_search_decisions" in names, names
        return tool_use("checkpoint_search_decisions", "toolu_cp_1", {"query": "SQLite"})

    with FakeAnthropic() as fake:
        fake.responder = respond
        env = oc.env(s.home, fake.base_url)  # writes opencode.json: Checkpoint's server is added to it
        config = {**oc.config(fake.base_url), "mcp": {"checkpoint": {
            "type": "local", "command": [str(CHECKPOINT), "mcp"], "environment": {"CHECKPOINT_DB": str(s.db)},
            "enabled": True, "timeout": 120_000}}}
        (s.home / ".config" / "opencode" / "opencode.json").write_text(json.dumps(config))
        result = subprocess.run([str(agent_cli("opencode")), "run", "--auto", *PROMPT.split()],
                                cwd=s.ws, env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (result.stdout, result.stderr[-3000:])

    assert len(requests) == 2, requests
    assert "SQLite for the store" in json.dumps(requests[1]["messages"])  # the tool really answered

    drops, texts, items = s.session_read_back(oc.database(s.home).parent, "opencode")
    assert drops.get("checkpoint_context") == 1, drops
    _not_checkpoints(texts)
    assert PROMPT in texts and OWN_WORDS in texts
    assert any(t.startswith('[tool checkpoint_search_decisions] {"query":"SQLite"}') for t in texts)
    assert not any("SQLite" in i for i in items), items
    assert any("keep the parser in Rust" in i for i in items)
