"""A second process that reads part of a scan's files, so that a large scan (a first `checkpoint scan`
of a whole history) parses and redacts on two cores while this process stores.

The rule that keeps this as safe as a serial scan: the child only reads. It gets its share of the
files, reads each as the serial scan would (`read` gives the steps that store it) and hands the
steps back; it never touches the database (a SQLite connection must not be used across fork) and
leaves with os._exit. This process stores every file's steps in the scan's own order, so the
database is the one a serial scan writes, with the same checks (a cursor another process moved
meanwhile is read again here). A child that dies, is killed or hands back something that does not
load costs nothing but time: this process reads those files itself.

The steps travel through an anonymous memory file (memfd: no path, gone with both processes), each
file's announced on a pipe once written, so that the child need not wait for this process to take
them; but it stays at most AHEAD_BYTES ahead of what this process has taken (whose offset the file's
first bytes hold), and what is taken is released (its pages punched out), so that the memory a
scan holds is bounded whatever the history's size. Only on Linux, only from a process with one
thread (fork copies no other thread, and a lock one of them held would stay held in the child).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, TypeVar

Job = TypeVar("Job")

# Below this many bytes to read, starting a process costs more than it saves.
MIN_BYTES = 4 << 20
# The child's steps for a file wait whole in memory here before they are stored: larger files are read here.
MAX_CHILD_FILE = 32 << 20
# This process also stores every file's turns: the child takes a larger share of the bytes.
CHILD_SHARE = 0.55
# What the child may have written that this process has not taken yet (beyond one file's steps).
AHEAD_BYTES = 64 << 20
_TAKEN = struct.Struct("<q")  # at offset 0 of the memfd: the end of what this process has taken


def possible() -> bool:
    return sys.platform == "linux" and threading.active_count() == 1 and hasattr(os, "memfd_create")


def child_share(sizes: Sequence[int]) -> set[int]:
    """The files (by index) the child reads: about CHILD_SHARE of the bytes, taken in order so that
    both processes work on neighbouring files and neither waits long for the other."""
    total = sum(sizes)
    if len(sizes) < 2 or total < MIN_BYTES:
        return set()
    theirs: set[int] = set()
    given = taken = 0
    for index, size in enumerate(sizes):
        if size <= MAX_CHILD_FILE and given + size <= CHILD_SHARE * (given + taken + size):
            theirs.add(index)
            given += size
        else:
            taken += size
    return theirs if given else set()


def read_ahead(jobs: Sequence[Job], sizes: Sequence[int], read: Callable[[Job], Iterator[Any]]
               ) -> Generator[list[Any] | None, None, None]:
    """For each job, in order: the steps the child read for it, or None where this process is to
    read it (its share, and any the child did not deliver)."""
    theirs = child_share(sizes) if possible() else set()
    if not theirs:
        yield from (None for _ in jobs)
        return
    results = os.memfd_create("checkpoint-read-ahead")
    try:
        os.pwrite(results, _TAKEN.pack(_TAKEN.size), 0)
        announce_r, announce_w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(announce_r)
            _child(jobs, sorted(theirs), read, results, announce_w, parent)
        os.close(announce_w)
        with os.fdopen(announce_r, "rb") as announced:
            try:
                delivering = True
                for index in range(len(jobs)):
                    steps = _take(announced, results, index) if delivering and index in theirs else None
                    if index in theirs and steps is None and delivering:
                        delivering = False  # whatever went wrong, the rest is read here: stop the child
                        _stop(pid)
                    yield steps
            finally:
                _stop(pid)  # done already, unless this scan stopped early
                os.waitpid(pid, 0)
    finally:
        os.close(results)


def _child(jobs: Sequence[Job], share: list[int], read: Callable[[Job], Iterator[Any]], out: int,
           announce: int, parent: int) -> None:
    import pickle  # here and in _take: loaded only by a scan that forks

    code = 1
    try:
        offset = _TAKEN.size
        for index in share:
            # Each step is pickled as it comes: a later one changes the reader state an earlier one holds.
            blob = pickle.dumps([pickle.dumps(step, pickle.HIGHEST_PROTOCOL) for step in read(jobs[index])],
                                pickle.HIGHEST_PROTOCOL)
            while (taken := _taken(out)) < offset and offset - taken + len(blob) > AHEAD_BYTES:
                if os.getppid() != parent:
                    return  # the parent is gone (killed): nobody will take these
                time.sleep(0.002)  # the parent is busy with its own files: their turns first
            written = 0
            while written < len(blob):
                written += os.pwrite(out, memoryview(blob)[written:], offset + written)
            os.write(announce, b"%d %d %d\n" % (index, offset, len(blob)))
            offset += len(blob)
        code = 0
    except BaseException:  # whatever it was (a reader's bug, Ctrl-C): the parent reads the rest itself
        code = 1
    finally:
        os._exit(code)


def _take(announced: Any, results: int, index: int) -> list[Any] | None:
    """The child's steps for the file at `index` once announced; None if it never will be."""
    import pickle

    line = announced.readline()
    try:
        got, offset, length = (int(n) for n in line.split())
        if got != index:
            return None
        blob = os.pread(results, length, offset)
        release(results, offset, length)
        os.pwrite(results, _TAKEN.pack(offset + length), 0)
        return [pickle.loads(step) for step in pickle.loads(blob)] if len(blob) == length else None
    except (ValueError, pickle.UnpicklingError, EOFError):
        return None


def _stop(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _taken(results: int) -> int:
    value: int = _TAKEN.unpack(os.pread(results, _TAKEN.size, 0))[0]
    return value


def release(fd: int, offset: int, length: int) -> None:
    """Give the pages of these bytes of a memfd back (fallocate PUNCH_HOLE | KEEP_SIZE); reads of
    them return zeros after. Where the call fails, they stay: only memory is lost, nothing read."""
    _fallocate()(fd, 0x02 | 0x01, offset, length)


@functools.cache
def _fallocate() -> Callable[[int, int, int, int], int]:
    import ctypes  # only a scan that forks gets here

    call = ctypes.CDLL(None, use_errno=True).fallocate
    call.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    return call
