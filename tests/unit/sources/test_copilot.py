"""The Copilot CLI reader.

On sessions the real GitHub Copilot CLI 1.0.102 wrote, offline, against the fake OpenAI API
(tests/support/real_copilot.py made tests/data/real_cli/copilot.tar.gz; see the README there): a
session resumed for every prompt, with reasoning, file edits, a bash call, a task sub-agent, a
background sub-agent and /compact; a second session in another folder.

Every prompt and every answer is stored once, none of what the CLI writes beside the turns (the
system prompt, the transformed prompt, the task's copy of the sub-agent's answer, the summariser's
conversation) is a turn, each session has its folder, the edited file is on the turns that edited
it, and each decision the model said once is one item.

Event by event, on shapes the real CLI writes that the real-CLI fixture does not hold: an
`assistant.reasoning` event before the message that repeats it, a failed edit, a tool run by the
user, an MCP tool, Checkpoint's own answer, skill injections and autopilot continuations, a change
of folder, streaming deltas and events marked ephemeral (as `--output-format json` saves them),
unknown types, and where files are claimed.

Field names are those of the schema the CLI ships (schemas/session-events.schema.json in
@github/copilot-linux-x64 1.0.102); the ephemeral `assistant.reasoning` line is the shape of public
`--output-format json` output (reasoningId, empty content, top-level `"ephemeral": true`)."""

from __future__ import annotations

import os
import tarfile
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.model import AGENT_ANSWER_MARK, Role
from checkpoint.sources import READERS, locate
from checkpoint.sources.base import FileRole
from checkpoint.sources.copilot import CopilotReader
from checkpoint.store import Store
from tests.support.paths import DATA_DIR
from tests.support.reader_checks import (
    assert_each_once,
    assert_each_one_item,
    assert_rescans_add_nothing,
    assert_torn_appends_read_the_same,
)
from tests.support.reader_lines import dropped, dropped_records, parse_all, turns
from tests.support.real_copilot import (
    BACKGROUND_PROMPT,
    COPILOT_MARKERS,
    COPILOT_PROMPTS,
    NOTES,
    REASONING,
    SUBAGENT_PROMPT,
)

READER = CopilotReader()
SID = "3b1cd903-a553-4cfa-8cd3-4e8426269be7"
_n = iter(range(1_000_000))


def event(kind: str, data: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"type": kind, "data": data, "id": f"ev-{next(_n)}", "timestamp": "2026-12-01T10:00:00.000Z",
            "parentId": None, **top}


def start(cwd: str = "/w/proj") -> dict[str, Any]:
    return event("session.start", {"sessionId": SID, "version": 1, "producer": "copilot-agent",
                                   "copilotVersion": "1.0.102", "context": {"cwd": cwd}})


def test_events_files_are_the_copilot_readers_and_the_folder_is_the_session(tmp_path: Path) -> None:
    state = tmp_path / ".copilot" / "session-state"
    assert locate(state / SID / "events.jsonl") == FileRole("copilot", SID)
    assert locate(state / f"{SID}.jsonl") == FileRole("copilot", SID)  # the older layout
    # Not a Claude transcript, though the Claude reader claims almost any .jsonl it is shown.
    assert locate(state / SID / "events.jsonl", [READERS["claude"]]) is None
    assert list(READERS).index("copilot") < list(READERS).index("claude")
    # Other files under ~/.copilot are nobody's transcripts: a .jsonl the agent left in the session's
    # own files/ folder is not a session.
    assert locate(tmp_path / ".copilot" / "logs" / "process-1.jsonl", [READER]) is None
    assert locate(state / SID / "files" / "notes.jsonl") is None
    assert locate(state / SID / "workspace.yaml", [READER]) is None
    assert READER.claims_name("events.jsonl") and not READER.claims_name("workspace.yaml")


