"""The opencode reader on databases the real opencode 1.18.33 wrote, offline, against the fake
Anthropic API (tests/support/opencode_sessions.py made tests/data/opencode/sessions.tar.gz; see the
README there): a prompt; continued with a write tool call, a sub-agent (the task tool's child
session) and one more prompt; forked (the messages copied into a new session) with a prompt in the
fork. `first/` is the database after the first prompt, `final/` after all.

Every prompt and every answer is stored once (a fork's copies are not stored again), in the
session's workspace, the sub-session in its parent's session, the written file on its tool turn; a
re-read of the database grown meanwhile adds only the new turns; a message still being written is
not read until it is complete."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tarfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from checkpoint import pipeline, sources
from checkpoint.config import Settings
from checkpoint.sources.opencode import OpencodeReader
from checkpoint.store import Store
from tests.support.opencode_sessions import FORK_PROMPT, MARKERS, PROMPTS, SUBAGENT_PROMPT
from tests.support.paths import DATA_DIR
from tests.support.reader_checks import assert_each_once, assert_each_one_item

DATA = DATA_DIR / "opencode" / "sessions.tar.gz"


@pytest.fixture
def dbs(tmp_path: Path) -> dict[str, Path]:
    with tarfile.open(DATA) as tar:
        tar.extractall(tmp_path / "data", filter="data")
    return {name: tmp_path / "data" / name / "opencode" / "opencode.db" for name in ("first", "final")}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "opencode"  # as ~/.local/share/opencode
    folder.mkdir()
    return folder


@pytest.fixture
def oc_settings(settings: Settings, root: Path) -> Settings:
    return replace(settings, sources=[root], chunk_tokens=1500)


def _turns(store: Store) -> list[tuple[str, str, str, str]]:
    return store.conn.execute("SELECT t.id, t.session_id, t.role, t.text FROM turns t ORDER BY t.session_id, t.seq"
                              ).fetchall()


def _opencode(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_every_prompt_and_answer_once_in_the_workspace_with_the_sub_session_in_its_parent(
    dbs: dict[str, Path], root: Path, oc_settings: Settings, store: Store
) -> None:
    shutil.copy(dbs["final"], root / "opencode.db")
    report = pipeline.scan(store, oc_settings)
    assert report.problems == []
    turns = _turns(store)

    said = Counter(text for _, _, role, text in turns if role == "user")
    assert said == Counter({p: 1 for p in (*PROMPTS, SUBAGENT_PROMPT, FORK_PROMPT)}), said
    texts = [text for *_, text in turns]
    assert_each_once(texts, MARKERS)
    # Every text opencode stored is a turn, once: the fork's copies of its parent's are not again,
    # and the task's output (the sub-agent's answer) is the one copy left out.
    parts = [json.loads(str(d)) for (d,) in _opencode(dbs["final"], "SELECT data FROM part")]
    stored = {p["text"] for p in parts if p.get("type") == "text"}
    assert Counter(t for t in texts if t in stored) == Counter(stored)

    # Two sessions: the first (the task tool's child session in it, after the parent's turns) and
    # its fork, which holds only what was said after the fork.
    (root_id, directory, title), (fork_id, _, fork_title) = [tuple(map(str, row)) for row in _opencode(
        dbs["final"], "SELECT id, directory, title FROM session WHERE parent_id IS NULL ORDER BY time_created")]
    sessions = {s.id: s for s in store.session_counts()}
    assert {(s.id, s.agent, s.cwd, s.title) for s in sessions.values()} == {
        (root_id, "opencode", directory, title), (fork_id, "opencode", directory, fork_title)}
    assert fork_title.endswith("(fork #1)")
    assert [text for _, sid, _, text in turns if sid == fork_id] == [FORK_PROMPT, "We'll use marker-0c06 for logging."]
    in_root = [text for _, sid, _, text in turns if sid == root_id]
    assert in_root[-2:] == [SUBAGENT_PROMPT, "Sub-agent finding. We'll use marker-0c03 for the cache layer."]
    assert sessions[root_id].dropped["subagent_copy"]["records"] == 1  # the task tool's output
    assert all("unknown_record" not in s.dropped for s in sessions.values())

    # The file the write tool wrote is on its turn.
    files = store.conn.execute("SELECT files FROM turns WHERE role = 'tool' AND text LIKE '[tool write]%'").fetchall()
    assert files == [(json.dumps([f"{directory}/notes.md"]),)]

    assert_each_one_item(store, MARKERS)

    assert pipeline.scan(store, oc_settings).turns_added == 0
    assert _turns(store) == turns


def test_a_re_read_of_the_grown_database_adds_only_the_new_turns(
    dbs: dict[str, Path], root: Path, oc_settings: Settings, store: Store, tmp_path: Path
) -> None:
    target = root / "opencode.db"
    shutil.copy(dbs["first"], target)
    first = pipeline.scan(store, oc_settings)
    assert first.problems == [] and first.turns_added == 2
    before = _turns(store)
    assert [t[3] for t in before] == [PROMPTS[0], "We'll use marker-0c01 for the parser."]

    copy = target.with_name("opencode.db.tmp")  # replaced as a whole: a new inode, the same sessions
    shutil.copy(dbs["final"], copy)
    os.replace(copy, target)
    second = pipeline.scan(store, oc_settings)
    assert second.problems == []
    after = _turns(store)
    assert set(before) <= set(after) and second.turns_added == len(after) - 2
    assert len({t[0] for t in after}) == len(after)

    fresh = Store(tmp_path / "fresh.db")
    try:
        pipeline.scan(fresh, replace(oc_settings, db=tmp_path / "fresh.db"))
        assert _turns(fresh) == after
    finally:
        fresh.close()


def test_a_message_still_being_written_waits_and_nothing_after_it_is_skipped(
    dbs: dict[str, Path], root: Path, oc_settings: Settings, store: Store
) -> None:
    """The last answer as opencode holds it while streaming (not completed, just updated, its text
    half written): not read; once completed, read whole, once."""
    target = root / "opencode.db"
    shutil.copy(dbs["final"], target)
    conn = sqlite3.connect(target)
    (mid, data), = conn.execute(
        "SELECT m.id, m.data FROM message m JOIN session s ON s.id = m.session_id WHERE s.parent_id IS NULL"
        " ORDER BY m.time_created DESC LIMIT 1").fetchall()
    message = json.loads(data)
    done = dict(message["time"])
    message["time"] = {"created": done["created"]}
    (pid, part), = conn.execute("SELECT id, data FROM part WHERE message_id = ? AND data LIKE '%\"text\"%'",
                                (mid,)).fetchall()
    whole = json.loads(part)
    conn.execute("UPDATE message SET data = ?, time_updated = ? WHERE id = ?",
                 (json.dumps(message), int(time.time() * 1000), mid))
    conn.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps({**whole, "text": "We'll use mark"}), pid))
    conn.commit()

    pipeline.scan(store, oc_settings)
    texts = [t[3] for t in _turns(store)]
    assert "We'll use mark" not in texts and whole["text"] not in texts
    assert SUBAGENT_PROMPT in texts  # the sub-session, complete, is read meanwhile

    conn.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps({**message, "time": done}), mid))
    conn.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(whole), pid))
    conn.commit()
    conn.close()
    pipeline.scan(store, oc_settings)
    texts = [t[3] for t in _turns(store)]
    assert texts.count(whole["text"]) == 1 and "We'll use mark" not in texts


def test_names_claimed_and_a_file_that_is_no_opencode_database_said(
    root: Path, oc_settings: Settings, store: Store
) -> None:
    reader = OpencodeReader()
    assert [n for n in ("opencode.db", "opencode.db-wal", "opencode-beta2.db", "opencode.db-shm", "x.db",
                        "opencode.jsonl") if reader.claims_name(n)] == ["opencode.db", "opencode.db-wal",
                                                                         "opencode-beta2.db"]
    assert sources.claimed("a.jsonl") and sources.claimed("opencode.db") and not sources.claimed("opencode.log")
    assert sources.locate(root / "opencode.db-wal", [reader]) is None  # discovered with it, read through it

    (root / "opencode.db").write_bytes(b"not a database at all\n" * 100)
    report = pipeline.scan(store, oc_settings)
    assert [(p.kind, p.message.split(":")[0]) for p in report.problems] == [
        ("unreadable", "cannot read the opencode database")]
    assert report.turns_added == 0
