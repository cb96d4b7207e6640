"""The store package: its migrations as named units of whole statements, and reads that cost one query."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.model import FileCursor, ItemKind, ItemSource, Role, ScannedTurn, TurnDraft, Usage
from checkpoint.store import MIGRATIONS, CursorMoved, Migration, Store
from checkpoint.store.migrations import migrate


def _schema(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """Tables, indexes and their columns: what a database at the latest version must have."""
    names = [(t, n) for t, n in conn.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
    )]
    out = []
    for kind, name in names:
        columns = conn.execute(f"PRAGMA table_info({name})" if kind == "table" else f"PRAGMA index_info({name})")
        out.append((kind, name, repr([tuple(c) for c in columns])))
    return out


@pytest.mark.parametrize("version", range(len(MIGRATIONS) + 1))
def test_a_database_at_any_earlier_version_opens_and_ends_with_the_schema_of_a_new_one(
    tmp_path: Path, version: int
) -> None:
    old = tmp_path / f"v{version}.db"
    conn = sqlite3.connect(old, isolation_level=None)
    assert migrate(conn, MIGRATIONS[:version]) == version
    assert conn.execute("PRAGMA user_version").fetchone()[0] == version
    conn.close()
    store, fresh = Store(old), Store(tmp_path / "new.db")
    assert store.schema_version == fresh.schema_version == len(MIGRATIONS) == 25
    assert _schema(store.conn) == _schema(fresh.conn)


def test_a_migration_statement_may_hold_semicolons_in_a_trigger_body_and_a_comment(tmp_path: Path) -> None:
    """Splitting a script on `;` would cut both statements apart; each statement runs whole."""
    extra = Migration("a trigger", (
        "CREATE TABLE log (what TEXT)  -- written by the trigger; one row per session",
        """
        CREATE TRIGGER session_added AFTER INSERT ON sessions BEGIN
            INSERT INTO log (what) VALUES ('added; ' || new.id);
            INSERT INTO log (what) VALUES ('twice');
        END
        """,
    ))
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    assert migrate(conn, (*MIGRATIONS, extra)) == len(MIGRATIONS) + 1
    conn.execute("INSERT INTO sessions (id, agent) VALUES ('s', 'claude')")
    assert [r[0] for r in conn.execute("SELECT what FROM log")] == ["added; s", "twice"]


def test_a_migration_refuses_a_statement_cut_short() -> None:
    with pytest.raises(ValueError, match="not one whole statement"):
        Migration("broken", ("CREATE TRIGGER t AFTER INSERT ON sessions BEGIN INSERT INTO log VALUES (1);",))


def test_migrations_are_named_and_each_statement_is_one_statement() -> None:
    assert len({m.name for m in MIGRATIONS}) == len(MIGRATIONS)
    for migration in MIGRATIONS:
        for statement in migration.statements:
            assert sqlite3.complete_statement(statement + "\n;")
            if not statement.lstrip().upper().startswith("CREATE TRIGGER"):  # a trigger's body holds `;`
                assert ";" not in statement.rstrip().rstrip(";"), (migration.name, statement[:60])


def _store_with_items(path: Path, items: int) -> Store:
    store = Store(path)
    drafts = [TurnDraft(id=f"t{i}", role=Role.USER, text=f"turn {i}", timestamp=f"2025-01-01T00:00:0{i % 10}Z")
              for i in range(items * 2)]
    turns = [ScannedTurn(draft, i + 1, 10, 5) for i, draft in enumerate(drafts)]
    store.ingest(FileCursor("/x.jsonl"), "claude", "s", False, {}, turns, None, Counter(), Counter(), [],
                 chunk_tokens=100_000)
    [chunk] = store.claim_chunks(1, "me")
    store.commit_extraction(Extraction(chunk_id=chunk.chunk_id, extractor="test", items=[
        ItemDraft(kind=ItemKind.DECISION, statement=f"decision {i}", turn_ids=[f"t{2 * i + 1}", f"t{2 * i}"])
        for i in range(items)
    ] + [ItemDraft(kind=ItemKind.QUESTION, statement="about a turn gone", turn_ids=["gone"])]), "me")
    return store


def test_items_come_with_their_sources_in_one_query(tmp_path: Path) -> None:
    store = _store_with_items(tmp_path / "db", 5)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    items = store.items()
    store.conn.set_trace_callback(None)
    assert len(statements) == 1, statements
    assert len(items) == 6
    by_statement = {i.statement: i for i in items}
    first = by_statement["decision 0"]
    assert first.turn_ids == ("t1", "t0")
    assert first.sources == (  # in turn order, whatever order the item cites them in
        ItemSource(turn_id="t0", path="/x.jsonl", line=1, timestamp="2025-01-01T00:00:00Z", role="user"),
        ItemSource(turn_id="t1", path="/x.jsonl", line=2, timestamp="2025-01-01T00:00:01Z", role="user"),
    )
    assert by_statement["about a turn gone"].sources == ()
    assert [i.id for i in items] == [i.id for i in sorted(items, key=lambda i: (i.created_at, i.id))]
    # The JSON form is the shape `checkpoint items --json` and the daemon have always sent.
    as_json = first.as_json()
    assert list(as_json) == ["id", "session_id", "kind", "statement", "rationale", "confidence", "turn_ids", "files",
                             "state", "extractor", "created_at", "session_title", "cwd", "sources", "cited",
                             "superseded_by", "supersedes", "origin", "record", "held", "agent", "lasting",
                             "file_sources", "answered_by", "answered_turn"]
    assert as_json["cited"] == "turns"
    assert (as_json["kind"], as_json["state"], as_json["turn_ids"]) == ("decision", "new", ["t1", "t0"])
    assert type(as_json["kind"]) is str and type(as_json["state"]) is str
    assert as_json["sources"][0] == {
        "turn_id": "t0", "path": "/x.jsonl", "line": 1, "timestamp": "2025-01-01T00:00:00Z", "role": "user"}


def test_runs_are_read_newest_first_with_what_each_cost(tmp_path: Path) -> None:
    store = Store(tmp_path / "db" / "checkpoint.db")
    first = store.start_run("heuristic")
    store.finish_run(first, tried=3, captured=2, failed=1, items=4, usage=Usage(requests=2, cost_usd=0.5), lost=1,
                     attributed=2)
    second = store.start_run("anthropic")
    newest, oldest = store.runs()
    assert (newest.id, newest.extractor, newest.finished_at) == (second, "anthropic", None)
    assert (oldest.chunks_tried, oldest.chunks_captured, oldest.chunks_failed, oldest.chunks_lost) == (3, 2, 1, 1)
    assert (oldest.items_added, oldest.items_attributed, oldest.requests, oldest.cost_usd) == (4, 2, 2, 0.5)
    assert list(oldest.as_json()) == [
        "id", "started_at", "finished_at", "extractor", "chunks_tried", "chunks_captured", "chunks_failed",
        "chunks_lost", "chunks_resplit", "items_added", "items_attributed", "requests", "input_tokens", "output_tokens",
        "cache_creation_input_tokens", "cache_read_input_tokens", "cost_usd", "note", "items_dropped"]
    assert oldest.as_json()["cost_usd"] == 0.5
    store.close()


def test_the_turn_window_runs_from_the_prompt_before_the_turns_to_the_next_prompt(tmp_path: Path) -> None:
    store = Store(tmp_path / "db" / "checkpoint.db")
    roles = [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    drafts = [TurnDraft(id=f"t{i}", role=role, text=f"turn {i}", files=(f"f{i}.py",)) for i, role in enumerate(roles)]
    store.ingest(FileCursor("/x.jsonl"), "claude", "s", False, {},
                 [ScannedTurn(d, i + 1, 10, 5) for i, d in enumerate(drafts)], None, Counter(), Counter(), [],
                 chunk_tokens=100_000)
    window = store.turn_window("s", ["t2"])
    assert [(t.id, t.role) for t in window] == [("t0", Role.USER), ("t1", Role.ASSISTANT), ("t2", Role.TOOL),
                                                ("t3", Role.ASSISTANT)]
    assert window[2].as_json() == {"id": "t2", "seq": window[2].seq, "role": "tool", "text": "turn 2",
                                   "files": ["f2.py"]}
    assert store.turn_window("s", ["gone"]) == [] and store.turn_window("s", []) == []
    store.close()


def test_the_cursors_under_a_directory_are_those_of_its_files_only(tmp_path: Path) -> None:
    """The daemon's scan of one directory reads only its files' rows: not a sibling that shares the
    name's start, not the directory's parent's; all of them with no directory named."""
    store = Store(tmp_path / "c.db")
    paths = ["/r/a/s1.jsonl", "/r/a/sub/s2.jsonl", "/r/ab/s3.jsonl", "/r/a.jsonl", "/r/b/s4.jsonl", "/r/a0/s5.jsonl"]
    for path in paths:
        store.ingest(FileCursor(path, offset=1), "claude", path, False, {}, [], None, Counter(), Counter(), [])
    try:
        assert sorted(store.file_cursors(under=["/r/a"])) == ["/r/a/s1.jsonl", "/r/a/sub/s2.jsonl"]
        assert sorted(store.file_cursors(under=["/r/a/", "/r/b", "/r/a"])) == [
            "/r/a/s1.jsonl", "/r/a/sub/s2.jsonl", "/r/b/s4.jsonl"]
        assert sorted(store.file_cursors(under=["/"])) == sorted(store.file_cursors()) == sorted(paths)
        assert store.file_cursors(under=[]) == {}
        assert store.file_cursors(under=["/r/a"])["/r/a/s1.jsonl"] == store.get_file("/r/a/s1.jsonl")
    finally:
        store.close()