def test_a_reasoning_event_and_the_messages_copy_of_it_are_stored_once() -> None:
    parsed = parse_all(READER, [
        start(),
        event("user.message", {"content": "Pick a parser.", "transformedContent": "<current_datetime>x"
                               "</current_datetime>\n\nPick a parser."}),
        event("assistant.reasoning", {"reasoningId": "rs_1", "content": "A hand parser is simplest."}),
        event("assistant.message", {"messageId": "m1", "content": "Hand-written it is.",
                                    "reasoningText": "A hand parser is simplest.", "reasoningOpaque": "rs_1",
                                    "encryptedContent": "gAAA", "toolRequests": []}),
        event("assistant.reasoning", {"reasoningId": "rs_3", "content": "Then the lexer."}),
        event("assistant.message", {"messageId": "m2", "content": "", "reasoningText": "Then the lexer.",
                                    "reasoningOpaque": "another-id", "toolRequests": [{"toolCallId": "c"}]}),
        event("assistant.reasoning", {"reasoningId": "opaque", "content": ""}, ephemeral=True),
        event("assistant.reasoning", {"reasoningId": "rs_2", "content": "  "}),
    ])
    assert [(t.role, t.text) for t in turns(parsed)] == [
        (Role.USER, "Pick a parser."),
        (Role.ASSISTANT, "(reasoning) A hand parser is simplest."),
        (Role.ASSISTANT, "Hand-written it is."),
        (Role.ASSISTANT, "(reasoning) Then the lexer."),
    ]
    assert dropped_records(parsed) == {"transformed_copy": 1, "reasoning_copy": 2, "encrypted_reasoning": 2,
                                       "tool_request_copy": 1, "streaming_delta": 1, "empty_turn": 1}


def test_deltas_and_ephemeral_events_are_copies_and_unknown_types_are_counted() -> None:
    parsed = parse_all(READER, [
        start(),
        event("assistant.message_delta", {"messageId": "m1", "deltaContent": "Hel"}, ephemeral=True),
        event("assistant.message_delta", {"messageId": "m1", "deltaContent": "lo"}),
        event("session.idle", {}, ephemeral=True),
        event("assistant.message", {"messageId": "m1", "content": "Hello"}),
        event("session.brand_new_thing", {"x": 1}),
        event("assistant.turn_end", {"turnId": "0"}),
    ])
    assert [t.text for t in turns(parsed)] == ["Hello"]
    assert dropped_records(parsed) == {"streaming_delta": 3, "unknown_record": 1}


def test_a_failed_edit_touched_nothing_and_an_edit_without_file_edits_names_its_path() -> None:
    parsed = parse_all(READER, [
        start(),
        event("tool.execution_start", {"toolCallId": "c1", "toolName": "edit",
                                       "arguments": {"path": "/w/proj/a.py", "old_str": "x", "new_str": "y"}}),
        event("tool.execution_complete", {"toolCallId": "c1", "success": False,
                                          "error": {"message": "No match found for old_str"}}),
        event("tool.execution_start", {"toolCallId": "c2", "toolName": "create",
                                       "arguments": {"path": "/w/proj/b.py", "file_text": "pass\n"}}),
        event("tool.execution_complete", {"toolCallId": "c2", "success": True,
                                          "result": {"content": "Created file /w/proj/b.py"}}),
    ])
    found = [(t.text.split("\n")[0], t.files) for t in turns(parsed)]
    assert found == [
        ('[tool edit] {"path":"/w/proj/a.py","old_str":"x","new_str":"y"}', ()),
        ("[tool result (error)]", ()),
        ('[tool create] {"path":"/w/proj/b.py","file_text":"pass\\n"}', ()),
        ("[tool result]", ("/w/proj/b.py",)),
    ]
    assert "No match found for old_str" in turns(parsed)[1].text


