"""Edits stored beside their turn: redacted as the text is, handed between processes with the batch,
and back-filled once for turns stored before edits were (when the store is next opened for writing,
not by a scan)."""

from __future__ import annotations

import json
import pickle
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from checkpoint import pipeline, redact
from checkpoint.backfills import open_store
from checkpoint.config import Settings
from checkpoint.model import FileCursor, FileEdit, Role, ScannedTurn, SessionInfo, TurnDraft
from checkpoint.sources import turn_text
from checkpoint.store import Store

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _batch(*drafts: TurnDraft) -> pipeline._Batch:
    batch = pipeline._Batch()
    batch.turns = [ScannedTurn(d, n, 10, 2) for n, d in enumerate(drafts, start=1)]
    return batch


@pytest.mark.unit
def test_a_batch_handed_to_another_process_keeps_its_edits() -> None:
    draft = TurnDraft("t1", Role.TOOL, "[edit]", edits=(FileEdit("/w/a.py", "x = 1"), FileEdit("/w/b.py", "y")))
    back = pickle.loads(pickle.dumps(_batch(draft, TurnDraft("t2", Role.USER, "hi"))))
    assert [t.draft for t in back.turns] == [draft, TurnDraft("t2", Role.USER, "hi")]


@pytest.mark.unit
def test_edits_are_redacted_like_the_turns_text() -> None:
    draft = TurnDraft("t1", Role.TOOL, f"token = {SECRET}", edits=(FileEdit("/w/a.py", f"TOKEN = '{SECRET}'"),
                                                                    FileEdit("/w/b.py", "plain = 1")))
    batch = _batch(draft)
    pipeline._redact_batch(redact.redactor(True, {}), batch)
    stored = batch.turns[0].draft
    assert SECRET not in stored.text and SECRET not in stored.edits[0].text
    assert stored.edits[0].path == "/w/a.py" and stored.edits[1] == FileEdit("/w/b.py", "plain = 1")


@pytest.mark.unit
def test_turns_stored_before_edits_get_theirs_once_when_the_store_next_opens(
    tmp_path: Path, settings: Settings, store: Store
) -> None:
    text = turn_text.tool_call("Edit", json.dumps({"file_path": "a.py", "old_string": "x", "new_string": "y = 1"}))
    old = TurnDraft("t1", Role.TOOL, text)  # as stored before: no edits
    store.ingest(FileCursor("/t/s.jsonl"), "claude", "s1", False, {}, [ScannedTurn(old, 1, 10, 2)],
                 SessionInfo(id="s1", agent="claude", cwd="/w"), Counter(), Counter(), [])
    with store.transaction() as c:
        c.execute("INSERT INTO backfills (name) VALUES ('turn_edits')")  # as the migration leaves it
    assert store.edits_in_window("s1", ["t1"]) == []
    pipeline.scan(store, replace(settings, sources=[tmp_path / "none"]))  # a scan back-fills nothing
    assert store.edits_in_window("s1", ["t1"]) == [] and store.edits_backfill_due()
    reopened = open_store(store.path)
    try:
        assert reopened.edits_in_window("s1", ["t1"]) == [FileEdit("/w/a.py", "y = 1")]
        assert not reopened.edits_backfill_due() and reopened.backfills_due() == []
    finally:
        reopened.close()
