"""Supersession: a later item replaces an earlier one, said by the model (`supersedes`), by the
offline heuristic's phrase rules, or by hand; the old item is kept and marked, a chain never loops."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from checkpoint.answer import ItemDraft
from checkpoint.extract import supersessions
from checkpoint.extract.answer_schema import read_answer
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.model import ItemKind, ItemState, KnownItem
from checkpoint.store import Store, SupersessionRefused
from tests.support import item_corpus


def _run_heuristic(store: Store, session_id: str, cwd: str, text: str) -> None:
    """A session of one user turn, extracted by the offline extractor with the workspace's known items."""
    item_corpus.session(store, session_id, cwd, [text])
    [chunk] = store.claim_chunks(1, "me", session_id=session_id)
    chunk = replace(chunk, known_items=store.known_items_for(chunk, 30))
    store.commit_extraction(HeuristicExtractor().extract(chunk), "me")


def test_a_decision_restated_then_reversed_across_three_sessions_of_a_workspace(tmp_path: Path) -> None:
    store = Store(tmp_path / "db")
    _run_heuristic(store, "s1", "/work/app", "We'll use vLLM for model serving.")
    _run_heuristic(store, "s2", "/work/app", "We'll use vLLM for model serving.")
    [item] = store.items()
    assert item.turn_ids == ("s1-t0", "s2-t0")  # one item, two sources
    _run_heuristic(store, "s3", "/work/app", "We'll use SGLang instead of vLLM from now on.")
    old, new = sorted(store.items(), key=lambda i: i.created_at)
    assert old.id == item.id and old.superseded_by == new.id and new.supersedes == (old.id,)
    assert [i.id for i in store.items(include_superseded=False)] == [new.id]
    [link] = store.supersessions(old.id)
    assert (link.said_by, link.turn_id) == ("heuristic", "s3-t0") and "instead of vLLM" in (link.reason or "")
    # the old item is not shown to the model any more: the new one is
    item_corpus.session(store, "s4", "/work/app", ["Serving again"])
    [chunk] = store.claim_chunks(1, "me", session_id="s4")
    assert [k.id for k in store.known_items_for(chunk, 30)] == [new.id]


def test_a_reversal_in_another_workspace_leaves_this_one_alone(tmp_path: Path) -> None:
    store = Store(tmp_path / "db")
    _run_heuristic(store, "s1", "/work/app", "We'll use vLLM for model serving.")
    _run_heuristic(store, "s2", "/work/other", "We'll use SGLang instead of vLLM from now on.")
    assert all(i.superseded_by is None for i in store.items())


def test_the_model_names_what_an_item_supersedes_and_a_bad_name_is_ignored(tmp_path: Path) -> None:
    store = Store(tmp_path / "db")
    [turn] = item_corpus.session(store, "s1", "/work/app")
    item_corpus.commit(store, "s1", [ItemDraft(kind=ItemKind.DECISION, statement="Use Redis", turn_ids=[turn])])
    [old] = store.items()
    [turn2] = item_corpus.session(store, "s2", "/work/app")
    drafts = read_answer(json.dumps({"items": [
        {"kind": "decision", "statement": "Use Postgres for the cache", "turn_ids": [turn2],
         "supersedes": old.id, "supersedes_reason": "Redis was dropped to run one database"},
        {"kind": "decision", "statement": "Refers to nothing", "turn_ids": [turn2], "supersedes": "no-such-id"},
    ]}))
    assert item_corpus.commit(store, "s2", drafts, extractor="anthropic") == 2
    [link] = store.supersessions(old.id)
    assert (link.said_by, link.reason, link.turn_id) == ("model", "Redis was dropped to run one database", turn2)
    assert sum(1 for i in store.items() if i.superseded_by) == 1


