"""The Codex reader: synthetic lines in the shapes docs/architecture.md ("Transcript formats") describes
and Codex 0.169 writes (sub-agents and their copies, web searches, blank answers, unknown types), and
the real public samples under tests/data/samples/."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.model import FileEdit, Role, SessionInfo, TurnDraft
from checkpoint.sources import locate
from checkpoint.sources.base import FileRole, ParsedLine, line_id
from checkpoint.store import Store
from tests.support.codex_lines import CODEX, CODEX_ID, codex_line, write_rollout
from tests.support.reader_lines import dropped, dropped_records, parse_all, sample_lines, session, turns
from tests.support.samples import CODEX_SAMPLES

# -- Codex (docs/architecture.md, "Codex rollouts") ---------------------------------------------------

CODEX_S6 = [
    r'{"timestamp":"2026-01-05T10:00:00.000Z","type":"session_meta","payload":{"id":"0199bbbb-0000-7000-8000-000000000001","timestamp":"2026-01-05T10:00:00.000Z","cwd":"/home/me/w","originator":"codex_cli_rs","cli_version":"0.120.0","source":"cli","model_provider":"openai","git":{"branch":"main"}}}',
    r'{"timestamp":"2026-01-05T10:00:01.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1","model_context_window":258400}}',
    r'{"timestamp":"2026-01-05T10:00:01.001Z","type":"turn_context","payload":{"turn_id":"t1","cwd":"/home/me/w","approval_policy":"on-request","sandbox_policy":{"type":"workspace-write","network_access":false},"model":"gpt-x","summary":"auto"}}',
    r'{"timestamp":"2026-01-05T10:00:01.002Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"rename foo to bar in a.py"}]}}',  # noqa: E501
    r'{"timestamp":"2026-01-05T10:00:01.002Z","type":"event_msg","payload":{"type":"user_message","message":"rename foo to bar in a.py","images":[]}}',  # noqa: E501
    r'{"timestamp":"2026-01-05T10:00:04.000Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"call_1","name":"apply_patch","input":"*** Begin Patch\n*** Update File: a.py\n@@\n-foo()\n+bar()\n*** End Patch\n"}}',  # noqa: E501
    r'{"timestamp":"2026-01-05T10:00:04.300Z","type":"event_msg","payload":{"type":"patch_apply_end","call_id":"call_1","turn_id":"t1","success":true,"stdout":"Success. Updated the following files:\nM a.py\n","stderr":"","changes":{"/home/me/w/a.py":{"type":"update","unified_diff":"@@ -1 +1 @@\n-foo()\n+bar()\n","move_path":null}}}}',  # noqa: E501
    r'{"timestamp":"2026-01-05T10:00:04.301Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_1","output":"Success. Updated the following files:\nM a.py\n"}}',  # noqa: E501
    r'{"timestamp":"2026-01-05T10:00:06.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"Done."}}',
]


def test_codex_turn_with_a_patch() -> None:
    parsed = parse_all(CODEX, CODEX_S6)
    raw = [line.encode() for line in CODEX_S6]
    assert turns(parsed) == [
        TurnDraft(line_id(raw[3]), Role.USER, "rename foo to bar in a.py", (), "2026-01-05T10:00:01.002Z"),
        TurnDraft(line_id(raw[5]), Role.TOOL,
                  "[tool apply_patch] *** Begin Patch\n*** Update File: a.py\n@@\n-foo()\n+bar()\n*** End Patch\n",
                  (), "2026-01-05T10:00:04.000Z", edits=(FileEdit("/home/me/w/a.py", "bar()"),)),
        TurnDraft(line_id(raw[6]), Role.TOOL, "[patch applied]\nupdate /home/me/w/a.py", ("/home/me/w/a.py",),
                  "2026-01-05T10:00:04.300Z"),
        TurnDraft(line_id(raw[7]), Role.TOOL, "[tool result]\nSuccess. Updated the following files:\nM a.py\n", (),
                  "2026-01-05T10:00:04.301Z"),
    ]
    # task_complete.last_agent_message repeats the last answer: a copy too.
    assert dropped(parsed) == Counter({"event_copy": len("rename foo to bar in a.py") + len("Done.")})
    assert session(parsed) == ("/home/me/w", "rename foo to bar in a.py")
    assert turns(parse_all(CODEX, CODEX_S6)) == turns(parsed)  # stable on a re-read


def test_codex_keeps_response_items_and_counts_event_copies() -> None:
    lines = [
        codex_line("response_item", {"type": "message", "role": "assistant", "phase": "final_answer",
                                     "content": [{"type": "output_text", "text": "We'll use sqlite."}]}),
        codex_line("event_msg", {"type": "agent_message", "message": "We'll use sqlite."}),
        codex_line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Weighing."}],
                                     "content": None, "encrypted_content": "gAAAA" * 4}),
        codex_line("event_msg", {"type": "agent_reasoning", "text": "Weighing."}),
        codex_line("response_item", {"type": "function_call", "name": "exec_command", "call_id": "c1",
                                     "arguments": "{\"cmd\":\"ls\"}"}),
        codex_line("response_item", {"type": "function_call_output", "call_id": "c1",
                                     "output": {"type": "input_text", "text": "a.py\n"}}),
        codex_line("response_item", {"type": "local_shell_call", "call_id": "c2", "status": "completed",
                                     "action": {"type": "exec", "command": ["git", "status"]}}),
        codex_line("event_msg", {"type": "token_count", "info": None}),
        codex_line("event_msg", {"type": "token_count", "info": None}),
    ]
    parsed = parse_all(CODEX, lines)
    assert [(t.role, t.text) for t in turns(parsed)] == [
        (Role.ASSISTANT, "We'll use sqlite."),
        (Role.ASSISTANT, "(reasoning) Weighing."),
        (Role.TOOL, '[tool exec_command] {"cmd":"ls"}'),
        (Role.TOOL, "[tool result]\na.py\n"),
        (Role.TOOL, "[shell] git status"),
    ]
    assert dropped(parsed) == Counter({"event_copy": len("We'll use sqlite.") + len("Weighing."),
                                       "encrypted_reasoning": 20})


def test_codex_injected_context_is_left_out_and_counted() -> None:
    agents = "# AGENTS.md instructions for /home/me/w\n\n<INSTRUCTIONS>\nUse tabs.\n</INSTRUCTIONS>"
    envc = "<environment_context>\n  <cwd>/home/me/w</cwd>\n  <approval_policy>on-request</approval_policy>\n"
    def message(role: str, *content: dict[str, Any]) -> str:
        return codex_line("response_item", {"type": "message", "role": role, "content": list(content)})

    lines = [
        message("developer", {"type": "input_text", "text": "<permissions>sandboxed</permissions>"}),
        message("user", {"type": "input_text", "text": agents}),
        message("user", {"type": "input_text", "text": envc}),
        message("user", {"type": "input_text", "text": "<user_instructions>be brief</user_instructions>"}),
        message("user", {"type": "input_text", "text": "what is this?"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBOR"}),
    ]
    parsed = parse_all(CODEX, lines)
    assert [(t.role, t.text) for t in turns(parsed)] == [(Role.USER, "what is this?")]
    assert dropped_records(parsed) == Counter({"injected_context": 4, "base64_image": 1})
    assert dropped(parsed)["base64_image"] == len("data:image/png;base64,iVBOR")
    assert session(parsed) == ("/home/me/w", "what is this?")  # the cwd named by the environment context


def test_codex_failed_patch_touches_nothing_and_relative_paths_resolve_against_the_turn_cwd() -> None:
    lines = [
        codex_line("turn_context", {"turn_id": "t2", "cwd": "/home/me/w/sub"}),
        codex_line("event_msg", {"type": "patch_apply_end", "call_id": "c1", "success": False,
                                 "changes": {"/home/me/w/a.py": {"type": "update"}}}),
        codex_line("event_msg", {"type": "patch_apply_end", "call_id": "c2", "success": True,
                                 "changes": {"docs/new.md": {"type": "add"}, "/abs/x.py": {"type": "delete"}}}),
    ]
    [turn] = turns(parse_all(CODEX, lines))
    assert (turn.text, turn.files) == ("[patch applied]\nadd docs/new.md\ndelete /abs/x.py",
                                       ("/home/me/w/sub/docs/new.md", "/abs/x.py"))


def test_codex_fork_keeps_the_first_session_meta() -> None:
    lines = [
        codex_line("session_meta", {"id": "0199aaaa-0000-7000-8000-000000000001", "cwd": "/w/fork",
                                    "forked_from_id": "0199aaaa-0000-7000-8000-000000000000"}),
        codex_line("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": "continue from here"}]}),
        # the parent's history, copied: its meta (other id, other cwd) does not change the session
        codex_line("session_meta", {"id": "0199aaaa-0000-7000-8000-000000000000", "cwd": "/w/parent"}),
        codex_line("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": "original first prompt"}]}),
    ]
    parsed = parse_all(CODEX, lines)
    assert parsed[0].session == SessionInfo(id="", agent="codex", cwd="/w/fork", cwds=("/w/fork",))
    assert parsed[2] == ParsedLine()
    assert session(parsed) == ("/w/fork", "continue from here")


def test_codex_fork_file_keeps_its_identity_through_a_scan(
    roots: tuple[Path, Path], settings: Settings, store: Store
) -> None:
    fork_id = "0199aaaa-0000-7000-8000-000000000001"
    path = roots[1] / "2026" / "03" / "01" / f"rollout-2026-03-01T09-00-00-{fork_id}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join([
        codex_line("session_meta", {"id": fork_id, "cwd": "/w/fork"}),
        codex_line("session_meta", {"id": "0199aaaa-0000-7000-8000-000000000000", "cwd": "/w/parent"}),
        codex_line("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": "go on"}]}),
    ]) + "\n")
    pipeline.scan(store, settings)
    [info] = store.session_counts()
    assert (info.id, info.agent, info.cwd, info.title, info.turns) == (fork_id, "codex", "/w/fork", "go on", 1)


LEGACY = [
    r'{"id":"5f0c0000-0000-4000-8000-000000000000","timestamp":"2025-08-20T13:20:47.060Z","instructions":null,"git":{"branch":"main"}}',
    r'{"record_type":"state"}',
    r'{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/home/me/legacy</cwd>\n</environment_context>"}]}',  # noqa: E501
    r'{"type":"message","role":"user","content":[{"type":"input_text","text":"yes"}]}',
    r'{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}',
    r'{"type":"message","role":"user","content":[{"type":"input_text","text":"yes"}]}',
    r'{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"c1"}',
    r'{"record_type":"state"}',
]


def test_codex_legacy_rollout_without_envelope() -> None:
    parsed = parse_all(CODEX, LEGACY)
    got = turns(parsed)
    assert [(t.role, t.text, t.timestamp) for t in got] == [
        (Role.USER, "yes", None),
        (Role.ASSISTANT, "Done.", None),
        (Role.USER, "yes", None),  # said twice: two turns
        (Role.TOOL, '[tool shell] {"command":["bash","-lc","ls"]}', None),
    ]
    assert len({t.id for t in got}) == 4
    assert got[0].id == line_id(LEGACY[3].encode())
    assert turns(parse_all(CODEX, LEGACY)) == got  # the same ids on a re-read
    assert session(parsed) == ("/home/me/legacy", "yes")
    assert dropped_records(parsed) == Counter({"injected_context": 1})


def test_codex_legacy_rollout_through_a_scan_and_a_rescan(
    roots: tuple[Path, Path], settings: Settings, store: Store
) -> None:
    path = roots[1] / "rollout-2025-08-20T13-20-47-5f0c0000-0000-4000-8000-000000000000.jsonl"  # flat, old builds
    path.write_text("\n".join(LEGACY) + "\n")
    assert pipeline.scan(store, settings).turns_added == 4
    assert pipeline.scan(store, settings).turns_added == 0
    [info] = store.session_counts()
    assert (info.id, info.cwd, info.turns) == ("5f0c0000-0000-4000-8000-000000000000", "/home/me/legacy", 4)


# -- Codex: the real samples --------------------------------------------------------------------


def test_codex_sample_localpush() -> None:
    path = next(p for p in CODEX_SAMPLES if p.name.startswith("localpush"))
    lines = sample_lines(path)
    parsed = parse_all(CODEX, lines)
    objs = [json.loads(r) for r in lines]
    developer = sum(o["type"] == "response_item" and o["payload"].get("role") == "developer" for o in objs)
    copies = sum(o["type"] == "event_msg"
                 and o["payload"]["type"] in ("user_message", "agent_message", "agent_reasoning") for o in objs)
    assert dropped_records(parsed) == Counter({"injected_context": developer, "event_copy": copies,
                                               "encrypted_reasoning": 1})
    for raw, obj, p in zip(lines, objs, parsed, strict=True):
        if p.turns:
            assert p.turns == [TurnDraft(line_id(raw), p.turns[0].role, p.turns[0].text, (), obj["timestamp"])]
            assert obj["type"] == "response_item"
    assert session(parsed)[0] == "/redacted/path/da0ba47443"


def test_codex_sample_with_injected_agents_md() -> None:
    path = next(p for p in CODEX_SAMPLES if p.name.startswith("claude-code-transcripts"))
    parsed = parse_all(CODEX, sample_lines(path))
    prompt = ("can you analyse the MD files in this directory and determine if the info we have is clear enough to "
              "start planning the migration?")
    assert [(t.role, t.text) for t in turns(parsed)] == [(Role.USER, prompt)]
    assert dropped_records(parsed) == Counter({"injected_context": 2, "event_copy": 1})
    assert session(parsed) == ("/Users/macmini/Code/homelab-migration", prompt[:120])


def test_codex_sample_shape_catalogue() -> None:
    path = next(p for p in CODEX_SAMPLES if p.name.startswith("agent-sessions"))
    lines = sample_lines(path)
    parsed = parse_all(CODEX, lines)
    metas = [p for raw, p in zip(lines, parsed, strict=True) if json.loads(raw)["type"] == "session_meta"]
    assert len(metas) == 7
    first = SessionInfo(id="", agent="codex", cwd="/tmp/repo", cwds=("/tmp/repo",))
    assert [m.session for m in metas] == [first] + [None] * 6
    assert [t.files for t in turns(parsed) if t.files] == [("/tmp/repo/a.txt",)]
    assert session(parsed) == ("/tmp/repo", "List the files")
    assert next(t.text for t in turns(parsed) if t.text.startswith("[tool result]")) == "[tool result]\na.txt\n"


# -- Codex 0.169 -------------------------------------------------------------------------------------


PARENT = "01a231c7-1b38-74a1-917d-26ec62b0bac6"
CHILD = "01a231c7-1b9d-7c62-aeae-26da28ee4965"


def test_codex_subagent_rollout_belongs_to_its_parent_session(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "12" / "01"
    parent = write_rollout(day / f"rollout-2026-12-01T13-24-21-{PARENT}.jsonl", codex_line("session_meta", {
        "id": PARENT, "session_id": PARENT, "cwd": "/w", "source": "exec"}))
    child = write_rollout(day / f"rollout-2026-12-01T13-24-22-{CHILD}.jsonl", codex_line("session_meta", {
        "id": CHILD, "session_id": PARENT, "parent_thread_id": PARENT, "cwd": "/w",
        "source": {"subagent": {"thread_spawn": {"parent_thread_id": PARENT, "depth": 1}}}}))
    assert locate(parent) == FileRole("codex", PARENT)
    assert locate(child) == FileRole("codex", PARENT, subagent=True)
    # Only `source` names the parent (no top-level field, no root session id): still the parent's.
    grandchild = write_rollout(day / f"rollout-2026-12-01T13-24-23-{CODEX_ID}.jsonl", codex_line("session_meta", {
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