def test_user_run_and_mcp_tools_and_checkpoints_own_answer() -> None:
    answer = AGENT_ANSWER_MARK + '{"items": []}}'
    parsed = parse_all(READER, [
        start(),
        event("tool.user_requested", {"toolCallId": "u1", "toolName": "bash", "arguments": {"command": "ls"}}),
        event("tool.execution_complete", {"toolCallId": "u1", "success": True, "isUserRequested": True,
                                          "result": {"content": "a.py"}}),
        event("tool.execution_start", {"toolCallId": "m1", "toolName": "checkpoint-search", "mcpServerName":
                                       "checkpoint", "mcpToolName": "search", "arguments": {"query": "parser"}}),
        event("tool.execution_complete", {"toolCallId": "m1", "success": True,
                                          "result": {"content": answer, "detailedContent": answer}}),
    ])
    texts = [t.text for t in turns(parsed)]
    assert texts == ['[tool bash (run by the user)] {"command":"ls"}', "[tool result]\na.py",
                     '[tool checkpoint/search] {"query":"parser"}', "[tool result]\n"]
    assert dropped(parsed)["checkpoint_context"] == len(answer)
    assert "result_detail_copy" not in dropped(parsed)  # the same text twice is not counted as a copy


def test_skill_injections_autopilot_and_notifications_are_not_the_user() -> None:
    parsed = parse_all(READER, [
        start(),
        event("user.message", {"content": "Use the pdf skill body ...", "source": "skill-pdf"}),
        event("user.message", {"content": "Continue working on the objective.", "isAutopilotContinuation": True}),
        event("system.notification", {"content": "Background task 'build' completed", "kind": {"type": "x"}}),
        event("skill.invoked", {"name": "pdf", "content": "# PDF skill\n..."}),
        event("session.compaction_complete", {"success": True, "summaryContent": "<overview>...</overview>"}),
        event("user.message", {"content": "Real prompt."}),
    ])
    assert [(t.role, t.text) for t in turns(parsed)] == [(Role.USER, "Real prompt.")]
    assert dropped_records(parsed) == {"meta_injection": 2, "machine_notification": 2, "compaction_summary": 1}
    assert [p.session.title for p in parsed if p.session and p.session.title] == ["Real prompt."]


def test_a_change_of_folder_counts_and_the_start_stays_the_sessions_own() -> None:
    parsed = parse_all(READER, [
        start("/w/proj"),
        event("session.context_changed", {"cwd": "/w/other", "gitRoot": "/w/other"}),
        event("session.resume", {"eventCount": 3, "context": {"cwd": "/w/proj"}}),
    ])
    infos = [p.session for p in parsed if p.session is not None]
    assert infos[0].cwd == "/w/proj"
    assert [c for i in infos for c in i.cwds] == ["/w/proj", "/w/other"]
    assert all(i.cwd in (None, "/w/proj") for i in infos)


def test_a_subagents_turns_are_the_sessions_and_its_answer_is_kept_once() -> None:
    parsed = parse_all(READER, [
        start(),
        event("tool.execution_start", {"toolCallId": "t1", "toolName": "task", "arguments": {
            "description": "Decide on caching", "prompt": "Look at caching.", "agent_type": "explore"}}),
        event("subagent.started", {"toolCallId": "t1", "agentName": "explore"}),
        event("user.message", {"content": "Look at caching.", "source": "agent-" + SID}),
        event("assistant.message", {"messageId": "s1", "content": "Use an LRU.", "parentToolCallId": "t1"}),
        event("tool.execution_complete", {"toolCallId": "t1", "success": True, "result": {"content": "Use an LRU."}}),
        event("subagent.completed", {"toolCallId": "t1", "agentName": "explore"}),
    ])
    texts = [t.text for t in turns(parsed)]
    assert sum("Look at caching." in t for t in texts) == 1
    assert sum("Use an LRU." in t for t in texts) == 1
    assert dropped_records(parsed) == {"subagent_copy": 2}
    assert not [p.session.title for p in parsed if p.session and p.session.title]  # not the user's prompt


# -- the real CLI's sessions ------------------------------------------------------------------------

CORPUS = DATA_DIR / "real_cli" / "copilot.tar.gz"
# What the CLI writes beside the turns, which no turn may hold: its system prompt, the date it adds
# to each prompt, the summariser's instructions.
BOOKKEEPING = ("You are the GitHub Copilot CLI", "<current_datetime>", "Tools are unavailable in this step")


