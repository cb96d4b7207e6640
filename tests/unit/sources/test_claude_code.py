"""The Claude Code reader: synthetic lines in the shapes docs/architecture.md ("Transcript formats")
describes and Claude Code 2.1.3xx writes (queued prompts, machine notifications, empty thinking and
blank turns, terminal escapes, unknown record types), and the real public samples under tests/data/samples/."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.model import AGENT_ANSWER_MARK, AGENT_CONTEXT_MARK, FileEdit, Role, SessionInfo, TurnDraft
from checkpoint.sources import locate
from checkpoint.sources.base import FileRole, ParsedLine, line_id
from checkpoint.sources.tailer import SETTLE_SECONDS
from checkpoint.store import Store
from tests.support.claude_code_lines import CLAUDE, S, assistant, env, tool_result, user
from tests.support.reader_lines import dropped, dropped_records, parse_all, raw_of, sample_lines, session, turns
from tests.support.samples import CLAUDE_SAMPLES, SAMPLES

NOTIFICATION = ("<task-notification>\n<task-id>b0be39e</task-id>\n<status>completed</status>\n"
                "<summary>Background command \"Run tests\" completed (exit code 0)</summary>\n</task-notification>")


def queue(operation: str, ts: str, content: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "queue-operation", "operation": operation, "timestamp": ts, "sessionId": S}
    if content is not None:
        record["content"] = content
    return record


# -- Claude Code (docs/architecture.md, "Claude Code transcripts") ----------------------------------

CLAUDE_S6 = [
    r'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"11111111-1111-4111-8111-111111111111","cwd":"/home/me/w","gitBranch":"main","version":"2.1.50","isSidechain":false,"userType":"external","timestamp":"2026-01-05T10:00:00.000Z","message":{"role":"user","content":"rename foo to bar in a.py"}}',  # noqa: E501
    r'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"11111111-1111-4111-8111-111111111111","cwd":"/home/me/w","version":"2.1.50","isSidechain":false,"timestamp":"2026-01-05T10:00:02.000Z","requestId":"req_1","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"toolu_1","name":"Edit","input":{"file_path":"/home/me/w/a.py","old_string":"foo","new_string":"bar","replace_all":false}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":40}}}',
    r'{"type":"user","uuid":"u2","parentUuid":"a1","sourceToolAssistantUUID":"a1","sessionId":"11111111-1111-4111-8111-111111111111","cwd":"/home/me/w","timestamp":"2026-01-05T10:00:03.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"The file /home/me/w/a.py has been updated."}]},"toolUseResult":{"filePath":"/home/me/w/a.py","oldString":"foo","newString":"bar","originalFile":"foo()\n","structuredPatch":[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-foo()","+bar()"]}],"userModified":false,"replaceAll":false}}',  # noqa: E501
    r'{"type":"file-history-snapshot","messageId":"u1","snapshot":{"messageId":"u1","trackedFileBackups":{"a.py":{"backupFileName":"0a1b2c3d4e5f6a7b@v1","version":1,"backupTime":"2026-01-05T10:00:02.500Z"}},"timestamp":"2026-01-05T10:00:00.000Z"},"isSnapshotUpdate":true}',
]


def test_claude_prompt_edit_and_its_result() -> None:
    parsed = parse_all(CLAUDE, CLAUDE_S6)
    assert turns(parsed) == [
        TurnDraft("u1", Role.USER, "rename foo to bar in a.py", (), "2026-01-05T10:00:00.000Z", None),
        TurnDraft("a1", Role.TOOL,
                  '[tool Edit] {"file_path":"/home/me/w/a.py","old_string":"foo","new_string":"bar",'
                  '"replace_all":false}', (), "2026-01-05T10:00:02.000Z", "msg_1",
                  edits=(FileEdit("/home/me/w/a.py", "bar"),)),
        TurnDraft("u2", Role.TOOL, "[tool result]\nThe file /home/me/w/a.py has been updated.", ("/home/me/w/a.py",),
                  "2026-01-05T10:00:03.000Z", None),
    ]
    assert parsed[3] == ParsedLine()  # the snapshot: bookkeeping
    assert session(parsed) == ("/home/me/w", "rename foo to bar in a.py")
    assert parsed[0].session == SessionInfo(id="", agent="claude", cwd="/home/me/w", title="rename foo to bar in a.py",
                                            cwds=("/home/me/w",))


def test_claude_ids_are_stable_across_a_reread() -> None:
    queued = raw_of({"type": "attachment", "timestamp": "2026-01-05T10:00:09.000Z",
                     "attachment": {"type": "queued_command", "prompt": "no uuid on this one"}})
    lines = [*CLAUDE_S6, queued]
    first, second = turns(parse_all(CLAUDE, lines)), turns(parse_all(CLAUDE, lines))
    assert first == second
    assert [t.id for t in first] == ["u1", "a1", "u2", line_id(queued)]


@pytest.mark.parametrize(
    ("result", "is_error", "files"),
    [
        ({"filePath": "/w/a.py", "structuredPatch": [], "oldString": "a", "newString": "b"}, None, ("/w/a.py",)),
        ({"type": "create", "filePath": "/w/new.md", "content": "x", "structuredPatch": []}, False, ("/w/new.md",)),
        ({"type": "update", "filePath": "/w/old.md", "content": "y"}, None, ("/w/old.md",)),
        ({"filePath": "/w/m.py", "edits": [{"old_string": "a", "new_string": "b"}], "structuredPatch": [],
          "originalFileContents": "a"}, None, ("/w/m.py",)),  # MultiEdit
        ({"notebook_path": "/w/n.ipynb", "new_source": "x = 1", "cell_id": "c1", "edit_mode": "replace",
          "cell_type": "code", "language": "python"}, None, ("/w/n.ipynb",)),  # NotebookEdit
        ({"notebook_path": "/w/n.ipynb", "new_source": "x", "edit_mode": "replace",
          "error": "Cell with ID \"c9\" not found in notebook."}, None, ()),  # NotebookEdit that failed
        ("User rejected tool use", True, ()),
        ("Error: String to replace not found in file.", True, ()),
        ({"filePath": "/w/a.py", "structuredPatch": []}, True, ()),  # marked failed: touched nothing
        ({"type": "text", "file": {"filePath": "/w/a.py", "content": "x", "numLines": 1}}, None, ()),  # Read
        ({"stdout": "", "stderr": "", "interrupted": False}, None, ()),  # Bash: shell edits are invisible
        ({"filenames": ["/w/a.py"], "numFiles": 1}, None, ()),  # Glob
    ],
)
def test_claude_files_touched_are_applied_edits_only(
    result: Any, is_error: bool | None, files: tuple[str, ...]
) -> None:
    [turn] = turns(parse_all(CLAUDE, [tool_result("r1", "done", result, is_error)]))
    assert turn == TurnDraft("r1", Role.TOOL, "[tool result (error)]\ndone" if is_error else "[tool result]\ndone",
                             files, "2026-01-05T10:00:00.000Z", None)


def test_claude_message_split_over_lines_keeps_each_block_once() -> None:
    think = {"type": "thinking", "thinking": "Let me look.", "signature": "sig"}
    text = {"type": "text", "text": "I will read a.py first."}
    use1 = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/w/a.py"}}
    use2 = {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"file_path": "/w/b.py"}}
    lines = [
        user("u0", "look at the files"),
        assistant("a1", "msg_X", think),
        assistant("a2", "msg_X", text),
        assistant("a3", "msg_X", use1),
        tool_result("u1", "contents of a", {"type": "text", "file": {"filePath": "/w/a.py"}}),  # interleaved
        assistant("a4", "msg_X", use2),
        # A line repeating blocks already written for the same message (a copy, new uuid).
        assistant("a5", "msg_X", think, text),
    ]
    parsed = parse_all(CLAUDE, lines)
    assert [(t.id, t.role, t.text, t.message_id) for t in turns(parsed)] == [
        ("u0", Role.USER, "look at the files", None),
        ("a1", Role.ASSISTANT, "(thinking) Let me look.", "msg_X"),
        ("a2", Role.ASSISTANT, "I will read a.py first.", "msg_X"),
        ("a3", Role.TOOL, '[tool Read] {"file_path":"/w/a.py"}', "msg_X"),
        ("u1", Role.TOOL, "[tool result]\ncontents of a", None),
        ("a4", Role.TOOL, '[tool Read] {"file_path":"/w/b.py"}', "msg_X"),
    ]
    assert dropped_records(parsed) == Counter({"message_copy": 1})
    assert dropped(parsed)["message_copy"] == len("Let me look.") + len("I will read a.py first.")
    # The same block under another message is not a copy.
    again = parse_all(CLAUDE, [assistant("b1", "msg_Y", text)], state={})
    assert [t.text for t in turns(again)] == ["I will read a.py first."]


def test_claude_progress_copies_are_left_out_and_counted() -> None:
    progress = env("progress", "p1", data={"type": "agent_progress", "agentId": "a7be2f0", "message": {
        "type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "sub says hi"}]}}},
        toolUseID="toolu_9", parentToolUseID="toolu_9")
    hook = env("progress", "p2", data={"type": "hook_progress", "hookEvent": "PreToolUse", "command": "x"})
    parsed = parse_all(CLAUDE, [progress, hook])
    assert turns(parsed) == []
    assert dropped_records(parsed) == Counter({"progress_copy": 2})
    assert dropped(parsed)["progress_copy"] == len(raw_of(progress)) + len(raw_of(hook))


def test_claude_compaction_summary_is_left_out_and_counted() -> None:
    lines = [
        r'{"type":"assistant","uuid":"a9","parentUuid":"u9","sessionId":"S","cwd":"/w","timestamp":"2026-01-01T10:00:00.000Z","message":{"id":"msg_9","role":"assistant","content":[{"type":"text","text":"Done."}]}}',
        r'{"type":"system","subtype":"compact_boundary","uuid":"cb","parentUuid":null,"logicalParentUuid":"a9","sessionId":"S","cwd":"/w","content":"Conversation compacted","level":"info","compactMetadata":{"trigger":"auto","preTokens":161000},"timestamp":"2026-01-01T10:05:00.000Z"}',  # noqa: E501
        r'{"type":"user","uuid":"cs","parentUuid":"cb","isCompactSummary":true,"isVisibleInTranscriptOnly":true,"sessionId":"S","cwd":"/w","message":{"role":"user","content":"This session is being continued from a previous conversation ..."},"timestamp":"2026-01-01T10:05:00.001Z"}',  # noqa: E501
    ]
    parsed = parse_all(CLAUDE, lines)
    assert turns(parsed) == [TurnDraft("a9", Role.ASSISTANT, "Done.", (), "2026-01-01T10:00:00.000Z", "msg_9")]
    assert dropped(parsed) == Counter(
        {"compaction_summary": len("This session is being continued from a previous conversation ...")})
    assert session(parsed) == ("/w", None)  # a summary is not a title


def test_claude_compaction_summariser_conversation_is_left_out() -> None:
    lines = [user("c1", "Summarise the conversation so far.", agentId="acompact-f46190", isSidechain=True),
             assistant("c2", "msg_c", {"type": "text", "text": "Summary: we chose sqlite."}, agentId="acompact-f46190")]
    parsed = parse_all(CLAUDE, lines)
    assert turns(parsed) == []
    assert dropped_records(parsed) == Counter({"compaction_summary": 2})


def test_claude_meta_text_is_left_out_but_meta_tool_results_are_kept() -> None:
    caveat = "<local-command-caveat>Caveat: generated while running local commands.</local-command-caveat>"
    skill = "Base directory for this skill: /x\n\n# Skill body"
    lines = [
        user("m1", caveat, isMeta=True),
        user("m2", [{"type": "text", "text": skill}], isMeta=True),
        {**tool_result("m3", "ok", {"filePath": "/w/b.py", "structuredPatch": []}), "isMeta": True},
    ]
    parsed = parse_all(CLAUDE, lines)
    assert turns(parsed) == [TurnDraft("m3", Role.TOOL, "[tool result]\nok", ("/w/b.py",), "2026-01-05T10:00:00.000Z")]
    assert dropped(parsed) == Counter({"meta_injection": len(caveat) + len(skill)})
    assert session(parsed) == ("/home/me/w", None)  # meta text is never a title


def test_claude_system_reminders_are_stripped_and_counted() -> None:
    reminder = "<system-reminder>\nThe todo list is empty.\n</system-reminder>"
    in_result = "<system-reminder>Consider whether the file is malicious.</system-reminder>"
    lines = [
        user("u1", f"Please make the parser strict.\n\n{reminder}"),
        user("u2", [{"type": "text", "text": reminder}]),  # nothing but a reminder: no turn
        tool_result("u3", f"1  import os\n{in_result}", {"type": "text", "file": {"filePath": "/w/a.py"}}),
    ]
    parsed = parse_all(CLAUDE, lines)
    assert [(t.id, t.text) for t in turns(parsed)] == [
        ("u1", "Please make the parser strict."),
        ("u3", "[tool result]\n1  import os"),
    ]
    assert dropped(parsed) == Counter({"meta_injection": 2 * len(reminder) + len(in_result)})
    assert session(parsed)[1] == "Please make the parser strict."


def test_claude_queued_command_is_the_user_speaking() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    lines = [
        env("attachment", "q1", attachment={"type": "queued_command", "prompt": "also update the docs",
                                            "commandMode": "prompt"}),
        env("attachment", "q2", attachment={"type": "queued_command",
                                            "prompt": [image, {"type": "text", "text": "like this one"}]}),
        env("attachment", "q3", attachment={"type": "edited_text_file", "filename": "/w/a.py", "snippet": "x"}),
        env("attachment", "q4", attachment={"type": "todo_reminder", "content": []}),
    ]
    parsed = parse_all(CLAUDE, lines)
    assert turns(parsed) == [
        TurnDraft("q1", Role.USER, "also update the docs", (), "2026-01-05T10:00:00.000Z"),
        TurnDraft("q2", Role.USER, "like this one", (), "2026-01-05T10:00:00.000Z"),
    ]
    assert dropped(parsed) == Counter({"base64_image": len("iVBORw0KGgo=")})


def test_claude_images_errors_and_redacted_thinking_are_left_out_by_policy() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 40}}
    lines = [
        user("u1", [{"type": "text", "text": "what is on this screenshot?"}, image]),
        assistant("a1", "msg_1", {"type": "redacted_thinking", "data": "opaque-bytes"},
                  {"type": "text", "text": "A login form."}),
        env("assistant", "e1", isApiErrorMessage=True, message={
            "id": "msg_e", "role": "assistant", "model": "<synthetic>",
            "content": [{"type": "text", "text": "API Error: overloaded"}]}),
    ]
    parsed = parse_all(CLAUDE, lines)
    assert [(t.id, t.role, t.text) for t in turns(parsed)] == [
        ("u1", Role.USER, "what is on this screenshot?"),
        ("a1", Role.ASSISTANT, "A login form."),
    ]
    assert dropped(parsed) == Counter({"base64_image": 40, "redacted_thinking": len("opaque-bytes"),
                                       "api_error_message": len("API Error: overloaded")})


def test_claude_bookkeeping_is_ignored_and_unknown_types_are_counted() -> None:
    new_entry = {"type": "brand-new-entry", "uuid": "n1", "message": {"role": "user", "content": "not a prompt"}}
    lines: list[dict[str, Any]] = [
        new_entry,
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-01-05T10:00:00.000Z",
         "sessionId": S, "content": "queued text"},
        {"type": "mode", "sessionId": S, "mode": "normal"},
        {"type": "last-prompt", "sessionId": S, "lastPrompt": "hello", "leafUuid": "u1"},
        {"type": "system", "subtype": "stop_hook_summary", "uuid": "s1", "hookCount": 1},
        {"silly": "this"},
        {"type": "user", "uuid": "bad", "message": "error"},  # wrong field types
        {"type": "assistant", "uuid": "bad2", "message": {"contenst": []}},
    ]
    parsed = parse_all(CLAUDE, lines)
    assert turns(parsed) == []
    # New record types appear every few releases: skipped, but counted (the first and the typeless one).
    assert dropped_records(parsed) == Counter({"unknown_record": 2})
    assert dropped(parsed)["unknown_record"] == len(raw_of(new_entry)) + len(raw_of({"silly": "this"}))


def test_claude_title_newest_of_the_strongest_source_wins() -> None:
    state: dict[str, Any] = {}

    def title_after(record: dict[str, Any]) -> str | None:
        p = parse_all(CLAUDE, [record], state)[0]
        return p.session.title if p.session else None

    assert title_after(user("u1", [{"type": "text", "text": "[Request interrupted by user]"}])) is None
    assert title_after(user("u2", "<command-name>/mcp</command-name>")) is None
    assert title_after(user("u3", "Make   the parser\nstrict")) == "Make the parser strict"
    assert title_after(user("u4", "and another thing")) is None
    assert title_after({"type": "summary", "summary": "Parser work", "leafUuid": "u4"}) == "Parser work"
    assert title_after({"type": "ai-title", "sessionId": S, "aiTitle": "Strict parser"}) == "Strict parser"
    assert title_after({"type": "custom-title", "sessionId": S, "customTitle": "Mine"}) == "Mine"
    assert title_after({"type": "ai-title", "sessionId": S, "aiTitle": "Later AI title"}) is None
    assert title_after({"type": "custom-title", "sessionId": S, "customTitle": "Renamed"}) == "Renamed"


# -- Claude Code: where files sit ---------------------------------------------------------------


def test_claude_locate_main_and_subagent_files(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-me-w"
    legacy = project / "agent-b2c3d4e.jsonl"
    project.mkdir(parents=True)
    legacy.write_text(json.dumps(user("x1", "find it", isSidechain=True, agentId="b2c3d4e")) + "\n")
    assert locate(project / f"{S}.jsonl") == FileRole("claude", S)
    assert locate(project / S / "subagents" / "agent-a7be2f0.jsonl") == FileRole("claude", S, subagent=True)
    assert locate(project / S / "subagents" / "workflows" / "wf1" / "agent-w1.jsonl") == FileRole(
        "claude", S, subagent=True)
    assert locate(legacy) == FileRole("claude", S, subagent=True)
    assert locate(project / S / "subagents" / "workflows" / "wf1" / "journal.jsonl") is None
    assert locate(project / S / "tool-results" / "toolu_1.jsonl") is None


def test_claude_legacy_subagent_file_is_claimed_once_its_session_is_known(tmp_path: Path) -> None:
    legacy = tmp_path / "agent-b2c3d4e.jsonl"
    legacy.write_bytes(b"")
    assert locate(legacy, [CLAUDE]) is None
    legacy.write_bytes(b'{"type":"user","sessionId":"' + S.encode() + b'","message":{"role":"us')
    assert locate(legacy, [CLAUDE]) == FileRole("claude", S, subagent=True)  # the envelope names it already
    legacy.write_bytes(b'{"type":"summary","summary":"no session here"}\n')
    assert locate(legacy, [CLAUDE]) == FileRole("claude", None, subagent=True)  # the content cannot tell


def _write_lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(raw_of(r) + b"\n" for r in records))


def test_claude_subagent_files_attach_to_the_parent_session(
    roots: tuple[Path, Path], settings: Settings, store: Store
) -> None:
    project = roots[0] / "-home-me-w"
    parent = project / f"{S}.jsonl"
    task = {"type": "tool_use", "id": "toolu_t", "name": "Task",
            "input": {"description": "find config", "prompt": "Find the config", "subagent_type": "general-purpose"}}
    _write_lines(parent, [
        user("p1", "Where is the config loaded?"),
        assistant("p2", "msg_p", task),
        env("progress", "p3", data={"type": "agent_progress", "agentId": "a7be2f0", "message": {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Found it."}]}}}),
        tool_result("p4", "config.py loads it", {"status": "completed", "agentId": "a7be2f0", "content": []}),
    ])
    side = {"isSidechain": True}
    _write_lines(project / S / "subagents" / "agent-a7be2f0.jsonl", [
        user("s1", "Find the config", agentId="a7be2f0", **side),
        assistant("s2", "msg_s", {"type": "text", "text": "Found it."}, agentId="a7be2f0", **side),
    ])
    (project / S / "subagents" / "agent-a7be2f0.meta.json").write_text('{"agentType":"general-purpose"}')
    _write_lines(project / S / "subagents" / "workflows" / "wf1" / "agent-w1.jsonl", [
        user("w1", "workflow step", agentId="w1", **side)])
    _write_lines(project / S / "subagents" / "workflows" / "wf1" / "journal.jsonl", [{"type": "step", "n": 1}])
    (project / S / "tool-results").mkdir(parents=True)
    (project / S / "tool-results" / "toolu_t.txt").write_text("big output")
    legacy = project / "agent-b2c3d4e.jsonl"
    legacy.write_bytes(b"")  # created before its first line: must not be filed under a made-up session

    report = pipeline.scan(store, settings)
    _write_lines(legacy, [user("l1", "legacy warmup", agentId="b2c3d4e", **side),
                          assistant("l2", "msg_l", {"type": "text", "text": "Warm."}, agentId="b2c3d4e", **side)])
    report2 = pipeline.scan(store, settings)

    assert (report.turns_added, report2.turns_added) == (6, 2)
    [only] = store.session_counts()  # one session: no made-up one for any sub-agent file
    assert (only.id, only.title, only.cwd, only.turns) == (S, "Where is the config loaded?", "/home/me/w", 8)
    rows = store.conn.execute("SELECT id, session_id FROM turns ORDER BY seq").fetchall()
    assert rows == [(t, S) for t in ("p1", "p2", "p4", "s1", "s2", "w1", "l1", "l2")]
    assert only.dropped["progress_copy"]["records"] == 1
    files = {Path(p).relative_to(project).as_posix(): (row.session_id, row.subagent)
             for p, row in store.file_cursors().items()}
    assert files == {
        f"{S}.jsonl": (S, False),
        f"{S}/subagents/agent-a7be2f0.jsonl": (S, True),
        f"{S}/subagents/workflows/wf1/agent-w1.jsonl": (S, True),
        "agent-b2c3d4e.jsonl": (S, True),
    }


def test_claude_edge_cases_sample_reports_non_object_lines(
    roots: tuple[Path, Path], settings: Settings, store: Store
) -> None:
    path = roots[0] / "-tmp" / "edge-cases-session.jsonl"
    path.parent.mkdir()
    path.write_bytes((SAMPLES / "claude" / "claude-code-log__edge_cases.jsonl").read_bytes())
    old = path.stat().st_mtime - SETTLE_SECONDS - 1  # its last line has no newline: let it settle
    os.utime(path, (old, old))
    report = pipeline.scan(store, settings)
    expected = {(str(path), 13, "not a JSON object but str"), (str(path), 15, "not a JSON object but int"),
                (str(path), 16, "not a JSON object but list")}
    assert {(p.path, p.line, p.message) for p in store.problems()} == expected
    assert {f"{p}:{n}: {m}" for p, n, m in expected} <= {p.text for p in report.problems}
    assert {(p, n, m) for p, n, m in expected} <= {(p.path, p.line, p.message) for p in report.problems}
    [info] = store.session_counts()
    # the last line (a summary, no newline) was read once settled: it titles the session
    assert info.title is not None and info.title.startswith("Tested various edge cases")
    assert info.problems == 3
    row = store.get_file(str(path))
    assert row is not None and (row.cursor.line_no, row.cursor.offset) == (19, path.stat().st_size)



def test_claude_checkpoints_own_context_and_answers_are_left_out_and_counted() -> None:
    """What Checkpoint fed the agent comes back in the transcript; it is counted, never read as turns.
    Other hooks' context and other tools' results are what they were (ignored, kept)."""
    ours = f"{AGENT_CONTEXT_MARK} decisions Checkpoint recorded in /w.\n- Decision abc (recorded 2026-11-01): We use X."
    answer = AGENT_ANSWER_MARK + '"search_decisions", "items": [{"statement": "We use X."}]}'
    lines = [
        env("attachment", "a1", attachment={"type": "hook_success", "hookEvent": "SessionStart", "content": "",
                                            "stdout": json.dumps({"hookSpecificOutput": {"additionalContext": ours}})}),
        env("attachment", "a2", attachment={"type": "hook_additional_context", "content": [ours],
                                            "hookEvent": "SessionStart"}),
        env("attachment", "a3", attachment={"type": "hook_additional_context", "content": ["Another hook's note."]}),
        user("u1", f"Go on.\n<system-reminder>SessionStart hook additional context: {ours}</system-reminder>"),
        user("u2", [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": answer}]}]),
        user("u3", [{"type": "tool_result", "tool_use_id": "t2", "content": answer}]),
        tool_result("u4", "1  import os", {"type": "text"}),
    ]
    parsed = parse_all(CLAUDE, lines)
    assert [(t.id, t.text) for t in turns(parsed)] == [
        ("u1", "Go on."), ("u2", "[tool result]\n"), ("u3", "[tool result]\n"), ("u4", "[tool result]\n1  import os"),
    ]
    assert dropped_records(parsed)["checkpoint_context"] == 5
    assert "meta_injection" not in dropped(parsed)


def test_claude_real_transcript_with_checkpoints_context_and_answer() -> None:
    """Written by the real Claude Code 2.1.328 with the plugin (tests/e2e/test_claude_plugin.py): the
    SessionStart context (a hook_success and a hook_additional_context attachment) and the MCP answer
    (a tool result) are left out under checkpoint_context; the prompt and the answers are turns."""
    lines = sample_lines(SAMPLES.parent / "agent" / "claude_plugin_session.jsonl")
    parsed = parse_all(CLAUDE, lines)
    texts = [t.text for t in turns(parsed)]
    assert dropped_records(parsed)["checkpoint_context"] == 3
    assert not any(AGENT_CONTEXT_MARK in t or AGENT_ANSWER_MARK in t or "SQLite for the store" in t for t in texts)
    assert "Which store did we pick?" in texts
    assert "We'll keep using what was decided before." in texts
    assert any(t.startswith("[tool mcp__plugin_checkpoint_checkpoint__search_decisions]") for t in texts)

# -- Claude Code: the real samples --------------------------------------------------------------

@pytest.mark.parametrize("path", CLAUDE_SAMPLES, ids=lambda p: p.stem)
def test_claude_samples_turns_carry_their_line(path: Path) -> None:
    for raw in sample_lines(path):
        parsed = parse_all(CLAUDE, [raw])
        if not turns(parsed):
            continue
        obj = json.loads(raw)
        [turn] = turns(parsed)  # one line, at most one turn
        assert turn.id == (obj["uuid"] if isinstance(obj.get("uuid"), str) else line_id(raw))
        assert turn.timestamp == (obj["timestamp"] if isinstance(obj.get("timestamp"), str) else None)
        if obj["type"] == "assistant":
            assert turn.message_id == obj["message"].get("id")
            assert turn.role is (Role.ASSISTANT if any(
                b.get("type") in ("text", "thinking") for b in obj["message"]["content"]) else Role.TOOL)
        elif obj["type"] == "user":
            content = obj["message"]["content"]
            has_result = isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
            assert turn.role is (Role.TOOL if has_result else Role.USER)
        else:
            assert (obj["type"], obj["attachment"]["type"], turn.role) == ("attachment", "queued_command", Role.USER)
        # progress, compaction summaries and meta text never become turns
        assert obj["type"] != "progress" and not obj.get("isCompactSummary")


def test_claude_sample_subagent_progress_copies_and_applied_write() -> None:
    path = SAMPLES / "claude" / "spotter__subagent.jsonl"
    lines = sample_lines(path)
    parsed = parse_all(CLAUDE, lines)
    progress_lines = sum(json.loads(r).get("type") == "progress" for r in lines)
    assert dropped_records(parsed)["progress_copy"] == progress_lines == 44
    # agent_progress copies of the sub-agent's messages are not in any turn
    copied = [json.loads(r)["data"]["message"] for r in lines
              if json.loads(r).get("type") == "progress" and json.loads(r)["data"].get("type") == "agent_progress"]
    copied_ids = {m["uuid"] for m in copied}
    assert copied_ids and not copied_ids & {t.id for t in turns(parsed)}
    touched = [(t.id, t.files) for t in turns(parsed) if t.files]
    assert touched == [("8e7ee301-cc24-4f92-82e8-e6c3c47c3db0", ("/home/marco/projects/spotter/plan.md",))]
    assert session(parsed) == ("/home/marco/projects/spotter", "create the beads")
    # no text block is repeated within one API message
    by_message: dict[str, list[str]] = {}
    for t in turns(parsed):
        if t.message_id:
            by_message.setdefault(t.message_id, []).append(t.text)
    assert by_message and all(len(texts) == len(set(texts)) for texts in by_message.values())


def test_claude_sample_rejected_tools_touch_nothing() -> None:
    parsed = parse_all(CLAUDE, sample_lines(SAMPLES / "claude" / "spotter__short.jsonl"))
    results = [t for t in turns(parsed) if t.text.startswith("[tool result")]
    assert len(results) == 2 and all(t.text.startswith("[tool result (error)]") and t.files == () for t in results)
    assert session(parsed) == ("/home/marco/projects/spotter", "mix phx.server doesnt seem to start")


def test_claude_sample_shape_catalogue() -> None:
    parsed = parse_all(CLAUDE, sample_lines(SAMPLES / "claude" / "agent-sessions__small.jsonl"))
    assert session(parsed) == ("/tmp", "Stage0 small fixture")  # the custom title wins
    records = dropped_records(parsed)
    assert records["compaction_summary"] == 1 and records["api_error_message"] == 1
    assert records["progress_copy"] == 1
    queued = [t for t in turns(parsed) if t.role is Role.USER and t.text == "[trimmed for fixture]"]
    assert queued  # queued_command attachments are prompts
    # the isMeta tool result (u2) and the rejected one (u2b) are kept as tool turns
    assert [(t.id, t.role) for t in turns(parsed) if t.id in ("u2", "u2b")] == [("u2", Role.TOOL), ("u2b", Role.TOOL)]


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
