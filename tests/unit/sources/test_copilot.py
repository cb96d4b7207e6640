"""The Copilot CLI reader, event by event, on shapes the real CLI writes that the real-CLI fixture
(tests/unit/test_real_cli_copilot.py) does not hold: an `assistant.reasoning` event before the
message that repeats it, a failed edit, a tool run by the user, an MCP tool, Checkpoint's own answer,
skill injections and autopilot continuations, a change of folder, streaming deltas and events marked
ephemeral (as `--output-format json` saves them), unknown types, and where files are claimed.

Field names are those of the schema the CLI ships (schemas/session-events.schema.json in
@github/copilot-linux-x64 1.0.102); the ephemeral `assistant.reasoning` line is the shape of public
`--output-format json` output (reasoningId, empty content, top-level `"ephemeral": true`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from checkpoint.model import AGENT_ANSWER_MARK, Role
from checkpoint.sources import READERS, locate
from checkpoint.sources.base import FileRole
from checkpoint.sources.copilot import CopilotReader
from tests.unit.test_readers import dropped, dropped_records, parse_all, turns

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
    assert READERS["claude"].locate(state / SID / "events.jsonl") is None
    assert list(READERS).index("copilot") < list(READERS).index("claude")
    # Other files under ~/.copilot are nobody's transcripts: a .jsonl the agent left in the session's
    # own files/ folder is not a session.
    assert READER.locate(tmp_path / ".copilot" / "logs" / "process-1.jsonl") is None
    assert locate(state / SID / "files" / "notes.jsonl") is None
    assert READER.locate(state / SID / "workspace.yaml") is None
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
