"""The Gemini CLI reader on session files the real gemini-cli 0.61.0 wrote, offline, against the fake
Gemini API (tests/support/gemini_transcripts.py made tests/data/real_cli/gemini.tar.gz; see the
README there): a session resumed twice into one file, with a thought, a write_file call and a
generalist sub-agent (its own file under chats/<session id>/), and a session in a second project.

Every prompt and every answer is stored once, none of what the CLI writes again (whole messages
rewritten under their id, the history at every resume, function responses twice, the session
context) is a turn, the workspace is the project's root, and each planted decision is one item
through the fake Anthropic API. Then the ways the file changes under the reader: torn appends, a
whole-file rewrite (what gemini-cli does to a converted or unreadable session), a rewind."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import anthropic
import pytest

from checkpoint import pipeline, runner
from checkpoint.config import Settings
from checkpoint.extract.anthropic import AnthropicExtractor
from checkpoint.sources import claimed, find, locate, transcript_paths
from checkpoint.sources.base import FileRole
from checkpoint.sources.gemini import GeminiReader
from checkpoint.store import Store
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.gemini_transcripts import MARKERS, PROMPTS, SUBAGENT_PROMPT, THOUGHT
from tests.support.paths import DATA_DIR
from tests.support.reader_checks import assert_each_once, assert_rescans_add_nothing, assert_torn_appends_read_the_same

CORPUS = DATA_DIR / "real_cli" / "gemini.tar.gz"
TurnRow = tuple[str, str, str, str, str]


@pytest.fixture
def corpus(tmp_path: Path, settings: Settings) -> Settings:
    with tarfile.open(CORPUS) as tar:
        tar.extractall(tmp_path, filter="data")  # gemini/tmp/<project>/chats/..., gemini/projects.json
    return replace(settings, sources=[tmp_path / "gemini" / "tmp"], chunk_tokens=1500)


def _turns(store: Store) -> list[TurnRow]:
    return store.conn.execute(
        "SELECT t.session_id, t.role, t.text, t.files, t.id FROM turns t ORDER BY t.session_id, t.seq").fetchall()


def _files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.jsonl"))


def test_real_gemini_sessions_every_prompt_and_answer_once(corpus: Settings, store: Store) -> None:
    report = pipeline.scan(store, corpus)
    assert report.problems == []
    turns = _turns(store)
    said = Counter(text for _, role, text, _, _ in turns if role == "user")
    assert said == Counter({p: 1 for p in (*PROMPTS, SUBAGENT_PROMPT)}), said
    texts = [text for _, _, text, _, _ in turns]
    assert_each_once(texts, MARKERS)
    assert sum(THOUGHT.split("** ")[1] in t for t in texts) == 1  # the reply's thought, in its turn
    assert not [t for t in texts if "<session_context>" in t or not t.strip()]
    assert not [t for t in texts if "Subagent 'generalist' finished" in t]  # the sub-agent's answer, copied

    # Two sessions; the sub-agent's file is its parent's; each session's workspace is its project root.
    sessions = {s.id: s for s in store.session_counts()}
    assert Counter(s.agent for s in sessions.values()) == Counter(gemini=2)
    roots = {p.parent.name: p.read_text().strip() for p in Path(corpus.sources[0]).glob("*/.project_root")}
    main = next(s for s in sessions.values() if s.title == PROMPTS[0])
    other = next(s for s in sessions.values() if s.title == PROMPTS[3])
    assert (main.cwd, other.cwd) == (roots["work"], roots["other"])
    assert {(p.parent.name, p.name) for p in Path(corpus.sources[0]).glob("work/chats/*/*.jsonl")} == {
        (main.id, next(Path(corpus.sources[0]).glob("work/chats/*/*.jsonl")).name)}
    in_main = [text for sid, _, text, _, _ in turns if sid == main.id]
    assert any(MARKERS[2] in t for t in in_main) and SUBAGENT_PROMPT in in_main

    # The file write_file created is the file its result turn touched.
    touched = [(text, json.loads(files)) for _, _, text, files, _ in turns if files != "[]"]
    assert touched == [(touched[0][0], [os.path.join(roots["work"], "notes.md")])]
    assert touched[0][0].startswith("[tool result]\nSuccessfully created")

    # What is written again is counted, by policy, never silently; nothing unknown.
    dropped = main.dropped
    for policy in ("history_copy", "message_update", "tool_result_copy", "subagent_copy", "injected_context"):
        assert dropped[policy]["records"] >= 1, (policy, dropped)
    assert all("unknown_record" not in s.dropped for s in sessions.values())

    assert_rescans_add_nothing(store, corpus, _files(corpus.sources[0]))
    assert _turns(store) == turns


def test_each_planted_decision_is_one_item_through_the_fake_anthropic_api(corpus: Settings, store: Store) -> None:
    pipeline.scan(store, corpus)
    settings = replace(corpus, retry_delay=0.001, retry_max_delay=0.01, request_timeout=5.0)
    with FakeAnthropic() as fake:
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="test-key", max_retries=0, timeout=5.0)
        run = runner.extract_due(store, AnthropicExtractor(settings, client=client, sleep=lambda s: None))
        sent = "\n".join(json.dumps(r.body) for r in fake.requests if r.endpoint == "messages")
    assert (run.failed, run.failures) == (0, [])
    assert "<session_context>" not in sent
    statements = [i.statement for i in store.items(include_dismissed=True)]
    assert_each_once(statements, MARKERS)
    assert len(statements) == len(MARKERS)


def test_torn_appends_read_the_same(corpus: Settings, store: Store, tmp_path: Path) -> None:
    """Each file written in two halves, the first cut inside a line: what is stored is the same."""
    assert_torn_appends_read_the_same(store, corpus, _files(corpus.sources[0]), _turns, tmp_path / "whole.db")


def _main_file(corpus: Settings) -> Path:
    return next(Path(corpus.sources[0]).glob("work/chats/session-*.jsonl"))


def _conversation(path: Path) -> tuple[dict[str, object], list[dict[str, object]]]:
    """The session as gemini-cli loads it (loadConversationRecord): metadata, then messages by id."""
    metadata: dict[str, object] = {}
    messages: dict[str, dict[str, object]] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if "$set" in record:
            if isinstance(record["$set"].get("messages"), list):
                messages = {m["id"]: m for m in record["$set"]["messages"]}
            metadata.update({k: v for k, v in record["$set"].items() if k != "messages"})
        elif "$rewindTo" in record:
            ids = list(messages)
            messages = {i: messages[i] for i in ids[: ids.index(record["$rewindTo"])]}
        elif "id" in record:
            messages[record["id"]] = record
        else:
            metadata.update(record)
    return metadata, list(messages.values())


def test_a_whole_file_rewrite_adds_nothing_and_what_follows_once(corpus: Settings, store: Store) -> None:
    """gemini-cli's rewriteConversationFile: the metadata, then each message once in its last form,
    written to a temp file renamed over the session (a new inode). Read from the start again, it
    stores no turn twice; a prompt and answer appended after it are stored once each."""
    pipeline.scan(store, corpus)
    before = _turns(store)
    path = _main_file(corpus)
    metadata, messages = _conversation(path)
    temp = path.with_name(path.name + ".tmp-4242")
    temp.write_text("\n".join(json.dumps(r) for r in [metadata, *messages]) + "\n")
    os.replace(temp, path)
    report = pipeline.scan(store, corpus)
    assert report.turns_added == 0 and _turns(store) == before
    assert [p.message for p in report.problems] and all("re-read from the start" in p.message
                                                         for p in report.problems)

    with path.open("a") as fh:
        for record in ({"id": "u-after", "timestamp": "2026-12-01T15:00:00Z", "type": "user",
                        "content": [{"text": "After the rewrite: retries?"}]},
                       {"$set": {"lastUpdated": "2026-12-01T15:00:00Z"}},
                       {"id": "g-after", "timestamp": "2026-12-01T15:00:01Z", "type": "gemini",
                        "content": "Retry three times.", "thoughts": [], "model": "m"},
                       {"id": "g-after", "timestamp": "2026-12-01T15:00:01Z", "type": "gemini",
                        "content": "Retry three times.", "thoughts": [], "model": "m", "tokens": {"input": 1}}):
            fh.write(json.dumps(record) + "\n")
    assert pipeline.scan(store, corpus).turns_added == 2
    added = [(row[1], row[2]) for row in _turns(store) if row not in before]
    assert added == [("user", "After the rewrite: retries?"), ("assistant", "Retry three times.")]


def test_a_rewind_keeps_what_was_said_and_the_new_branch_once(corpus: Settings, store: Store) -> None:
    pipeline.scan(store, corpus)
    path = _main_file(corpus)
    _, messages = _conversation(path)
    last_user = next(m for m in messages if m["type"] == "user" and m["content"] == [{"text": PROMPTS[2]}])
    with path.open("a") as fh:
        fh.write(json.dumps({"$rewindTo": last_user["id"]}) + "\n")
        fh.write(json.dumps({"id": "u-branch", "timestamp": "2026-12-01T15:01:00Z", "type": "user",
                             "content": [{"text": "Instead: no helper."}]}) + "\n")
        fh.write(json.dumps({"id": "i-1", "timestamp": "2026-12-01T15:01:00Z", "type": "info",
                             "content": "Request cancelled."}) + "\n")
    before = len(_turns(store))
    assert pipeline.scan(store, corpus).turns_added == 1
    texts = [text for _, _, text, _, _ in _turns(store)]
    assert len(texts) == before + 1 and texts.count(PROMPTS[2]) == 1 and "Instead: no helper." in texts
    session = next(s for s in store.session_counts() if s.title == PROMPTS[0])
    assert session.dropped["cli_notice"]["records"] == 1


def test_locate_claims_chats_only_and_the_session_is_named_inside(tmp_path: Path) -> None:
    project = tmp_path / ".gemini" / "tmp" / "work"
    parent = "be5351e0-b830-472e-b43d-d858575fbd49"
    main = project / "chats" / "session-2026-12-01T14-55-be5351e0.jsonl"
    main.parent.mkdir(parents=True)
    meta = json.dumps({"sessionId": parent, "projectHash": "0" * 64, "kind": "main"})
    main.write_text(meta[:40])
    assert locate(main) is None  # its first record is not complete: claimed once it is
    main.write_text(meta + "\n")
    assert locate(main) == FileRole("gemini", parent)
    main.write_text("not json\n")
    assert locate(main) == FileRole("gemini", main.stem)
    assert locate(project / "chats" / parent / "d955d0b7.jsonl") == FileRole("gemini", parent, subagent=True)
    assert locate(project / "logs" / "session-x.jsonl", [GeminiReader()]) is None
    assert locate(project / "chats" / "session-x.jsonl.tmp-12", [GeminiReader()]) is None
    # Discovery lists what some reader claims by name: Gemini's legacy .json sessions, no other JSON.
    for name in ("session-2025-10-18T14-57-f86f5318.json", "logs.json", "projects.json", "agent-a1.meta.json"):
        (project / "chats" / name).write_text("{}")
    listed = [Path(p).name for _, p in transcript_paths([tmp_path / ".gemini"], [])]
    assert listed == ["session-2025-10-18T14-57-f86f5318.json", main.name]
    assert claimed("x.jsonl") and not claimed("settings.json")
    # A Claude Code transcript is still Claude's, whatever its folders are called.
    claude = tmp_path / ".claude" / "projects" / "-w-chats" / "session-1.jsonl"
    assert locate(claude) is not None and locate(claude).agent == "claude"  # type: ignore[union-attr]


def test_workspace_from_project_root_file_and_relative_paths(tmp_path: Path) -> None:
    """No session context in the file (an older or trimmed one): the project's `.project_root`,
    checked against the file's projectHash, names the workspace; a relative file_path is made
    absolute from it."""
    root = "/home/u/proj"
    project = tmp_path / ".gemini" / "tmp" / "proj"
    (project / "chats").mkdir(parents=True)
    (project / ".project_root").write_text(root)
    reader = GeminiReader()
    found = find(project / "chats" / "session-x-1234abcd.jsonl", [reader])
    assert found is not None and found.role == FileRole("gemini", "session-x-1234abcd")
    state = dict(found.facts)  # what the pipeline starts the file's reading with
    meta = {"sessionId": "s-1", "projectHash": hashlib.sha256(root.encode()).hexdigest(), "kind": "main"}
    first = reader.parse(meta, json.dumps(meta).encode(), state)
    assert first.session is not None and first.session.cwd == root
    edit: dict[str, object] = {
        "id": "c1", "name": "replace", "args": {"file_path": "src/a.py", "old_string": "a", "new_string": "b"},
        "status": "success",
        "result": [{"functionResponse": {"id": "c1", "name": "replace", "response": {"output": "ok"}}}]}
    call = {"id": "g1", "type": "gemini", "content": "", "toolCalls": [edit]}
    parsed = reader.parse(call, json.dumps(call).encode(), state)
    assert [(t.role.value, t.files) for t in parsed.turns] == [("tool", ()), ("tool", ("/home/u/proj/src/a.py",))]
    failed = {**call, "id": "g2", "toolCalls": [{**edit, "id": "c2", "status": "error"}]}
    assert [t.files for t in reader.parse(failed, b"{}", state).turns] == [(), ()]
    unknown = reader.parse({"what": 1}, b'{"what": 1}', state)
    assert unknown.turns == [] and unknown.dropped == {"unknown_record": 11}


# -- sessions of gemini-cli before its JSONL log: one pretty-printed JSON object, rewritten whole ------
# Shaped as public descriptions of that format show it (sessionId, projectHash, startTime, lastUpdated,
# messages[] with string contents, thoughts, toolCalls with results); written here, not copied.

LEGACY_ROOT = "/home/u/legacy-proj"
LEGACY_ID = "f86f5318-0000-4433-85f8-ec9d9a417f8e"


def _legacy(messages: list[dict[str, object]]) -> str:
    return json.dumps({"sessionId": LEGACY_ID, "projectHash": hashlib.sha256(LEGACY_ROOT.encode()).hexdigest(),
                       "startTime": "2025-10-18T14:57:28.974Z", "lastUpdated": f"2025-10-18T15:{len(messages):02}:00Z",
                       "messages": messages}, indent=2)


LEGACY_MESSAGES: list[dict[str, object]] = [
    {"id": "m1", "timestamp": "2025-10-18T14:57:28.974Z", "type": "user", "content": "Legacy: pick a store."},
    {"id": "m2", "timestamp": "2025-10-18T14:57:30.000Z", "type": "gemini",
     "content": "We'll use marker-b1f1 for the store.", "thoughts": [{"subject": "Stores", "description": "Two."}],
     "toolCalls": [{"id": "write_file-1", "name": "write_file", "status": "success",
                    "args": {"file_path": f"{LEGACY_ROOT}/store.md", "content": "x"},
                    "result": [{"functionResponse": {"id": "write_file-1", "name": "write_file",
                                                     "response": {"output": "Wrote store.md"}}}]}]},
]
LEGACY_MORE: list[dict[str, object]] = [
    {"id": "m3", "timestamp": "2025-10-18T15:00:00.000Z", "type": "user", "content": "Legacy: and the queue?"},
    {"id": "m4", "timestamp": "2025-10-18T15:00:02.000Z", "type": "gemini", "content": "A plain list."},
]


def test_a_legacy_whole_json_session_rewritten_whole_then_converted(tmp_path: Path, settings: Settings,
                                                                    store: Store) -> None:
    """Found under its hash-named folder (the root from projects.json), read as one object; rewritten
    in place with two more messages, it adds those two and says nothing; gemini-cli's conversion to
    `.jsonl` (its messages appended under the same ids, beside the old file) adds nothing."""
    gemini = tmp_path / "g" / ".gemini"
    chats = gemini / "tmp" / hashlib.sha256(LEGACY_ROOT.encode()).hexdigest() / "chats"
    chats.mkdir(parents=True)
    (gemini / "projects.json").write_text(json.dumps({"projects": {LEGACY_ROOT: "legacy-proj"}}))
    legacy = chats / "session-2025-10-18T14-57-f86f5318.json"
    legacy.write_text(_legacy(LEGACY_MESSAGES))
    sources = replace(settings, sources=[gemini / "tmp"])
    first = pipeline.scan(store, sources)
    assert first.problems == []
    rows = _turns(store)
    assert [(r[1], r[2].split("\n")[0]) for r in rows] == [
        ("user", "Legacy: pick a store."), ("assistant", "(thinking) Stores: Two."),
        ("tool", '[tool write_file] {"file_path":"/home/u/legacy-proj/store.md","content":"x"}'),
        ("tool", "[tool result]")]
    assert json.loads(rows[-1][3]) == [f"{LEGACY_ROOT}/store.md"]
    [session] = store.session_counts()
    assert (session.id, session.cwd, session.title) == (LEGACY_ID, LEGACY_ROOT, "Legacy: pick a store.")

    inode = legacy.stat().st_ino
    with legacy.open("r+") as fh:  # in place, as writeFileSync does: the same inode
        fh.truncate(0)
        fh.write(_legacy(LEGACY_MESSAGES + LEGACY_MORE))
    assert legacy.stat().st_ino == inode
    again = pipeline.scan(store, sources)
    assert (again.turns_added, again.problems) == (2, [])
    assert [r[2] for r in _turns(store)][len(rows):] == ["Legacy: and the queue?", "A plain list."]
    [session] = store.session_counts()
    assert session.dropped == {}  # read whole again from a fresh state: nothing counted twice

    converted = legacy.with_suffix(".jsonl")
    lines = [{"sessionId": LEGACY_ID, "projectHash": hashlib.sha256(LEGACY_ROOT.encode()).hexdigest(),
              "startTime": "2025-10-18T14:57:28.974Z", "lastUpdated": "2025-10-18T15:02:00Z"},
             *LEGACY_MESSAGES, *LEGACY_MORE, {"$set": {"sessionId": LEGACY_ID}}]
    converted.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert pipeline.scan(store, sources).turns_added == 0
    assert len(_turns(store)) == len(rows) + 2


def test_a_broken_legacy_session_is_said_and_read_once_whole(tmp_path: Path, settings: Settings,
                                                             store: Store) -> None:
    chats = tmp_path / "g" / ".gemini" / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    broken = chats / "session-2025-10-18T14-57-0badf00d.json"
    text = _legacy(LEGACY_MESSAGES)
    broken.write_text(text[: len(text) // 2])
    old = time.time() - 60
    os.utime(broken, (old, old))
    sources = replace(settings, sources=[tmp_path / "g" / ".gemini" / "tmp"])
    report = pipeline.scan(store, sources)
    assert [p.message for p in report.problems] == [
        f"not one whole JSON object ({len(text) // 2} bytes, unchanged for 5s); read again once it changes"]
    assert _turns(store) == []
    broken.write_text(text)
    assert pipeline.scan(store, sources).turns_added == 4
    assert {r[0] for r in _turns(store)} == {LEGACY_ID}  # the session the object names, once it is whole


def test_a_result_read_first_from_its_user_record_still_names_the_file_changed() -> None:
    reader, state = GeminiReader(), {"sid": "s", "cwd": "/w"}
    response = {"id": "c9", "name": "write_file", "response": {"output": "Wrote a.md"}}
    user = {"id": "u9", "type": "user", "content": [{"functionResponse": response}]}
    first = reader.parse(user, b"u", state)
    assert [t.text for t in first.turns] == ["[tool result]\nWrote a.md"]
    call = {"id": "g9", "type": "gemini", "content": "", "toolCalls": [
        {"id": "c9", "name": "write_file", "args": {"file_path": "a.md"}, "status": "success",
         "result": [{"functionResponse": response}]}]}
    later = reader.parse(call, b"g", state)
    assert [(t.text, t.files) for t in later.turns] == [
        ('[tool write_file] {"file_path":"a.md"}', ()), ("[write_file changed]\n/w/a.md", ("/w/a.md",))]
    assert later.dropped["tool_result_copy"] == len("Wrote a.md")
