"""The tailer: whole lines only, byte offsets, the settled last line, oversized lines, file identity."""

from __future__ import annotations

import json
import os
import shutil
import tracemalloc
from pathlib import Path

import pytest

from checkpoint.config import MAX_LINE_BYTES
from checkpoint.model import FileCursor
from checkpoint.sources import tailer
from checkpoint.sources.tailer import (
    SETTLE_SECONDS,
    RawLine,
    Reset,
    SkippedLine,
    TailEvent,
    advance,
    check_identity,
    fresh_cursor,
    tail,
    unchanged,
)


def _settled(path: Path) -> float:
    """A `now` at which the file has been quiet long enough."""
    return os.stat(path).st_mtime_ns / 1e9 + SETTLE_SECONDS


def _fresh(path: Path) -> float:
    """A `now` at which the file was written a moment ago."""
    return os.stat(path).st_mtime_ns / 1e9 + SETTLE_SECONDS / 10


def read(path: Path, cursor: FileCursor | None = None, now: float | None = None,
         max_line_bytes: int = MAX_LINE_BYTES) -> tuple[list[TailEvent], FileCursor]:
    """One pass as the pipeline does it: identity check, tail, advance the cursor per event."""
    st = os.stat(path)
    if cursor is None or check_identity(cursor, st) is not None:
        cursor = fresh_cursor(FileCursor(str(path)), st)
    events = list(tail(cursor, st, max_line_bytes, now=_fresh(path) if now is None else now))
    for event in events:
        cursor = advance(cursor, event, st)
    return events, cursor


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def lines_of(events: list[TailEvent]) -> list[bytes]:
    return [e.data for e in events if isinstance(e, RawLine)]


# -- whole lines ----------------------------------------------------------------------------------


def test_half_written_line_waits_then_is_read_once_completed(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = b'{"n":1}\n'
    path.write_bytes(first + b'{"n":2,"te')

    events, cursor = read(path)
    assert events == [RawLine(1, b'{"n":1}', len(first))]
    assert (cursor.offset, cursor.line_no) == (len(first), 1)

    # Nothing new: the half line still waits, and nothing is read twice.
    again, cursor = read(path, cursor)
    assert again == []
    assert cursor.offset == len(first)

    append(path, b'xt":"ok"}\n')
    events, cursor = read(path, cursor)
    assert events == [RawLine(2, b'{"n":2,"text":"ok"}', path.stat().st_size)]
    assert cursor.offset == path.stat().st_size
    assert read(path, cursor)[0] == []


def test_half_line_is_not_read_even_when_a_block_ends_on_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tailer, "BLOCK_SIZE", 5)
    path = tmp_path / "t.jsonl"
    records = [b'{"a":"%d"}' % i * (i + 1) for i in range(6)]
    path.write_bytes(b"\n".join(records) + b"\n" + b'{"partial":')
    events, cursor = read(path)
    assert lines_of(events) == records
    assert [e.line_no for e in events] == [1, 2, 3, 4, 5, 6]
    assert cursor.offset == path.stat().st_size - len(b'{"partial":')


def test_offsets_are_bytes_across_multibyte_utf8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Blocks of 7 bytes cut through the middle of 2-, 3- and 4-byte characters.
    monkeypatch.setattr(tailer, "BLOCK_SIZE", 7)
    path = tmp_path / "t.jsonl"
    texts = ["café naïve", "中文字符", "🎉🚀 emoji", "ascii", "русский текст"]
    records = [json.dumps({"text": t}, ensure_ascii=False, separators=(",", ":")).encode() for t in texts]
    path.write_bytes(b"".join(r + b"\n" for r in records))

    events, _ = read(path)
    ends, end = [], 0
    for r in records:
        end += len(r) + 1
        ends.append(end)
    assert events == [RawLine(i + 1, r, e) for i, (r, e) in enumerate(zip(records, ends, strict=True))]
    assert [json.loads(e.data)["text"] for e in events if isinstance(e, RawLine)] == texts

    # Resuming from any of those offsets reads exactly the rest.
    st = path.stat()
    cursor = fresh_cursor(FileCursor(str(path)), st)
    for i in range(len(records)):
        rest = list(tail(advance(cursor, events[i], st), st, now=_fresh(path)))
        assert rest == events[i + 1 :]


