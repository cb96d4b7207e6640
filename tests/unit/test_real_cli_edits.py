"""What the real agent CLIs wrote to files, from their real transcripts (tests/data): each reader's
FileEdit records, stored beside the turn, and found again in the file by the anchor finder.

The Claude Code + Codex corpus holds no file edit (its sessions only talk, run Bash and spawn
sub-agents); the edit fixtures of all five agents (tests/data/real_cli/README.md, "Edits") are
checked end to end, to the diagnostic on the lines written, by tests/server/test_server_edit_anchors.py."""

from __future__ import annotations

import shutil
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from checkpoint import pipeline
from checkpoint.anchor import Span, locate
from checkpoint.config import Settings
from checkpoint.model import FileEdit
from checkpoint.store import Store
from tests.support.paths import DATA_DIR

DATA = DATA_DIR


def _stored_edits(store: Store) -> list[tuple[str, FileEdit]]:
    rows = store.conn.execute(
        "SELECT s.agent, e.path, e.text FROM turn_edits e JOIN sessions s ON s.id = e.session_id"
        " ORDER BY e.session_id, e.turn_id, e.n").fetchall()
    return [(agent, FileEdit(Path(path).name, text)) for agent, path, text in rows]


def _scan(tmp_path: Path, settings: Settings, store: Store, archive: Path, source: str) -> list[tuple[str, FileEdit]]:
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    report = pipeline.scan(store, replace(settings, sources=[tmp_path / source]))
    assert report.problems == []
    return _stored_edits(store)


@pytest.mark.unit
def test_copilot_create_then_edit_are_stored_and_anchor_on_the_lines_written(
    tmp_path: Path, settings: Settings, store: Store
) -> None:
    edits = _scan(tmp_path, settings, store, DATA / "real_cli" / "copilot.tar.gz", "copilot/session-state")
    assert sorted(edits, key=str) == sorted([
        ("copilot", FileEdit("notes.md", "# Notez\nbody\n")), ("copilot", FileEdit("notes.md", "# Notes")),
    ], key=str)
    assert locate("intro\n\n# Notez\nbody\n", "# Notez\nbody\n") == Span(2, 3)


@pytest.mark.unit
def test_gemini_write_file_is_stored(tmp_path: Path, settings: Settings, store: Store) -> None:
    """Stored once though the CLI writes the call twice (the message again with its toolCalls). The
    text it wrote ("# Notes\\n") is shorter than a line that says where anything is (anchor.MIN_DISTINCT):
    its anchoring is the same as any write's, tested below for opencode's."""
    edits = _scan(tmp_path, settings, store, DATA / "real_cli" / "gemini.tar.gz", "gemini/tmp")
    assert edits == [("gemini", FileEdit("notes.md", "# Notes\n"))]


@pytest.mark.unit
def test_opencode_write_is_stored_and_anchors_on_the_lines_written(
    tmp_path: Path, settings: Settings, store: Store
) -> None:
    with tarfile.open(DATA / "opencode" / "sessions.tar.gz") as tar:
        tar.extractall(tmp_path / "data", filter="data")
    root = tmp_path / "opencode"
    root.mkdir()
    shutil.copy(tmp_path / "data" / "final" / "opencode" / "opencode.db", root / "opencode.db")
    report = pipeline.scan(store, replace(settings, sources=[root]))
    assert report.problems == []
    edits = _stored_edits(store)
    # the fork's copy of the write is the same turn (its id is its content's): stored once
    assert edits == [("opencode", FileEdit("notes.md", "parser: the fast one\n"))]
    assert locate("# Notes\nparser: the fast one\n", edits[0][1].text) == Span(1, 1)
