"""Items belong to a workspace (their session's cwd): a restatement in another session of the same
workspace merges into the item, the known items shown with a chunk come from the whole workspace by
relevance, and the same words in another workspace stay another item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkpoint import pipeline, runner
from checkpoint.answer import ItemDraft
from checkpoint.config import Settings
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.model import ChunkInput, ItemKind, ItemState, Role, TurnSlice
from checkpoint.store import Store
from checkpoint.store.search import chunk_terms, file_expression
from tests.support import item_corpus
from tests.support.claude_code_lines import S, assistant, user
from tests.support.codex_lines import CODEX_ID, codex_line, write_rollout


def _draft(statement: str, turn: str, same_as: str | None = None, files: tuple[str, ...] = ()) -> ItemDraft:
    return ItemDraft(kind=ItemKind.DECISION, statement=statement, turn_ids=[turn], same_as=same_as, files=list(files))


def _chunk(store: Store, session_id: str, text: str, files: tuple[str, ...] = ()) -> ChunkInput:
    [cwd] = [s.cwd for s in store.session_counts([session_id])]
    return ChunkInput(chunk_id=0, session_id=session_id, agent="claude", cwd=cwd, token_estimate=10,
                      turns=[TurnSlice(turn_id="x", seq=1, role=Role.USER, text=text, files=files)])


def test_a_decision_restated_in_a_second_session_of_the_workspace_is_one_item_with_two_sources(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "db")
    [first] = item_corpus.session(store, "s1", "/work/app")
    [second] = item_corpus.session(store, "s2", "/work/app/")  # the same folder, spelled with a separator
    [third] = item_corpus.session(store, "s3", "/work/app")
    assert item_corpus.commit(store, "s1", [_draft("We'll use SQLite for the queue.", first)]) == 1
    assert item_corpus.commit(store, "s2", [_draft("we'll use sqlite for the queue", second)]) == 0
    [item] = store.items()
    # a third session words it differently and the model points at the known item
    assert item_corpus.commit(store, "s3", [_draft("The queue lives in SQLite", third, same_as=item.id)]) == 0
    [item] = store.items()
    assert item.turn_ids == (first, second, third)
    assert [s.path for s in item.sources] == [f"/transcripts/{s}.jsonl" for s in ("s1", "s2", "s3")]


def test_forgetting_one_session_keeps_what_the_other_sessions_said(tmp_path: Path) -> None:
    store = Store(tmp_path / "db")
    [first] = item_corpus.session(store, "s1", "/work/app")
    [second] = item_corpus.session(store, "s2", "/work/app")
    item_corpus.commit(store, "s1", [_draft("We'll use SQLite for the queue.", first),
                                     _draft("Only the first session said this.", first)])
    [first_only] = [i for i in store.items() if i.statement.startswith("Only")]
    item_corpus.commit(store, "s2", [_draft("we'll use sqlite for the queue", second),
                                     _draft("Only the second session said this.", second)])
    assert store.forget_session("s1") is not None
    # the shared decision passes to the session still there, citing only its turns; s1's own item is gone
    assert sorted((i.statement, i.session_id, i.turn_ids) for i in store.items()) == [
        ("Only the second session said this.", "s2", (second,)),
        ("We'll use SQLite for the queue.", "s2", (second,)),
    ]
    assert first_only.id not in {i.id for i in store.items()}
    # forgetting the other one too leaves nothing of either
    assert store.forget_session("s2") is not None
    assert store.items() == []


def test_the_same_words_in_two_workspaces_stay_two_items(tmp_path: Path) -> None:
    store = Store(tmp_path / "db")
    [here] = item_corpus.session(store, "s1", "/work/app")
    [there] = item_corpus.session(store, "s2", "/work/other")
    [none] = item_corpus.session(store, "s3", None)
    item_corpus.commit(store, "s1", [_draft("We'll use SQLite for the queue.", here)])
    [mine] = store.items()
    # same words, and even a same_as naming the other workspace's item: a new item of its own workspace
    assert item_corpus.commit(store, "s2", [_draft("We'll use SQLite for the queue.", there, same_as=mine.id)]) == 1
    assert item_corpus.commit(store, "s3", [_draft("We'll use SQLite for the queue.", none)]) == 1
    assert sorted(i.session_id for i in store.items()) == ["s1", "s2", "s3"]


def test_known_items_come_from_the_whole_workspace_by_files_then_words_then_recency(tmp_path: Path) -> None:
    store = Store(tmp_path / "db")
    [old] = item_corpus.session(store, "s1", "/work/app")
    item_corpus.commit(store, "s1", [
        _draft("Retries back off exponentially", old, files=("/work/app/src/retry.py",)),
        _draft("The cache is warmed at start", old),
        _draft("Dismissed idea about caching", old),
    ] + [_draft(f"Filler decision number {i}", old) for i in range(40)])
    dismissed = next(i for i in store.items() if i.statement.startswith("Dismissed"))
    store.set_item_state(dismissed.id, ItemState.DISMISSED)
    [other] = item_corpus.session(store, "o1", "/work/other")
    item_corpus.commit(store, "o1", [_draft("The cache is warmed in the other project", other)])
    item_corpus.session(store, "s2", "/work/app")

    chunk = _chunk(store, "s2", "Why is the cache cold? The cache should be warm.", files=("src/retry.py",))
    known = [k.statement for k in store.known_items_for(chunk, 5)]
    assert known[:2] == ["Retries back off exponentially", "The cache is warmed at start"]
    assert len(known) == 5 and "Dismissed idea about caching" not in known
    assert "The cache is warmed in the other project" not in known
    assert store.known_items_for(chunk, 0) == []
    # the old per-session choice saw nothing for a new session
    assert store.known_items("s2", 5) == []


def test_chunk_terms_and_file_phrases() -> None:
    assert chunk_terms(["the cache, the cache! with retry and a queue", "cache that"]) == ["cache", "queue", "retry"]
    assert file_expression(["/a/b/src/retry.py", "x"]) == 'files : ("src retry py" OR "x")'
    assert file_expression(["///"]) is None


@pytest.mark.parametrize("items", [10_000])
def test_choosing_known_items_at_10000_items_in_a_workspace_is_quick(tmp_path: Path, items: int) -> None:
    store = item_corpus.build(tmp_path / "db", items, sessions=2)
    words = item_corpus.vocabulary()
    item_corpus.session(store, "new", "/work/project")
    chunk = _chunk(store, "new", " ".join(words[i] for i in range(0, 400, 7)), files=("src/a.py",))
    known, steps = item_corpus.sqlite_steps(store.conn, lambda: store.known_items_for(chunk, 30))
    assert len(known) == 30
    # Quick as work, not as time (scripts/bench_search.py measures it): less than one pass over the items
    # (2.5 times less when this was written), which reading every item to score it would at least take.
    _, one_pass = item_corpus.sqlite_steps(store.conn, lambda: store.conn.execute(
        "SELECT count(*) FROM items WHERE statement LIKE '%q%'").fetchone())
    assert steps < one_pass, (steps, one_pass)


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
    rollout = write_rollout(roots[1] / "2026" / "12" / "01" / f"rollout-2026-12-01T10-00-00-{CODEX_ID}.jsonl",
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