def test_crlf_and_blank_lines_keep_their_bytes_and_numbers(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\r\n\n{"b":2}\n')
    events, _ = read(path)
    assert events == [RawLine(1, b'{"a":1}\r', 9), RawLine(2, b"", 10), RawLine(3, b'{"b":2}', 18)]


# -- a last line without a newline ----------------------------------------------------------------


def test_unterminated_last_line_waits_until_the_file_settled(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}')

    events, cursor = read(path, now=_fresh(path))
    assert events == [RawLine(1, b'{"a":1}', 8)]

    events, cursor = read(path, cursor, now=_settled(path) - 0.01)
    assert events == []

    events, cursor = read(path, cursor, now=_settled(path))
    assert events == [RawLine(2, b'{"b":2}', 15)]
    assert (cursor.offset, cursor.line_no) == (15, 2)
    assert read(path, cursor, now=_settled(path) + 100)[0] == []


@pytest.mark.parametrize(
    "tail_bytes",
    [
        b'{"a":{"b":1}',  # looks like {...} but is a prefix of a record
        b'{"a":"x}',
        b'{"a":1',
        b"[1,2]",  # a whole JSON value, but not a record
        b'{"a":1}{"b":',  # a record joined with the start of the next one
    ],
)
def test_unterminated_line_that_is_not_one_whole_record_is_never_read(tmp_path: Path, tail_bytes: bytes) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n' + tail_bytes)
    events, cursor = read(path, now=_settled(path) + 3600)
    assert events == [RawLine(1, b'{"a":1}', 8)]
    assert cursor.offset == 8


def test_newline_arriving_after_a_settled_last_line_does_not_make_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}')
    events, cursor = read(path, now=_settled(path))
    assert lines_of(events) == [b'{"a":1}', b'{"b":2}']

    append(path, b'\n{"c":3}\n')
    events, cursor = read(path, cursor)
    # The newline ends line 2 (already read): no empty line 3, and {"c":3} is line 3 of the file.
    assert events == [RawLine(2, b"", 16), RawLine(3, b'{"c":3}', 24)]
    assert (cursor.offset, cursor.line_no) == (24, 3)
    assert unchanged(cursor, path.stat())


def test_record_appended_on_the_same_line_after_a_settled_last_line_is_read(tmp_path: Path) -> None:
    # A writer that resumes without first ending the line (Claude's "}{" joins): the rest is new bytes.
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}')
    events, cursor = read(path, now=_settled(path))
    assert events == [RawLine(1, b'{"a":1}', 7)]
    append(path, b'{"b":2}\n')
    events, cursor = read(path, cursor)
    assert events == [RawLine(2, b'{"b":2}', 15)]


def test_reads_only_what_the_stat_saw(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n')
    st = path.stat()
    cursor = fresh_cursor(FileCursor(str(path)), st)
    append(path, b'{"b":2}\n')  # written after the stat
    events = list(tail(cursor, st, now=_settled(path)))
    assert events == [RawLine(1, b'{"a":1}', 8)]


# -- oversized lines ------------------------------------------------------------------------------


def test_oversized_line_is_skipped_and_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tailer, "BLOCK_SIZE", 64)
    path = tmp_path / "t.jsonl"
    small, big = b'{"a":1}', b'{"big":"' + b"x" * 1000 + b'"}'
    path.write_bytes(small + b"\n" + big + b"\n" + small + b"\n")
    events, cursor = read(path, max_line_bytes=100)
    end2 = 8 + len(big) + 1
    assert events == [
        RawLine(1, small, 8),
        SkippedLine(2, len(big), end2, f"line of {len(big)} bytes exceeds 100"),
        RawLine(3, small, end2 + 8),
    ]
    assert cursor.offset == path.stat().st_size


