"""Diagnostics read only what they need: no file over the limit, no binary, no FIFO; each version of a
file read once; one refresh bounded in the bytes it reads."""

from __future__ import annotations

import os
from pathlib import Path

from checkpoint.server.features.diagnostics.file_reads import MAX_BYTES, Budget, FileReads, Unread


def test_a_file_over_the_limit_is_not_opened(tmp_path: Path) -> None:
    big = tmp_path / "dump.log"
    with open(big, "wb") as fh:
        fh.truncate(4 * 1024**3)  # sparse: 4 GiB of nothing
    reads = FileReads()
    content = reads.read(str(big))
    assert isinstance(content, Unread) and "over 2 MB" in content.reason
    assert reads.disk_reads == 0


def test_a_binary_file_is_not_anchored(tmp_path: Path) -> None:
    blob = tmp_path / "model.bin"
    blob.write_bytes(b"\x7fELF\0\0\x01" * 100)
    content = FileReads().read(str(blob))
    assert isinstance(content, Unread) and "not text" in content.reason


def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert FileReads().read(str(fifo)) is None  # opening it would block the refresh for good


def test_each_version_of_a_file_is_read_once(tmp_path: Path) -> None:
    src = tmp_path / "a.py"
    src.write_text("x = 1\n")
    reads = FileReads()
    assert [reads.read(str(src)) for _ in range(5)] == ["x = 1\n"] * 5
    assert reads.disk_reads == 1
    src.write_text("x = 22\n")  # the size changes, so the key does whatever the mtime's grain
    assert reads.read(str(src)) == "x = 22\n"
    assert reads.disk_reads == 2
    assert reads.read(str(tmp_path / "gone.py")) is None


def test_one_refresh_reads_at_most_its_budget(tmp_path: Path) -> None:
    reads = FileReads()
    budget = Budget(limit=3 * 1000)
    results = []
    for i in range(5):
        path = tmp_path / f"f{i}.txt"
        path.write_text("y" * 1000)
        results.append(reads.read(str(path), budget))
    assert results[:3] == ["y" * 1000] * 3
    assert all(isinstance(r, Unread) and "too many files" in r.reason for r in results[3:])
    assert reads.disk_reads == 3
    assert reads.read(str(tmp_path / "f0.txt"), Budget(limit=0)) == "y" * 1000  # cached: costs nothing


def test_a_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "edge.txt"
    path.write_bytes(b"z" * MAX_BYTES)
    content = FileReads().read(str(path))
    assert isinstance(content, str) and len(content) == MAX_BYTES
