"""Incremental reading of append-only JSONL files by byte offset.

Only whole lines are consumed: the persisted offset is always the end of the last complete line,
so a half-written record waits for its newline. A file whose identity changed (new inode, shrunk
below the offset, different first bytes) is re-read from the start; the store's stable turn ids
make that re-read idempotent. Memory stays bounded by the block size plus the longest accepted line.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

import orjson

from checkpoint.config import MAX_LINE_BYTES
from checkpoint.model import FileCursor

BLOCK_SIZE = 1 << 20
HEAD_BYTES = 4096
# A last line without a newline is consumed only once the file has been quiet this long and the bytes
# parse as a whole record: a writer mid-line is never read early, a file that simply ends without "\n"
# is not stuck forever.
SETTLE_SECONDS = 5.0


@dataclass(slots=True)  # one per line read: not frozen, whose __init__ costs three times as much
class RawLine:
    line_no: int  # 1-based
    data: bytes
    end_offset: int


@dataclass(slots=True)
class SkippedLine:
    line_no: int
    size: int
    end_offset: int
    reason: str


TailEvent = RawLine | SkippedLine


@dataclass(frozen=True)
class Reset:
    """Why a file is being re-read from the start."""

    reason: str


def _head_hash(f: os.PathLike[str] | str, length: int) -> str:
    with open(f, "rb") as fh:
        return hashlib.blake2b(fh.read(length), digest_size=16).hexdigest()


def check_identity(cursor: FileCursor, st: os.stat_result) -> Reset | None:
    """Compare a stored cursor with the file as it is now; say why it must be re-read, if it must."""
    if cursor.offset == 0 and cursor.head_len == 0:
        return None
    if (st.st_dev, st.st_ino) != (cursor.dev, cursor.inode):
        return Reset("file was replaced (new inode)")
    if st.st_size < cursor.offset:
        return Reset(f"file shrank from {cursor.offset} to {st.st_size} bytes")
    if cursor.head_len and _head_hash(cursor.path, cursor.head_len) != cursor.head_hash:
        return Reset("file was rewritten (its first bytes changed)")
    return None


def unchanged(cursor: FileCursor, st: os.stat_result) -> bool:
    """Stat-level check that lets a rescan skip a file without opening it."""
    return (
        (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        == (cursor.dev, cursor.inode, cursor.size, cursor.mtime_ns)
        and cursor.offset == st.st_size
    )


def fresh_cursor(cursor: FileCursor, st: os.stat_result) -> FileCursor:
    head_len = min(HEAD_BYTES, st.st_size)
    return FileCursor(
        path=cursor.path,
        dev=st.st_dev,
        inode=st.st_ino,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        head_hash=_head_hash(cursor.path, head_len),
        head_len=head_len,
    )


def _whole_record(data: bytes | bytearray) -> bool:
    """True if the bytes are one complete JSON object. A strict prefix of a record never is, so a
    record still being written is not mistaken for a whole one (looking like `{...}` is not enough)."""
    text = bytes(data).strip().strip(b"\x00").strip()
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            obj = orjson.loads(text.decode("utf-8", errors="replace").encode("utf-8"))
        except orjson.JSONDecodeError:
            return False
    return isinstance(obj, dict)


def tail(
    cursor: FileCursor,
    st: os.stat_result,
    max_line_bytes: int = MAX_LINE_BYTES,
    now: float | None = None,
) -> Iterator[TailEvent]:
    """Yield the complete lines after cursor.offset. The caller persists each event's end_offset.

    Reads only the `st.st_size` bytes the caller's stat saw, so that "settled" (judged from the same
    stat) describes every byte read: bytes appended meanwhile wait for the next call.
    """
    line_no = cursor.line_no
    offset = cursor.offset
    stop = st.st_size
    settled = ((now if now is not None else time.time()) - st.st_mtime_ns / 1e9) >= SETTLE_SECONDS
    with open(cursor.path, "rb") as fh:
        # A cursor not just after a newline sits after a last line consumed without one (settled). If
        # its newline arrives later, that newline ends the line already read; it does not start a new one.
        if 0 < offset < stop:
            fh.seek(offset - 1)
            around = fh.read(2)
            if around[:1] != b"\n" and around[1:] == b"\n":
                yield RawLine(line_no, b"", offset + 1)  # same line number, nothing to parse
                offset += 1
        fh.seek(offset)
        pending = bytearray()
        skipping = 0  # >0 while discarding an oversized line; counts its bytes
        while offset < stop:
            block = fh.read(min(BLOCK_SIZE, stop - offset))
            if not block:
                break  # the file shrank meanwhile; the next call's identity check sees it
            start = 0
            while True:
                nl = block.find(b"\n", start)
                if nl < 0:
                    rest = block[start:]
                    if skipping:
                        skipping += len(rest)
                    elif len(pending) + len(rest) > max_line_bytes:
                        skipping = len(pending) + len(rest)
                        pending.clear()
                    else:
                        pending += rest
                    break
                piece = block[start:nl]
                line_no += 1
                end = offset + nl + 1
                if skipping or len(pending) + len(piece) > max_line_bytes:
                    length = (skipping or len(pending)) + len(piece)
                    skipping = 0
                    pending.clear()
                    yield SkippedLine(line_no, length, end, f"line of {length} bytes exceeds {max_line_bytes}")
                else:
                    if pending:
                        pending += piece
                        data = bytes(pending)
                        pending.clear()
                    else:
                        data = piece
                    yield RawLine(line_no, data, end)
                start = nl + 1
            offset += len(block)
        if pending and not skipping and settled and _whole_record(pending):
            yield RawLine(line_no + 1, bytes(pending), offset)


def whole_file(name: str) -> bool:
    """A `.json` transcript is one JSON object (pretty-printed, rewritten whole as it grows), not lines."""
    return name.endswith(".json")


def tail_whole(cursor: FileCursor, st: os.stat_result, max_bytes: int = MAX_LINE_BYTES) -> Iterator[TailEvent]:
    """The file as one record, from its start, once its bytes are one whole JSON object (a writer
    mid-rewrite leaves the cursor where it was; the next change reads it again). A file changed since
    it was read is read whole again: the caller resets it (see `check_identity`), and the stable
    turn ids make that add only what is new."""
    stop = st.st_size
    if cursor.offset >= stop:
        return
    if stop > max_bytes:
        yield SkippedLine(1, stop, stop, f"file of {stop} bytes exceeds {max_bytes}")
        return
    with open(cursor.path, "rb") as fh:
        data = fh.read(stop)
    try:
        obj = orjson.loads(data) if len(data) == stop else None
    except orjson.JSONDecodeError:
        return  # not whole yet (or never): read again when it changes
    if isinstance(obj, dict):
        yield RawLine(1, orjson.dumps(obj), stop)  # one line: what the readers decode


def advance(cursor: FileCursor, event: TailEvent, st: os.stat_result) -> FileCursor:
    moved = replace(cursor, offset=event.end_offset, line_no=event.line_no, size=st.st_size, mtime_ns=st.st_mtime_ns)
    # A file first seen empty or tiny has a short head (none at all when empty): widen it over the bytes
    # consumed since, so that a rewrite in place is still noticed later.
    head_len = min(HEAD_BYTES, event.end_offset)
    if head_len > cursor.head_len:
        moved = replace(moved, head_len=head_len, head_hash=_head_hash(cursor.path, head_len))
    return moved
