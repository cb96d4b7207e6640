"""What Claude Code 2.1.3xx and Codex 0.169 write today, line by line: queued prompts, machine
notifications, empty thinking and blank turns, terminal escapes, unknown record types, Codex
sub-agents and their copies, web searches, and the default roots. Each test fails on the readers
as they were before issue 16."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from checkpoint import config, pipeline, runner
from checkpoint.config import Settings
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.model import Role
from checkpoint.sources import locate
from checkpoint.sources.base import FileRole, line_id
from checkpoint.store import Store
from tests.unit.test_readers import (
    CLAUDE,
    CODEX,
    CODEX_ID,
    S,
    assistant,
    codex_line,
    dropped,
    dropped_records,
    env,
    parse_all,
    raw_of,
    turns,
    user,
)

NOTIFICATION = ("<task-notification>\n<task-id>b0be39e</task-id>\n<status>completed</status>\n"
                "<summary>Background command \"Run tests\" completed (exit code 0)</summary>\n</task-notification>")


def queue(operation: str, ts: str, content: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "queue-operation", "operation": operation, "timestamp": ts, "sessionId": S}
    if content is not None:
        record["content"] = content
    return record


# -- Claude Code: queued prompts ---------------------------------------------------------------------

# As in a real 2.1.39 session: a task notification queued and never dequeued, a prompt typed while
# the agent worked, removed from the queue when the harness handed it to the model; no user record.
ONLY_QUEUED = [
    user("u1", "run the tests"),
    queue("enqueue", "2026-01-05T10:00:01.000Z", NOTIFICATION),
    queue("enqueue", "2026-01-05T10:00:02.000Z", "check again"),
    assistant("a1", "msg_1", {"type": "text", "text": "Still running."}),
    queue("remove", "2026-01-05T10:00:03.000Z"),
    assistant("a2", "msg_2", {"type": "text", "text": "Checked again: green."}),
]


def test_claude_a_prompt_only_in_the_queue_is_the_users_turn_once() -> None:
    parsed = parse_all(CLAUDE, ONLY_QUEUED)
    got = [(t.role, t.text) for t in turns(parsed)]
    assert got == [(Role.USER, "run the tests"), (Role.ASSISTANT, "Still running."), (Role.USER, "check again"),
                   (Role.ASSISTANT, "Checked again: green.")]
    queued = turns(parsed)[2]
    assert (queued.id, queued.timestamp) == (line_id(raw_of(ONLY_QUEUED[2])), "2026-01-05T10:00:02.000Z")
    assert dropped_records(parsed) == Counter({"machine_notification": 1})
    assert turns(parse_all(CLAUDE, ONLY_QUEUED)) == turns(parsed)  # a re-read: the same ids


def test_claude_a_queued_prompt_that_became_a_user_record_is_stored_once() -> None:
    dequeued = [queue("enqueue", "2026-01-05T10:00:01.000Z", "also fix the docs"),
                queue("dequeue", "2026-01-05T10:00:02.000Z"), user("u2", "also fix the docs")]
    assert [(t.id, t.text) for t in turns(parse_all(CLAUDE, dequeued))] == [("u2", "also fix the docs")]
    # Handed over mid-turn (removed), then also written as a queued_command attachment: once.
    steered = [queue("enqueue", "2026-01-05T10:00:01.000Z", "also fix the docs"),
               queue("remove", "2026-01-05T10:00:02.000Z"),
               env("attachment", "q1", attachment={"type": "queued_command", "prompt": "also fix the docs",
                                                   "commandMode": "prompt"})]
    parsed = parse_all(CLAUDE, steered)
    assert [t.text for t in turns(parsed)] == ["also fix the docs"]
    assert dropped_records(parsed) == Counter({"queued_prompt": 1})
    # Said as a user record before the remove: that record is the turn, the remove adds nothing.
    said_first = [queue("enqueue", "2026-01-05T10:00:01.000Z", "also fix the docs"), user("u3", "also fix the docs"),
                  queue("remove", "2026-01-05T10:00:02.000Z")]
    assert [t.id for t in turns(parse_all(CLAUDE, said_first))] == ["u3"]
    # A slash command queued comes back as its command record; a cleared queue was never sent.
    other = [queue("enqueue", "2026-01-05T10:00:01.000Z", "/mcp"), queue("remove", "2026-01-05T10:00:02.000Z"),
             queue("enqueue", "2026-01-05T10:00:03.000Z", "never sent"), queue("clear", "2026-01-05T10:00:04.000Z")]
    assert turns(parse_all(CLAUDE, other)) == []


def test_claude_queued_prompt_split_over_two_scans_is_stored_once(settings: Settings, store: Store,
                                                                   roots: tuple[Path, Path]) -> None:
    """The reader state of a file is kept between scans: the remove that comes in a later append
    (after a torn last line) stores the prompt once, and a rescan stores nothing more."""
    path = roots[0] / "-home-me-w" / f"{S}.jsonl"
    path.parent.mkdir(parents=True)
    lines = [raw_of(r) + b"\n" for r in ONLY_QUEUED]
    path.write_bytes(b"".join(lines[:3]) + lines[3][:20])  # cut inside the fourth line
    pipeline.scan(store, settings)
    path.write_bytes(b"".join(lines))
    pipeline.scan(store, settings)
    pipeline.scan(store, settings)
    texts = [r[0] for r in store.conn.execute("SELECT text FROM turns ORDER BY seq")]
    assert texts == ["run the tests", "Still running.", "check again", "Checked again: green."]


# -- Claude Code: what is not a turn -------------------------------------------------------------------


def test_claude_machine_notifications_are_not_user_turns() -> None:
    lines = [
        user("u1", NOTIFICATION + "\nRead the output file to retrieve the result."),
        env("attachment", "q1", attachment={"type": "queued_command", "prompt": NOTIFICATION,
                                            "commandMode": "task-notification"}),
        env("attachment", "q2", attachment={"type": "queued_command", "prompt": "Monitor: build finished",
                                            "origin": {"kind": "task-notification", "producer": "session-task"}}),
        user("u2", "<monitor-event>file changed: a.py</monitor-event>"),
        user("u3", "a real prompt", origin={"kind": "human"}),
    ]
    parsed = parse_all(CLAUDE, lines)
    assert [(t.role, t.text) for t in turns(parsed)] == [(Role.USER, "a real prompt")]
    assert dropped_records(parsed) == Counter({"machine_notification": 4})


def test_claude_empty_thinking_and_blank_turns_are_not_stored_but_counted() -> None:
    lines = [
        assistant("a1", "msg_1", {"type": "thinking", "thinking": "", "signature": "EqQBCkgIBxABGAIi"}),
        assistant("a2", "msg_1", {"type": "text", "text": "\n\n"}),
        user("u1", "  \n"),
        assistant("a3", "msg_1", {"type": "thinking", "thinking": "weighing it", "signature": "x"}),
    ]
    parsed = parse_all(CLAUDE, lines)
    assert [t.text for t in turns(parsed)] == ["(thinking) weighing it"]
    assert dropped_records(parsed) == Counter({"empty_turn": 3})


def test_claude_terminal_escapes_are_stripped_from_stored_text() -> None:
    hook_output = "\x1b[1m\x1b[32m✓\x1b[0m lint passed \x1b]8;;file:///w/a.py\x07a.py\x1b]8;;\x07"
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": hook_output}
    red = assistant("a1", "msg_1", {"type": "text", "text": "\x1b[31mred\x1b[0m"})
    parsed = parse_all(CLAUDE, [user("u1", [block]), red])
    assert [t.text for t in turns(parsed)] == ["[tool result]\n✓ lint passed a.py", "red"]
    assert dropped(parsed)["terminal_escape"] == len(hook_output) - len("✓ lint passed a.py") + len("\x1b[31m\x1b[0m")


# -- Codex 0.169 -------------------------------------------------------------------------------------


def _rollout(path: Path, *lines: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


PARENT = "01a231c7-1b38-74a1-917d-26ec62b0bac6"
CHILD = "01a231c7-1b9d-7c62-aeae-26da28ee4965"


def test_codex_subagent_rollout_belongs_to_its_parent_session(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "12" / "01"
    parent = _rollout(day / f"rollout-2026-12-01T13-24-21-{PARENT}.jsonl",
                      codex_line("session_meta", {"id": PARENT, "session_id": PARENT, "cwd": "/w", "source": "exec"}))
    child = _rollout(day / f"rollout-2026-12-01T13-24-22-{CHILD}.jsonl", codex_line("session_meta", {
        "id": CHILD, "session_id": PARENT, "parent_thread_id": PARENT, "cwd": "/w",
        "source": {"subagent": {"thread_spawn": {"parent_thread_id": PARENT, "depth": 1}}}}))
    assert locate(parent) == FileRole("codex", PARENT)
    assert locate(child) == FileRole("codex", PARENT, subagent=True)
    # Only `source` names the parent (no top-level field, no root session id): still the parent's.
    grandchild = _rollout(day / f"rollout-2026-12-01T13-24-23-{CODEX_ID}.jsonl", codex_line("session_meta", {
        "id": CODEX_ID, "cwd": "/w", "source": {"subagent": {"thread_spawn": {"parent_thread_id": CHILD}}}}))
    assert locate(grandchild) == FileRole("codex", CHILD, subagent=True)
    # The first line not finished yet: not claimed (it might be a sub-agent's), read once it is.
    partial = day / f"rollout-2026-12-01T13-24-24-{CODEX_ID[:-1]}2.jsonl"
    partial.write_text('{"timestamp":"2026-12-01T13:24:24Z","type":"session_meta","payload":{"id"')
    assert locate(partial) is None


def test_codex_the_parents_copies_of_a_subagents_answer_are_one_named_policy() -> None:
    answer = "We'll use marker-codex-subagent for caching."
    lines = [
        codex_line("response_item", {"type": "function_call", "name": "wait_agent", "namespace": "multi_agent_v1",
                                     "arguments": json.dumps({"targets": [CHILD]}), "call_id": "call_wait"}),
        codex_line("response_item", {"type": "function_call_output", "call_id": "call_wait",
                                     "output": json.dumps({"status": {CHILD: {"completed": answer}}})}),
        codex_line("response_item", {"type": "message", "role": "user", "content": [{
            "type": "input_text",
            "text": "<subagent_notification>\n" + json.dumps({"status": {"completed": answer}})}]}),
        codex_line("response_item", {"type": "agent_message", "content": [{"type": "output_text", "text": answer}]}),
        codex_line("event_msg", {"type": "item_completed", "item": {"type": "AgentMessage", "content": [
            {"type": "Text", "text": answer}]}}),
        codex_line("event_msg", {"type": "task_complete", "last_agent_message": answer}),
    ]
    parsed = parse_all(CODEX, lines)
    assert not [t for t in turns(parsed) if "marker-codex-subagent" in t.text]
    assert [t.text for t in turns(parsed)][1] == "[tool result]\n(the sub-agents' answers: in their own turns)"
    assert dropped_records(parsed) == Counter({"subagent_copy": 3, "event_copy": 2})


def test_codex_web_search_is_a_tool_turn_and_unknown_types_are_counted() -> None:
    lines = [
        codex_line("response_item", {"type": "web_search_call", "status": "completed",
                                     "action": {"type": "search", "query": "sqlite wal mode"}}),
        codex_line("response_item", {"type": "web_search_call", "status": "completed",
                                     "action": {"type": "open_page", "url": "https://sqlite.org/wal.html"}}),
        codex_line("response_item", {"type": "brand_new_item", "text": "?"}),
        codex_line("brand_new_record", {"anything": 1}),
        codex_line("world_state", {"full": True}),
        codex_line("token_usage_record", {"thread_id": PARENT}),
    ]
    parsed = parse_all(CODEX, lines)
    assert [(t.role, t.text) for t in turns(parsed)] == [
        (Role.TOOL, "[web search] sqlite wal mode"), (Role.TOOL, "[web search open_page] https://sqlite.org/wal.html")]
    assert dropped_records(parsed) == Counter({"unknown_record": 2})


def test_codex_blank_answers_are_not_stored() -> None:
    parsed = parse_all(CODEX, [codex_line("response_item", {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "\n\n"}]})])
    assert turns(parsed) == [] and dropped_records(parsed) == Counter({"empty_turn": 1})


# -- default roots ---------------------------------------------------------------------------------


def test_default_roots_include_codexs_archive_and_claude_desktop(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    desktop = tmp_path / ".config" / "Claude" / "local-agent-mode-sessions"
    # opencode keeps its data under the XDG data folder on every platform (macOS too).
    assert config.default_sources() == [tmp_path / ".claude" / "projects", tmp_path / ".codex" / "sessions",
                                         tmp_path / ".codex" / "archived_sessions", desktop,
                                         tmp_path / ".gemini" / "tmp", tmp_path / ".copilot" / "session-state",
                                         tmp_path / ".local" / "share" / "opencode"]
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cop"))
    assert config.default_sources()[5] == tmp_path / "cop" / "session-state"
    monkeypatch.setattr(sys, "platform", "darwin")
    assert config.default_sources()[3] == (tmp_path / "Library" / "Application Support" / "Claude"
                                           / "local-agent-mode-sessions")
    # Under Desktop's folder only the Claude Code transcripts are claimed, not its own .jsonl files.
    session = desktop / "org" / "a1b2" / ".claude" / "projects" / "-w" / f"{S}.jsonl"
    assert locate(session) == FileRole("claude", S)
    assert locate(desktop / "org" / "a1b2" / "audit.jsonl") is None


# -- every folder a session worked in --------------------------------------------------------------


def test_a_session_counts_for_every_folder_it_worked_in(settings: Settings, store: Store,
                                                        roots: tuple[Path, Path]) -> None:
    """A Claude session that cd'd from /w/app to /w/lib, and a Codex rollout whose later turn ran in
    /w/lib: both belong to /w/lib too (and stay in /w/app); a folder neither worked in finds neither."""
    claude = roots[0] / "-w-app" / f"{S}.jsonl"
    claude.parent.mkdir(parents=True)
    moved = [user("u1", "start") | {"cwd": "/w/app"},
             assistant("a1", "msg_1", {"type": "text", "text": "We'll use marker-moved-on."}) | {"cwd": "/w/lib"}]
    claude.write_text("".join(json.dumps(r) + "\n" for r in moved))
    rollout = _rollout(roots[1] / "2026" / "12" / "01" / f"rollout-2026-12-01T10-00-00-{CODEX_ID}.jsonl",
                       codex_line("session_meta", {"id": CODEX_ID, "cwd": "/w/app"}),
                       codex_line("turn_context", {"cwd": "/w/lib/"}),
                       codex_line("response_item", {"type": "message", "role": "assistant", "content": [
                           {"type": "output_text", "text": "We'll use marker-codex-moved."}]}))
    pipeline.scan(store, settings)
    assert rollout.exists()
    ids = {S, CODEX_ID}
    assert {s.id for s in store.workspace_sessions(["/w/lib"])} == ids
    assert {s.id for s in store.workspace_sessions(["/w/app"])} == ids
    assert {s.id for s in store.workspace_sessions(["/w/li"])} == set()  # a prefix that is no folder
    assert {s.cwd for s in store.session_counts()} == {"/w/app"}  # the session's own cwd: its first
    runner.extract_due(store, HeuristicExtractor())
    assert len(store.workspace_items(["/w/lib"]).items) == 2
    assert store.search("marker", workspaces=["/w/lib"]).hits
    assert not store.search("marker", workspaces=["/elsewhere"]).hits
