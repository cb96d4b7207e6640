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

On four cores or more, a large first scan of several files is read by several such children
(`readers`), each with its own memfd and pipe and its share of the files (`reader_shares`: by size,
in the scan's order), each redacting what it reads (`finish`) so that this process only takes,
stores and commits. On two cores it is one child, as above: there a second child only takes a core
from the one that stores (a process pool lost there: 392 against 337 ms of the real corpus).
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
# batches as they come. 0.85 balances the two on the real corpus (per-process CPU, median of 7: this
# process 145 ms after the fork, the child 121; at 0.7, 166 and 102).
CHILD_SHARE = 0.85
# What the child may have written that this process has not taken yet (beyond one step).
AHEAD_BYTES = 64 << 20
# How far behind this process may fall before the child does the steps' `finish` work itself.
FINISH_BEHIND = AHEAD_BYTES // 2
# Several readers (four cores or more): only for this much to read, a reader for each READER_BYTES
# of it, at most MAX_READERS, one core left to this process.
PARALLEL_MIN_BYTES = 8 << 20
READER_BYTES = 4 << 20
MAX_READERS = 7
_TAKEN = struct.Struct("<q")  # at offset 0 of the memfd: the end of what this process has taken
DONE = object()  # _take's answer once a file's steps are all handed over


class NotDelivered(Exception):
    """The child stopped partway through a file: what it handed over is stored, the rest is to be
    read here, on from the cursor stored."""


def possible() -> bool:
    return sys.platform == "linux" and threading.active_count() == 1 and hasattr(os, "memfd_create")


def cpus() -> int:
    """The cores this process may run on (its affinity: `taskset` counts, as a container's limit does)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def readers(sizes: Sequence[int], cores: int) -> int:
    """How many children read a scan's files: one (with this process reading a share, see
    child_share) below four cores, for one file, or below PARALLEL_MIN_BYTES; else one for each
    READER_BYTES to read, at most one fewer than the cores and MAX_READERS, at most one a file."""
    total = sum(sizes)
    if cores < 4 or total < PARALLEL_MIN_BYTES or len(sizes) < 2:
        return 1
    return max(1, min(cores - 1, MAX_READERS, len(sizes), total // READER_BYTES))


def reader_shares(sizes: Sequence[int], count: int) -> list[set[int]]:
    """The files (by index) each of `count` children reads: with one, child_share's (this process reads
    the rest); with several, every file, each to the child with the fewest bytes so far, in the scan's
    order (this process takes them in that order: each child's next file is soon needed)."""
    if count <= 1:
        return [child_share(sizes)]
    shares: list[set[int]] = [set() for _ in range(count)]
    load = [0] * count
    for index, size in enumerate(sizes):
        least = min(range(count), key=load.__getitem__)
        shares[least].add(index)
        load[least] += size
    return [share for share in shares if share]


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
    """For each job, in order: the steps a child reads for it, each as soon as it is handed over (an
    iterator that raises NotDelivered if that child stops partway), or None where this process is to
    read it (its share, and every file of a child after it stopped).

    `finish`: work on a step that either process may do, left to this one. A single child does it
    itself once this one falls more than FINISH_BEHIND bytes behind, rather than wait for room later
    (a session of 1 GB, whose store slows down as the session grows); several children always do it."""
    shares = reader_shares(sizes, readers(sizes, cpus())) if possible() else [set()]
    if not any(shares):
        yield from (None for _ in jobs)
        return
    several = len(shares) > 1
    handovers: list[_Handover] = []
    try:
        for share in shares:
            try:
                handovers.append(_start(jobs, sorted(share), read, finish, several, len(shares)))
            except OSError:  # no process to be had (EAGAIN, ENOMEM): the files of those not started, here
                break
        owner = {index: n for n, share in enumerate(shares[:len(handovers)]) for index in share}
        for index in range(len(jobs)):
            for handover in handovers:
                if handover.pending:
                    handover.stop()  # a file's steps left unread (its store went another way): the rest here
            mine = owner.get(index)
            yield handovers[mine].steps(index) if mine is not None and handovers[mine].delivering else None
    finally:
        for handover in handovers:
            _stop(handover.pid)  # done already, unless this scan stopped early
        for handover in handovers:
            os.waitpid(handover.pid, 0)
            handover.close()


def _start(jobs: Sequence[Job], share: list[int], read: Callable[[Job], Iterator[Any]],
           finish: Callable[[Any], Any] | None, always_finish: bool, count: int) -> _Handover:
    """A child reading these files, forked now; this process's end of it."""
    results = os.memfd_create("checkpoint-read-ahead")
    opened = [results]
    try:
        os.pwrite(results, _TAKEN.pack(_TAKEN.size), 0)
        announce_r, announce_w = os.pipe()
        opened += [announce_r, announce_w]
        parent = os.getpid()
        pid = os.fork()
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    if pid == 0:  # the child
        os.close(announce_r)
        behind = -1 if always_finish else FINISH_BEHIND
        _child(jobs, share, read, finish, results, announce_w, parent, behind, AHEAD_BYTES // count)
    # closed before the next child is forked: a child's pipe ends when that child does, not later
    os.close(announce_w)
    return _Handover(os.fdopen(announce_r, "rb"), results, pid)


class _Handover:
    """This process's end of one child: the steps it announced, taken in order."""

    def __init__(self, announced: Any, results: int, pid: int) -> None:
        self.announced, self.results, self.pid = announced, results, pid
        self.delivering = True  # until the first step that cannot be used
        self.pending = False  # a file's steps are being taken

    def close(self) -> None:
        self.announced.close()
        os.close(self.results)

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
           finish: Callable[[Any], Any] | None, out: int, announce: int, parent: int, finish_behind: int,
           ahead: int) -> None:
    import pickle  # here and in _take: loaded only by a scan that forks

    code = 1
    try:
        offset = _TAKEN.size
        for index in share:
            for step in read(jobs[index]):
                if finish is not None and offset - _taken(out) > finish_behind:
                    step = finish(step)
                # Pickled as it comes: a later step changes the reader state an earlier one holds.
                blob = pickle.dumps(step, pickle.HIGHEST_PROTOCOL)
                while (taken := _taken(out)) < offset and offset - taken + len(blob) > ahead:
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