@pytest.mark.parametrize("length", [101, 150, 1000])
def test_line_just_over_the_limit_is_skipped_and_one_at_the_limit_is_kept(tmp_path: Path, length: int) -> None:
    path = tmp_path / "t.jsonl"
    at_limit = b"{" + b" " * 98 + b"}"
    over = b"{" + b" " * (length - 2) + b"}"
    path.write_bytes(at_limit + b"\n" + over + b"\n")
    events, _ = read(path, max_line_bytes=100)
    assert events == [
        RawLine(1, at_limit, 101),
        SkippedLine(2, length, 101 + length + 1, f"line of {length} bytes exceeds 100"),
    ]


def test_oversized_line_reading_keeps_memory_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tailer, "BLOCK_SIZE", 4096)
    path = tmp_path / "t.jsonl"
    huge = 8 << 20
    with path.open("wb") as fh:
        fh.write(b'{"a":1}\n{"huge":"')
        chunk = b"y" * (1 << 20)
        for _ in range(huge >> 20):
            fh.write(chunk)
        fh.write(b'"}\n{"b":2}\n')
    st = path.stat()
    cursor = fresh_cursor(FileCursor(str(path)), st)
    tracemalloc.start()
    try:
        events = list(tail(cursor, st, max_line_bytes=16 << 10, now=_fresh(path)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [type(e) for e in events] == [RawLine, SkippedLine, RawLine]
    assert isinstance(events[1], SkippedLine)
    assert events[1].line_no == 2 and events[1].size == huge + len(b'{"huge":""}')
    assert peak < 256 << 10, f"peak {peak} bytes while skipping an {huge}-byte line"


def test_oversized_unterminated_last_line_waits(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"big":"' + b"z" * 500 + b'"}')
    events, cursor = read(path, now=_settled(path) + 3600, max_line_bytes=100)
    assert events == [RawLine(1, b'{"a":1}', 8)]
    assert cursor.offset == 8


# -- file identity --------------------------------------------------------------------------------


def _consumed(path: Path) -> FileCursor:
    _, cursor = read(path)
    return cursor


def test_appending_keeps_identity(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n')
    cursor = _consumed(path)
    assert unchanged(cursor, path.stat())
    append(path, b'{"b":2}\n')
    assert check_identity(cursor, path.stat()) is None
    assert not unchanged(cursor, path.stat())


def test_new_inode_resets(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    cursor = _consumed(path)
    copy = tmp_path / "copy.jsonl"
    shutil.copy2(path, copy)
    os.replace(copy, path)  # same bytes, same size, new inode (tmp file + rename)
    assert check_identity(cursor, path.stat()) == Reset("file was replaced (new inode)")


def test_shrinking_resets(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    cursor = _consumed(path)
    with path.open("r+b") as fh:
        fh.truncate(8)
    assert check_identity(cursor, path.stat()) == Reset("file shrank from 16 to 8 bytes")


def test_rewritten_head_resets(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    cursor = _consumed(path)
    with path.open("r+b") as fh:  # same inode, same size, different first bytes
        fh.write(b'{"z":9}\n')
    assert check_identity(cursor, path.stat()) == Reset("file was rewritten (its first bytes changed)")


def test_rewritten_head_is_noticed_for_a_file_first_seen_empty(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    events, cursor = read(path)
    assert events == [] and cursor.head_len == 0
    append(path, b'{"a":1}\n{"b":2}\n')
    _, cursor = read(path, cursor)
    assert cursor.head_len == 16
    with path.open("r+b") as fh:
        fh.write(b'{"z":9}\n')
    assert check_identity(cursor, path.stat()) == Reset("file was rewritten (its first bytes changed)")


def test_reset_rereads_the_same_lines_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    first, cursor = read(path)
    copy = tmp_path / "copy.jsonl"
    shutil.copy2(path, copy)
    os.replace(copy, path)
    again, cursor = read(path, cursor)
    assert again == first
    assert cursor.offset == path.stat().st_size
