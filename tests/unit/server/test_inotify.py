"""The watcher's inotify (Linux): what a write, a new directory and a deletion report, against the
real kernel."""

from __future__ import annotations

import select
import sys
from pathlib import Path

import pytest

from checkpoint.server.inotify import Changes, Inotify

pytestmark = pytest.mark.unit


def settled(watch: Inotify) -> Changes:
    """Everything queued once the kernel says something is there (or 2 s passed)."""
    select.select([watch.fd], [], [], 2.0)
    return watch.read()


def test_inotify_sees_writes_new_directories_and_what_is_written_in_them(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        with pytest.raises((OSError, AttributeError)):
            Inotify()
        return
    root = tmp_path / "projects"
    (root / "-a").mkdir(parents=True)
    watch = Inotify()
    try:
        watch.watch_tree(str(root))
        assert watch.read().paths == set()  # nothing yet: and the read does not wait
        (root / "-a" / "s.jsonl").write_text("{}\n")
        assert str(root / "-a" / "s.jsonl") in settled(watch).paths
        (root / "-b" / "s2" / "subagents").mkdir(parents=True)
        changes = settled(watch)
        assert str(root / "-b") in changes.new_dirs and not changes.overflow
        (root / "-b" / "s2" / "subagents" / "agent-1.jsonl").write_text("{}\n")  # a directory below the new one
        assert str(root / "-b" / "s2" / "subagents" / "agent-1.jsonl") in settled(watch).paths
        (root / "-a" / "s.jsonl").unlink()
        assert str(root / "-a" / "s.jsonl") in settled(watch).paths
    finally:
        watch.close()


def test_inotify_refuses_a_directory_that_is_not_there(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        return
    watch = Inotify()
    try:
        with pytest.raises(OSError):
            watch.watch_dir(str(tmp_path / "missing"))
        watch.watch_tree(str(tmp_path / "missing"))  # a tree that is not there: nothing to watch, no error
    finally:
        watch.close()
