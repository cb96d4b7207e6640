"""The real public samples, laid out as ~/.claude/projects and ~/.codex/sessions, end to end: scan and
checkpoint capture every turn exactly once, against a count computed here from the files and the
formats' policies (docs/architecture.md, "Transcript formats"), and neither a rescan nor a forced
re-read adds anything."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from checkpoint import pipeline, runner
from checkpoint.config import Settings
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.model import Totals
from checkpoint.status_model import read_status
from checkpoint.store import Store
from tests.support.sample_tree import build_tree, make_settled

CHUNK_TOKENS = 300  # small: many chunks, and the longer turns are split

def _same_bytes_new_inode(path: Path) -> None:
    before = path.stat()
    tmp = path.with_name(path.name + ".tmp")
    shutil.copyfile(path, tmp)
    os.replace(tmp, path)
    make_settled(path)
    after = path.stat()
    assert after.st_ino != before.st_ino and after.st_size == before.st_size


# -- the test -------------------------------------------------------------------------------------


@pytest.fixture
def sample_settings(settings: Settings) -> Settings:
    return replace(settings, chunk_tokens=CHUNK_TOKENS)


def _turn_rows(store: Store) -> list[tuple[str, str, str]]:
    return store.conn.execute("SELECT id, session_id, source_path FROM turns ORDER BY session_id, seq").fetchall()


def _items(store: Store) -> list[tuple[str, str, str]]:
    return sorted((i.id, i.kind.value, i.statement) for i in store.items(include_dismissed=True))


def test_samples_every_turn_captured_once(
    roots: tuple[Path, Path], sample_settings: Settings, store: Store
) -> None:
    layout = build_tree(*roots)
    expected_ids = [tid for exp in layout.values() for tid in exp.turn_ids]
    assert len(expected_ids) == len(set(expected_ids)), "the samples share no turn id"
    assert len(expected_ids) > 100

    report = pipeline.scan(store, sample_settings)
    assert report.files_seen == len(layout)
    assert report.turns_added == len(expected_ids)

    # Every turn, in the session and file it was read from, none twice.
    rows = _turn_rows(store)
    assert sorted(rows) == sorted((tid, exp.session_id, str(path)) for path, exp in layout.items()
                                  for tid in exp.turn_ids)
    sessions = {s.id: s for s in store.session_counts()}
    assert {sid: s.turns for sid, s in sessions.items()} == {
        exp.session_id: len(exp.turn_ids) for exp in layout.values()}
    assert {sid: s.agent for sid, s in sessions.items()} == {exp.session_id: exp.agent for exp in layout.values()}
    for exp in layout.values():
        dropped = sessions[exp.session_id].dropped
        assert {policy: dropped[policy]["records"] for policy in exp.copies if policy in dropped} == dict(exp.copies)
    problems = {(p.path, p.line) for p in store.problems(limit=1000)}
    assert problems == {(str(path), n) for path, exp in layout.items() for n in exp.problem_lines}

    # Every turn lands in a chunk that fits the budget; the checkpoint captures all of them.
    assert report.chunks_created > len(layout)
    run = runner.extract_due(store, HeuristicExtractor())
    assert (run.failed, run.failures) == (0, [])
    assert run.captured == run.tried == report.chunks_created
    status = read_status(store)
    turns = len(expected_ids)
    assert status.totals == Totals(turns=turns, captured=turns, pending=0, failed=0)
    assert store.chunk_states() == Counter({"captured": report.chunks_created})
    items = _items(store)
    assert items, "the heuristic finds decisions, constraints or questions in these sessions"

    # Scanning again adds nothing.
    again = pipeline.scan(store, sample_settings)
    assert (again.turns_added, again.chunks_created, again.files_read) == (0, 0, 0)
    assert _turn_rows(store) == rows

    # The same bytes in new files (a tmp file renamed over each): re-read from the start, nothing added.
    for path in layout:
        _same_bytes_new_inode(path)
    reread = pipeline.scan(store, sample_settings)
    assert reread.files_read == len(layout)
    assert {w.split(":", 1)[0] for w in (p.text for p in reread.problems) if "re-read from the start" in w} == {
        str(p) for p in layout}
    assert (reread.turns_added, reread.chunks_created) == (0, 0)
    assert _turn_rows(store) == rows
    rerun = runner.extract_due(store, HeuristicExtractor())
    assert (rerun.tried, rerun.items_added) == (0, 0)
    assert _items(store) == items
    assert read_status(store).totals == status.totals

    # Nothing is left to read: the cursors sit at the end of every file.
    for path in layout:
        row = store.get_file(str(path))
        assert row is not None and (row.cursor.offset, row.cursor.size) == (path.stat().st_size,) * 2