def _file_batch(store: Store, name: str, since: FileCursor | None = None) -> None:
    """A file's batch of three turns, as the pipeline stores it: session `name`, file /name.jsonl."""
    turns = [ScannedTurn(TurnDraft(id=f"{name}-{i}", role=Role.USER, text=f"turn {i}"), i + 1, 10, 5)
             for i in range(3)]
    store.ingest(FileCursor(f"/{name}.jsonl", offset=30, line_no=3), "claude", name, False, {}, turns, None,
                 Counter(), Counter(), [], chunk_tokens=100_000, since=since)


def _sessions(store: Store) -> dict[str, int]:
    return {s.id: s.turns for s in store.session_counts()}


def test_grouped_commits_show_another_process_a_groups_files_when_it_commits(tmp_path: Path) -> None:
    store, other = Store(tmp_path / "db"), Store(tmp_path / "db")  # `other`: another process's view
    with store.grouped_commits(seconds=3600):
        _file_batch(store, "a")
        _file_batch(store, "b")
        assert _sessions(store) == {"a": 3, "b": 3}  # the writer reads its own writes
        assert _sessions(other) == {}  # not committed yet
    assert _sessions(other) == {"a": 3, "b": 3}
    assert not store.conn.in_transaction
    assert other.get_file("/b.jsonl") is not None  # each file's cursor with its turns