@pytest.fixture
def corpus(tmp_path: Path, settings: Settings) -> Settings:
    with tarfile.open(CORPUS) as tar:
        tar.extractall(tmp_path, filter="data")
    return replace(settings, sources=[tmp_path / "copilot" / "session-state"], chunk_tokens=1500)


def _turns(store: Store) -> list[tuple[str, str, str, str, list[str]]]:
    rows = store.conn.execute(
        "SELECT s.agent, t.session_id, t.role, t.text, t.files FROM turns t JOIN sessions s ON s.id = t.session_id"
        " ORDER BY t.session_id, t.seq").fetchall()
    return [(a, s, r, t, orjson.loads(f)) for a, s, r, t, f in rows]


def test_copilot_sessions_every_prompt_and_answer_once_the_workspace_and_each_decision_one_item(
    corpus: Settings, store: Store
) -> None:
    report = pipeline.scan(store, corpus)
    assert report.problems == []
    turns = _turns(store)
    assert {a for a, *_ in turns} == {"copilot"}

    said = Counter(text for _, _, role, text, _ in turns if role == "user")
    # The sub-agents' prompts once each, as their parent gave them.
    assert said == Counter((*COPILOT_PROMPTS, SUBAGENT_PROMPT, BACKGROUND_PROMPT))
    texts = [text for _, _, _, text, _ in turns]
    assert_each_once(texts, COPILOT_MARKERS)
    assert sum(REASONING in t for t in texts) == 1
    for mark in (*BOOKKEEPING, SUBAGENT_PROMPT, BACKGROUND_PROMPT):
        assert [t[:80] for t in texts if mark in t and t not in (SUBAGENT_PROMPT, BACKGROUND_PROMPT)] == [], mark
    assert not [t for t in texts if not t.strip()]

    sessions = {s.id: s for s in store.session_counts()}
    assert len(sessions) == 2
    main = next(s for s in sessions.values() if s.title == COPILOT_PROMPTS[0])
    other = next(s for s in sessions.values() if s.title == COPILOT_PROMPTS[-1])
    assert main.cwd is not None and main.cwd.endswith("/work")
    assert other.cwd is not None and other.cwd.endswith("/other/project")
    cwds = dict(store.conn.execute("SELECT session_id, group_concat(cwd) FROM session_cwds GROUP BY session_id"))
    assert cwds == {main.id: main.cwd, other.id: other.cwd}
    # The session is its folder under session-state/, which is also session.start's sessionId.
    assert sorted(p.parent.name for p in corpus.sources[0].glob("*/events.jsonl")) == sorted(sessions)

    # The file the create and edit calls wrote, on their two results and nowhere else.
    touched = [(role, text.split("\n")[0]) for _, _, role, text, files in turns if files]
    assert touched == [("tool", "[tool result]")] * 2
    assert {f for *_, files in turns for f in files} == {os.path.join(main.cwd, NOTES)}

    dropped = main.dropped
    # The two task calls' prompts, the task's result, and read_agent's (the background task's result
    # only says it started: kept).
    assert dropped["subagent_copy"]["records"] == 4
    assert any("Agent started in background" in t for t in texts)
    assert dropped["tool_request_copy"]["records"] == 6  # create, edit, bash, task, task, read_agent
    assert dropped["transformed_copy"]["records"] == 8  # every prompt, the sub-agents' too
    assert dropped["compaction_summary"]["records"] >= 2  # the summariser's call and its summary
    assert {"injected_context", "encrypted_reasoning", "reasoning_copy", "result_detail_copy"} <= set(dropped)
    assert all("unknown_record" not in s.dropped for s in sessions.values())

    assert_each_one_item(store, COPILOT_MARKERS)
    assert_rescans_add_nothing(store, corpus, corpus.sources[0].rglob("*.jsonl"))
    assert _turns(store) == turns


def test_copilot_torn_appends_read_the_same(corpus: Settings, store: Store, tmp_path: Path) -> None:
    """Each file written in two halves, the first cut inside a line: what is stored is the same."""
    files = sorted(corpus.sources[0].rglob("*.jsonl"))
    assert_torn_appends_read_the_same(store, corpus, files, _turns, tmp_path / "whole.db")
