"""Recall of everything said (checkpoint.store.said), in a real SQLite store: what the user and the
assistant said is found by a few words or a few characters of a Chinese or Japanese sentence, with its
session, agent, time and transcript line; tool output is not; the index grows only by what is new, is
built on search (never by the scan), follows `forget`, and a read-only database is still searched. And
a phrase of every real sample session (tests/data/samples) is found at its own transcript line."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.model import FileCursor, Role, ScannedTurn, SessionInfo, TurnDraft
from checkpoint.store import Store
from checkpoint.store.said import said_terms
from tests.support.sample_tree import build_tree

SAID = [
    (Role.USER, "我们决定使用Redis作为会话缓存，因为它更快。"),
    (Role.ASSISTANT, "了解しました。ログはJSON形式で出力します。"),
    (Role.TOOL, "grep output: the Frobnicator config lives in /etc/frob.toml"),
    (Role.ASSISTANT, "Keep the Justfile; the Makefile goes."),
]


def ingest(store: Store, session_id: str, said: list[tuple[Role, str]], cwd: str = "/w", start: int = 1) -> None:
    drafts = [TurnDraft(id=f"{session_id}-{start + n}", role=role, text=text,
                        timestamp=f"2026-10-05T09:{start + n:02d}:00Z") for n, (role, text) in enumerate(said)]
    turns = [ScannedTurn(d, start + i, 10, 5) for i, d in enumerate(drafts)]
    store.ingest(FileCursor(f"/t/{session_id}.jsonl"), "claude", session_id, False, {}, turns,
                 SessionInfo(id=session_id, agent="claude", cwd=cwd), Counter(), Counter(), [],
                 chunk_tokens=10_000_000)


def found(store: Store, query: str) -> list[str]:
    return [hit.turn_id for hit in store.search_said(query).hits]


def test_any_language_by_a_few_characters_never_tool_output(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    ingest(store, "s1", SAID)
    assert found(store, "使用Redis") == ["s1-1"]
    assert found(store, "会话缓存") == ["s1-1"]
    assert found(store, "JSON形式") == ["s1-2"]
    assert found(store, "ログ") == ["s1-2"]  # two characters: matched without the trigram index
    assert found(store, "justfile makefile") == ["s1-4"]  # case aside, every word
    assert found(store, "Frobnicator") == []  # tool output is not what was said
    [hit] = store.search_said("Justfile").hits
    assert (hit.session_id, hit.agent, hit.role, hit.path, hit.line, hit.timestamp) == (
        "s1", "claude", "assistant", "/t/s1.jsonl", 4, "2026-10-05T09:04:00Z")
    assert hit.snippet == "Keep the Justfile; the Makefile goes."
    assert said_terms('"NEAR" (x) AND*') == ["NEAR", "x", "AND"]  # FTS5 syntax is text
    assert found(store, '"NEAR" AND OR') == []


def test_built_on_search_only_and_only_what_is_new(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    ingest(store, "s1", SAID)
    assert store.conn.execute("SELECT count(*) FROM said_rows").fetchone()[0] == 0  # nothing at ingest
    assert store.search_said("Justfile").indexed == 3
    assert store.search_said("Justfile").indexed == 0
    ingest(store, "s1", [(Role.USER, "Now use orjson everywhere.")], start=5)
    result = store.search_said("orjson")
    assert result.indexed == 1 and [h.turn_id for h in result.hits] == ["s1-5"]


def test_a_forgotten_session_leaves_the_index_and_a_read_only_database_is_searched(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    ingest(store, "s1", SAID)
    ingest(store, "s2", [(Role.USER, "Keep the Justfile in s2 too.")])
    assert sorted(found(store, "Justfile")) == ["s1-4", "s2-1"]
    store.forget_session("s2")
    assert found(store, "Justfile") == ["s1-4"]
    ingest(store, "s3", [(Role.USER, "A Justfile for s3.")])  # stored, not indexed yet
    store.close()
    (tmp_path / "c.db").chmod(0o444)
    try:
        reader = Store.read_only(tmp_path / "c.db")
        assert sorted(h.turn_id for h in reader.search_said("Justfile").hits) == ["s1-4", "s3-1"]
        reader.close()
    finally:
        (tmp_path / "c.db").chmod(0o644)


def test_a_phrase_of_every_real_sample_session_is_found_at_its_line(
    roots: tuple[Path, Path], settings: Settings, store: Store
) -> None:
    build_tree(*roots)
    pipeline.scan(store, settings)
    sessions = [r[0] for r in store.conn.execute("SELECT id FROM sessions WHERE id IN"
                                                 " (SELECT session_id FROM turns WHERE role = 'user')")]
    assert len(sessions) >= 6
    for session_id in sessions:
        # The session's longest thing the user said, a phrase of five words from its middle.
        turn_id, text, path, line = store.conn.execute(
            "SELECT id, text, source_path, line_no FROM turns WHERE session_id = ? AND role = 'user'"
            " ORDER BY length(text) DESC, seq LIMIT 1", (session_id,)).fetchone()
        words = re.findall(r"[A-Za-z]{4,}", text)
        phrase = " ".join(words[len(words) // 2:len(words) // 2 + 5]) if len(words) >= 5 else text[:12]
        hits = store.search_said(phrase, limit=50).hits
        assert any((h.turn_id, h.path, h.line) == (turn_id, path, line) for h in hits), (session_id, phrase)
        assert json.loads(json.dumps([h.as_json() for h in hits]))[0]["transcript"]