def test_a_group_commits_once_its_time_is_up_as_the_next_transaction_opens(tmp_path: Path) -> None:
    store, other = Store(tmp_path / "db"), Store(tmp_path / "db")
    with store.grouped_commits(seconds=0):
        _file_batch(store, "a")
        assert _sessions(other) == {}
        _file_batch(store, "b")  # opening its transaction committed the group holding a
        assert _sessions(other) == {"a": 3}
    assert _sessions(other) == {"a": 3, "b": 3}


def test_a_batch_refused_in_a_group_leaves_nothing_and_the_rest_of_the_group_stands(tmp_path: Path) -> None:
    store, other = Store(tmp_path / "db"), Store(tmp_path / "db")
    with store.grouped_commits(seconds=3600):
        _file_batch(store, "a")
        with pytest.raises(CursorMoved):  # read from a cursor that is not the stored one
            _file_batch(store, "b", since=FileCursor("/b.jsonl", offset=99, line_no=9))
        with pytest.raises(RuntimeError, match="half"), store.transaction() as c:
            c.execute("INSERT INTO sessions (id, agent) VALUES ('half', 'claude')")
            raise RuntimeError("half written")
        _file_batch(store, "c")
    assert _sessions(other) == {"a": 3, "c": 3}
    assert other.get_file("/b.jsonl") is None


def test_a_failure_in_a_group_keeps_what_was_stored_before_it(tmp_path: Path) -> None:
    store, other = Store(tmp_path / "db"), Store(tmp_path / "db")
    with pytest.raises(RuntimeError, match="interrupted"), store.grouped_commits(seconds=3600):
        _file_batch(store, "a")
        raise RuntimeError("interrupted")
    assert _sessions(other) == {"a": 3}
    assert not store.conn.in_transaction
    _file_batch(store, "b")  # and the store writes on, a transaction per batch again
    assert _sessions(other) == {"a": 3, "b": 3}
