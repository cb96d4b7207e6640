"""What Checkpoint fed the agent, read back by the Codex, Gemini CLI and opencode readers: left out
under `checkpoint_context`, counted, while the agent's own words around it are turns.

The records are in the exact shapes the real CLIs wrote (Codex 0.169.0, Gemini CLI 0.61.0, opencode
1.18.33, seen in tests/e2e/test_agent_readback.py's runs, trimmed of bookkeeping fields): Codex's
SessionStart hook context as a developer message and an MCP answer as the second block of a
`function_call_output`; Gemini's `<hook_context>` block leading the prompt's text and an MCP answer
wrapped in `<untrusted_context>`; opencode's MCP answer as a tool part's output."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.model import AGENT_ANSWER_MARK, AGENT_CONTEXT_MARK
from checkpoint.sources.base import CHECKPOINT_CONTEXT, is_checkpoint_answer, is_checkpoint_context
from checkpoint.sources.codex import CodexReader
from checkpoint.sources.gemini import GeminiReader
from checkpoint.store import Store
from tests.support.paths import DATA_DIR
from tests.support.reader_lines import dropped, dropped_records, parse_all, turns

CONTEXT = (f"{AGENT_CONTEXT_MARK} decisions and constraints Checkpoint recorded in earlier coding sessions in /w, "
           "accepted ones first, then newest first.\n- Decision f3989bf279ac (recorded 2026-12-01): We'll use SQLite "
           "for the store\nNo recorded item was left out; the MCP tool mcp__checkpoint__list_decisions lists them.")
ANSWER = (AGENT_ANSWER_MARK + '"search_decisions", "query": "SQLite", "workspace": "/w", "items": [{"id": '
          '"f3989bf279ac", "kind": "decision", "statement": "We\'ll use SQLite for the store"}], "shown": 1}')
PROMPT = "Which store did we pick?"
OWN = "Decision: we keep the parser in Rust."


def _no_checkpoint_text(texts: list[str]) -> None:
    assert not any(AGENT_CONTEXT_MARK in t or AGENT_ANSWER_MARK in t or "SQLite for the store" in t for t in texts)


def test_the_rule_knows_an_answer_by_its_start_and_the_context_anywhere() -> None:
    assert is_checkpoint_answer(ANSWER)
    assert is_checkpoint_answer(f"  <untrusted_context>\n{ANSWER}\n</untrusted_context>")
    # A tool's output that quotes the mark (a grep of Checkpoint's own code) is the agent's work.
    assert not is_checkpoint_answer(f"model.py:256: AGENT_ANSWER_MARK = '{AGENT_ANSWER_MARK}'")
    assert not is_checkpoint_answer(f"<a><b>{ANSWER}") and not is_checkpoint_answer(None)
    assert is_checkpoint_context(f"<hook_context>{CONTEXT}</hook_context>") and not is_checkpoint_context("Context:")


# -- Codex ----------------------------------------------------------------------------------------


def _codex_item(n: int, payload: dict[str, Any], kind: str = "response_item") -> dict[str, Any]:
    return {"timestamp": f"2026-12-01T15:32:22.{n:03d}Z", "ordinal": n, "type": kind, "payload": payload}


def _codex_message(role: str, text: str, **extra: Any) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "id": f"msg_{role}_{len(text)}", "role": role, "content": [{"type": kind, "text": text}],
            **extra}


def test_codex_hook_context_and_mcp_answer_are_counted_not_turns() -> None:
    records = [
        _codex_item(1, {"type": "session_meta"} | {"id": "01a2323c", "cwd": "/w"}, "session_meta"),
        _codex_item(7, _codex_message("developer", CONTEXT, internal_chat_message_metadata_passthrough={
            "content_item_kinds": ["hooks.additional_context"],
            "content_item_metadata": [{"provenance": {"type": "harness", "hook": True}}]})),
        _codex_item(8, _codex_message("user", PROMPT)),
        _codex_item(9, {"type": "function_call", "status": "completed", "id": "fc_1", "name": "search_decisions",
                        "namespace": "mcp__checkpoint", "arguments": '{"query": "SQLite"}', "call_id": "call_cp1"}),
        _codex_item(11, {"type": "item_completed", "item": {"type": "McpToolCall", "id": "call_cp1", "server":
                         "checkpoint", "tool": "search_decisions", "status": "completed",
                         "result": {"content": [{"type": "text", "text": ANSWER}]}}}, "event_msg"),
        _codex_item(12, {"type": "function_call_output", "id": "fco_1", "call_id": "call_cp1", "output": [
            {"type": "input_text", "text": "Wall time: 0.0435 seconds\nOutput:"},
            {"type": "input_text", "text": ANSWER}]}),
        _codex_item(15, _codex_message("assistant", OWN)),
    ]
    parsed = parse_all(CodexReader(), records)
    texts = [t.text for t in turns(parsed)]
    _no_checkpoint_text(texts)
    assert texts == [PROMPT, '[tool search_decisions] {"query": "SQLite"}',
                     "[tool result]\nWall time: 0.0435 seconds\nOutput:", OWN]
    assert dropped_records(parsed)[CHECKPOINT_CONTEXT] == 2
    assert dropped(parsed)[CHECKPOINT_CONTEXT] == len(CONTEXT) + len(ANSWER)
    # An older output as one string is known too; another tool's output quoting the mark is kept.
    old = parse_all(CodexReader(), [_codex_item(1, {"type": "function_call_output", "call_id": "c", "output": ANSWER}),
                                    _codex_item(2, {"type": "function_call_output", "call_id": "d",
                                                    "output": f"grep: {ANSWER}"})])
    assert [t.text for t in turns(old)] == ["[tool result]\n", f"[tool result]\ngrep: {ANSWER}"]
    assert dropped_records(old)[CHECKPOINT_CONTEXT] == 1


# -- Gemini CLI -----------------------------------------------------------------------------------

CALL_ID = "mcp_checkpoint_search_decisions__mcp_checkpoint_search_decisions_1796138855831_0"
WRAPPED = f"<untrusted_context>\n{ANSWER}\n</untrusted_context>"


def _response() -> dict[str, Any]:
    return {"functionResponse": {"id": CALL_ID, "name": "mcp_checkpoint_search_decisions",
                                 "response": {"output": WRAPPED}}}


def _gemini_records(hook_text: str) -> list[dict[str, Any]]:
    reply = {"id": "7ec6ed7f", "timestamp": "2026-12-01T15:27:35.936Z", "type": "gemini", "content": "", "thoughts": [],
             "model": "gemini-2.5-flash"}
    call = {"id": CALL_ID, "name": "mcp_checkpoint_search_decisions", "args": {"query": "SQLite"},
            "result": [_response()], "status": "success", "timestamp": "2026-12-01T15:27:35.990Z",
            "resultDisplay": WRAPPED, "displayName": "search_decisions (checkpoint MCP Server)"}
    return [
        {"sessionId": "8671b7a3", "projectHash": "7ea1", "startTime": "2026-12-01T15:27:35.553Z", "kind": "main"},
        {"id": "0883d5a6", "timestamp": "2026-12-01T15:27:35.792Z", "type": "user",
         "content": [{"text": f"<hook_context>{hook_text}</hook_context>\n\n{PROMPT}"}]},
        reply, {**reply, "toolCalls": [call]},
        {"id": "9faca1fa", "timestamp": "2026-12-01T15:27:35.993Z", "type": "user", "content": [_response()]},
        {"id": "ebc73b71", "timestamp": "2026-12-01T15:27:36.012Z", "type": "gemini", "content": OWN, "thoughts": [],
         "model": "gemini-2.5-flash"},
    ]


def test_gemini_hook_context_and_mcp_answer_are_counted_and_the_prompt_after_the_context_is_kept() -> None:
    parsed = parse_all(GeminiReader(), _gemini_records(CONTEXT))
    texts = [t.text for t in turns(parsed)]
    _no_checkpoint_text(texts)
    assert texts == [PROMPT, '[tool mcp_checkpoint_search_decisions] {"query":"SQLite"}', "[tool result]\n", OWN]
    assert dropped_records(parsed)[CHECKPOINT_CONTEXT] == 2
    assert dropped(parsed)["tool_result_copy"] == len(WRAPPED)  # the user record's copy of the result
    assert parsed[1].session is not None and parsed[1].session.title == PROMPT  # the prompt, not the context
    # Another hook's context is injected_context; the prompt it leads is still the user's turn.
    other = parse_all(GeminiReader(), _gemini_records("Lint: 0 warnings."))
    assert next(t.text for t in turns(other)) == PROMPT
    assert dropped(other)["injected_context"] == len("<hook_context>Lint: 0 warnings.</hook_context>\n\n")


# -- opencode -------------------------------------------------------------------------------------

OPENCODE_DATA = DATA_DIR / "opencode" / "sessions.tar.gz"


def test_opencode_mcp_answer_in_a_tool_part_is_counted_not_a_turn(tmp_path: Path, settings: Settings,
                                                                  store: Store) -> None:
    """The real database, its write tool's part made a call of Checkpoint's search tool as opencode
    wrote one (tool `<server>_<tool>`, the answer as the output)."""
    with tarfile.open(OPENCODE_DATA) as tar:
        tar.extractall(tmp_path / "data", filter="data")
    root = tmp_path / "opencode"
    root.mkdir()
    shutil.copy(tmp_path / "data" / "final" / "opencode" / "opencode.db", root / "opencode.db")
    conn = sqlite3.connect(root / "opencode.db")
    writes = conn.execute("SELECT id, data FROM part WHERE data LIKE '%\"tool\":\"write\"%'").fetchall()
    assert len(writes) == 2  # the session's and its fork's copy
    for pid, data in writes:
        part = json.loads(data)
        part["tool"] = "checkpoint_search_decisions"
        part["state"] = {**part["state"], "input": {"query": "SQLite"}, "output": ANSWER,
                         "metadata": {"truncated": False}, "title": ""}
        conn.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(part), pid))
    conn.commit()
    conn.close()

    pipeline.scan(store, replace(settings, sources=[root]))
    texts = [r[0] for r in store.conn.execute("SELECT text FROM turns")]
    _no_checkpoint_text(texts)
    assert texts.count('[tool checkpoint_search_decisions] {"query":"SQLite"}\n[tool result]\n') == 1
    assert any("marker-0c02" in t for t in texts)  # the agent's answer after the call
    drops = store.conn.execute("SELECT session_id, records FROM drops WHERE policy = ?", (CHECKPOINT_CONTEXT,))
    assert sorted(n for _, n in drops) == [1, 1]  # once in the session, once in its fork's copy of it
