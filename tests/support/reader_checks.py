"""What the reader tests on the real CLIs' sessions check alike, whatever the agent: each planted marker
(said once by the fake model) is in one turn and becomes one item; a rescan, or the same bytes in new
files, adds nothing; files written in two torn halves read as the same turns as written whole.

tests/conftest.py has pytest rewrite the asserts here, so a failure shows what differs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from checkpoint import pipeline, runner
from checkpoint.config import Settings
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.store import Store


def assert_each_once(texts: Sequence[str], markers: Iterable[str]) -> None:
    """Every marker in exactly one of the texts (turns, or item statements)."""
    for marker in markers:
        assert sum(marker in t for t in texts) == 1, (marker, [t[:80] for t in texts if marker in t] or texts)


def assert_each_one_item(store: Store, markers: Iterable[str]) -> None:
    """The heuristic extractor over every due chunk: no failure, and one item naming each marker."""
    run = runner.extract_due(store, HeuristicExtractor())
    assert (run.failed, run.failures) == (0, [])
    assert_each_once([i.statement for i in store.items(include_dismissed=True)], markers)


def assert_rescans_add_nothing(store: Store, settings: Settings, files: Iterable[Path]) -> None:
    """A rescan adds nothing; the same bytes in new files (new inodes: re-read from the start) add nothing
    either."""
    assert pipeline.scan(store, settings).turns_added == 0
    for path in list(files):
        copy = path.with_name(path.name + ".tmp")
        copy.write_bytes(path.read_bytes())
        copy.replace(path)
    again = pipeline.scan(store, settings)
    assert (again.turns_added, again.chunks_created) == (0, 0)


def assert_torn_appends_read_the_same(store: Store, settings: Settings, files: Iterable[Path],
                                      turns: Callable[[Store], Sequence[Any]], whole_db: Path) -> None:
    """Each file written in two halves, the first cut inside a line, scanned after each: the turns stored
    are those a fresh database (at whole_db) stores from the whole files."""
    whole = {p: p.read_bytes() for p in files}
    for path, data in whole.items():
        path.write_bytes(data[: len(data) // 2])
    pipeline.scan(store, settings)
    for path, data in whole.items():
        path.write_bytes(data)
    pipeline.scan(store, settings)
    torn = sorted(turns(store))

    other = Store(whole_db)
    try:
        pipeline.scan(other, replace(settings, db=whole_db))
        assert sorted(turns(other)) == torn
    finally:
        other.close()


def assert_written_in_pieces_reads_the_same(store: Store, settings: Settings, path: Path, versions: Sequence[bytes],
                                            turns: Callable[[Store], Sequence[Any]], whole_db: Path) -> None:
    """The file at `path` written as each of `versions` in turn (a log's prefixes cut at any byte, a
    database's successive states), scanned after each: the turns stored are those a fresh database
    (at whole_db) stores from the last version alone."""
    for data in versions:
        path.write_bytes(data)
        pipeline.scan(store, settings)
    pieces = sorted(turns(store))

    other = Store(whole_db)
    try:
        pipeline.scan(other, replace(settings, db=whole_db))
        assert sorted(turns(other)) == pieces
    finally:
        other.close()