def test_by_hand_with_undo_a_dismissed_item_allowed_and_a_loop_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "db")
    [turn] = item_corpus.session(store, "s1", "/work/app")
    item_corpus.commit(store, "s1", [ItemDraft(kind=ItemKind.DECISION, statement=s, turn_ids=[turn])
                                     for s in ("Use A", "Use B", "Use C")])
    a, b, c = (i.id for i in sorted(store.items(), key=lambda i: i.statement))
    store.set_item_state(a, ItemState.DISMISSED)
    assert store.supersede(a, b, reason="B replaced A") is True
    assert store.supersede(a, b) is False  # already there
    assert store.supersede(b, c) is True
    with pytest.raises(SupersessionRefused, match="would make a loop"):
        store.supersede(c, a)  # a -> b -> c: c superseded by a closes the chain
    with pytest.raises(SupersessionRefused, match="would make a loop"):
        store.supersede(b, a)
    with pytest.raises(SupersessionRefused, match="cannot supersede itself"):
        store.supersede(a, a)
    with pytest.raises(SupersessionRefused, match="no item nope"):
        store.supersede(a, "nope")
    by_id = {i.id: i for i in store.items(include_dismissed=True)}
    assert (by_id[a].superseded_by, by_id[b].superseded_by, by_id[c].superseded_by) == (b, c, None)
    assert by_id[a].state is ItemState.DISMISSED
    [link] = [s for s in store.supersessions(a)]
    assert (link.said_by, link.reason, link.turn_id) == ("user", "B replaced A", None)
    assert store.unsupersede(b) == 1
    assert {i.id: i.superseded_by for i in store.items(include_dismissed=True)}[b] is None
    store.supersede(c, a)  # no loop any more once b -> c is undone... a -> b, c -> a
    assert store.unsupersede(a, "other") == 0 and store.unsupersede(a, b) == 1


def test_forgetting_a_session_takes_its_links_with_its_items(tmp_path: Path) -> None:
    store = Store(tmp_path / "db")
    _run_heuristic(store, "s1", "/work/app", "We'll use vLLM for model serving.")
    _run_heuristic(store, "s3", "/work/app", "We'll use SGLang instead of vLLM from now on.")
    store.forget_session("s1")
    assert store.conn.execute("SELECT count(*) FROM supersessions").fetchone() == (0,)
    assert [i.superseded_by for i in store.items()] == [None]


@pytest.mark.parametrize(("sentence", "expected"), [
    ("We'll use SGLang instead of vLLM.", "k1"),
    ("Let's switch from vLLM to SGLang.", "k1"),
    ("We no longer use the vLLM server.", "k1"),
    ("Replace vLLM with SGLang everywhere.", "k1"),
    ("We moved away from Postgres to SQLite.", "k2"),
    ("We'll use SGLang instead of TensorRT.", None),  # X names no known item
    ("We'll use SGLang for serving.", None),  # no phrase of replacement
    ("Instead of asking, should we use vLLM?", None),  # the known item that matches is a question
])
def test_the_offline_phrase_rules(sentence: str, expected: str | None) -> None:
    known = [KnownItem("q1", ItemKind.QUESTION, "Should we ask about asking?"),
             KnownItem("k1", ItemKind.DECISION, "We'll use vLLM server for serving"),
             KnownItem("k2", ItemKind.CONSTRAINT, "Data must live in Postgres")]
    found = supersessions.find(sentence, known)
    assert (found.id if found else None) == expected
    assert bool(supersessions.fields(sentence, known)) == (expected is not None)


def test_the_cli_supersedes_by_hand_hides_the_old_item_unless_all_and_undoes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from checkpoint import cli

    monkeypatch.setenv("CHECKPOINT_SOURCES", str(tmp_path / "none"))
    store = Store(tmp_path / "db")
    [turn] = item_corpus.session(store, "s1", "/work/app")
    item_corpus.commit(store, "s1", [ItemDraft(kind=ItemKind.DECISION, statement=s, turn_ids=[turn])
                                     for s in ("Use Redis", "Use Postgres")])
    old, new = (i.id for i in sorted(store.items(), key=lambda i: i.statement, reverse=True))
    store.close()
    db = ["--db", str(tmp_path / "db")]
    assert cli.main(["supersede", old[:6], new, "--reason", "one database", *db]) == 0
    assert f"Item {old} is superseded by {new}." in capsys.readouterr().out
    assert cli.main(["supersede", new, old, *db]) == 2
    assert "would make a loop" in capsys.readouterr().err
    assert cli.main(["supersede", "zz", new, *db]) == 2
    assert "checkpoint: no item 'zz'" in capsys.readouterr().err
    assert cli.main(["items", *db]) == 0
    out = capsys.readouterr().out
    assert "Use Redis" not in out and "1 superseded item not shown" in out
    assert cli.main(["items", "--all", *db]) == 0
    assert f"Use Redis  ({old})  [superseded by {new}]" in capsys.readouterr().out
    assert cli.main(["items", "--all", "--json", *db]) == 0
    by_id = {i["id"]: i for i in json.loads(capsys.readouterr().out)["items"]}
    assert by_id[old]["superseded_by"] == new and by_id[new]["supersedes"] == [old]
    assert cli.main(["supersede", "--undo", old, *db]) == 0
    assert f"Item {old} is no longer superseded (1 link)." in capsys.readouterr().out
    assert cli.main(["items", "--json", *db]) == 0
    assert len(json.loads(capsys.readouterr().out)["items"]) == 2
