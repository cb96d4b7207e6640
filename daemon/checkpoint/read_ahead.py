"""A second process that reads part of a scan's files, so that a large scan (a first `checkpoint scan`
of a whole history, or one big session) parses on one core while this process redacts and stores on
the other.

The rule that keeps this as safe as a serial scan: the child only reads. It gets its share of the
files, reads each as the serial scan would (`read` gives the steps that store it) and hands the
steps back; it never touches the database (a SQLite connection must not be used across fork) and
leaves with os._exit. This process stores every file's steps in the scan's own order, so the
database is the one a serial scan writes, with the same checks (a cursor another process moved
meanwhile is read again here). A child that dies, is killed or hands back something that does not
load costs nothing but time: this process reads on from what was stored, itself.

The steps travel through an anonymous memory file (memfd: no path, gone with both processes), each
announced on a pipe once written and stored here as soon as it is (a file of 1 GB is stored while
it is read), so that neither process waits for the other; but the child stays at most AHEAD_BYTES
ahead of what this process has taken (whose offset the memfd's first bytes hold), and what is taken
is released (its pages punched out), so that the memory a scan holds is bounded whatever the
history's size. Only on Linux, only from a process with one thread (fork copies no other thread,
and a lock one of them held would stay held in the child).
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
# This process also redacts and stores every file's turns: of several files, the child reads the
# larger share of the bytes; one file alone, it reads whole while this process redacts and stores its
# batches as they come.
CHILD_SHARE = 0.7
# What the child may have written that this process has not taken yet (beyond one step).
AHEAD_BYTES = 64 << 20
# How far behind this process may fall before the child does the steps' `finish` work itself.
FINISH_BEHIND = AHEAD_BYTES // 2
_TAKEN = struct.Struct("<q")  # at offset 0 of the memfd: the end of what this process has taken
DONE = object()  # _take's answer once a file's steps are all handed over


class NotDelivered(Exception):
    """The child stopped partway through a file: what it handed over is stored, the rest is to be
    read here, on from the cursor stored."""


def possible() -> bool:
    return sys.platform == "linux" and threading.active_count() == 1 and hasattr(os, "memfd_create")


def child_share(sizes: Sequence[int]) -> set[int]:
    """The files (by index) the child reads: about CHILD_SHARE of the bytes, taken in order so that
    both processes work on neighbouring files and neither waits long for the other; a file alone,
    whole."""
    total = sum(sizes)
    if total < MIN_BYTES:
        return set()
    if len(sizes) == 1:
        return {0}
    theirs: set[int] = set()
    given = taken = 0
    for index, size in enumerate(sizes):
        if given + size <= CHILD_SHARE * (given + taken + size):
            theirs.add(index)
            given += size
        else:
            taken += size
    return theirs if given else set()


def read_ahead(jobs: Sequence[Job], sizes: Sequence[int], read: Callable[[Job], Iterator[Any]],
               finish: Callable[[Any], Any] | None = None) -> Generator[Iterator[Any] | None, None, None]:
    """For each job, in order: the steps the child reads for it, each as soon as it is handed over (an
    iterator that raises NotDelivered if the child stops partway), or None where this process is to
    read it (its share, and every file after the child stopped).

    `finish`: work on a step that either process may do, left to this one. The child does it itself
    once this one falls more than FINISH_BEHIND bytes behind, rather than wait for room later (a
    session of 1 GB, whose store slows down as the session grows)."""
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
            _child(jobs, sorted(theirs), read, finish, results, announce_w, parent)
        os.close(announce_w)
        with os.fdopen(announce_r, "rb") as announced:
            handover = _Handover(announced, results, pid)
            try:
                for index in range(len(jobs)):
                    if handover.pending:
                        handover.stop()  # a file's steps left unread (its store went another way): the rest here
                    yield handover.steps(index) if index in theirs and handover.delivering else None
            finally:
                _stop(pid)  # done already, unless this scan stopped early
                os.waitpid(pid, 0)
    finally:
        os.close(results)


class _Handover:
    """This process's end: the steps the child announced, taken in order."""

    def __init__(self, announced: Any, results: int, pid: int) -> None:
        self.announced, self.results, self.pid = announced, results, pid
        self.delivering = True  # until the first step that cannot be used
        self.pending = False  # a file's steps are being taken

    def steps(self, index: int) -> Iterator[Any]:
        self.pending = True
        while (step := _take(self.announced, self.results, index)) is not DONE:
            if step is None:
                self.stop()  # whatever went wrong, the rest is read here, without waiting on the pipe
                raise NotDelivered(f"the second process stopped handing over file {index}")
            yield step
        self.pending = False

    def stop(self) -> None:
        self.delivering, self.pending = False, False
        _stop(self.pid)


def _child(jobs: Sequence[Job], share: list[int], read: Callable[[Job], Iterator[Any]],
           finish: Callable[[Any], Any] | None, out: int, announce: int, parent: int) -> None:
    import pickle  # here and in _take: loaded only by a scan that forks

    code = 1
    try:
        offset = _TAKEN.size
        for index in share:
            for step in read(jobs[index]):
                if finish is not None and offset - _taken(out) > FINISH_BEHIND:
                    step = finish(step)
                # Pickled as it comes: a later step changes the reader state an earlier one holds.
                blob = pickle.dumps(step, pickle.HIGHEST_PROTOCOL)
                while (taken := _taken(out)) < offset and offset - taken + len(blob) > AHEAD_BYTES:
                    if os.getppid() != parent:
                        return  # the parent is gone (killed): nobody will take these
                    time.sleep(0.002)  # the parent is busy with its own files: their turns first
                written = 0
                while written < len(blob):
                    written += os.pwrite(out, memoryview(blob)[written:], offset + written)
                os.write(announce, b"%d %d %d\n" % (index, offset, len(blob)))
                offset += len(blob)
            os.write(announce, b"%d done\n" % index)
        code = 0
    except BaseException:  # whatever it was (a reader's bug, Ctrl-C): the parent reads the rest itself
        code = 1
    finally:
        os._exit(code)


def _take(announced: Any, results: int, index: int) -> Any:
    """The child's next step for the file at `index` once announced, DONE after its last one, or
    None if no more will come (the child died, or what it handed over does not load)."""
    import pickle

    line = announced.readline()
    try:
        words = line.split()
        if int(words[0]) != index:
            return None
        if words[1:] == [b"done"]:
            return DONE
        offset, length = int(words[1]), int(words[2])
        blob = os.pread(results, length, offset)
        release(results, offset, length)
        os.pwrite(results, _TAKEN.pack(offset + length), 0)
        return pickle.loads(blob) if len(blob) == length else None
    except Exception:  # a line cut short, bytes that do not load (whatever pickle raises of them)
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
