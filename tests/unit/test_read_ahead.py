"""A scan that reads part of its files in a second process stores exactly what a serial scan stores,
also when that process dies at any file; and it never forks where it must not."""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from checkpoint import pipeline, read_ahead
from checkpoint.config import Settings
from checkpoint.model import LineProblem, Role, ScannedTurn, SessionInfo, TurnDraft
from checkpoint.store import CursorMoved, Store
from tests.support.sample_tree import build_tree
from tests.support.samples import REAL

Tables = dict[str, list[tuple[Any, ...]]]
CLOCK = {"updated_at", "seen_at", "created_at"}
# The change feed's numbers count writes, so they depend on how the writes were batched, not on what
# was written: that a session changed is compared, not how many times (status_counts.py).
WRITE_COUNTS = {"session_changes": "seq"}
READ_FILE = pipeline.read_file  # as it is, before a test wraps it (hypothesis reruns share one monkeypatch)


def tables(db: Path) -> Tables:
    """Every row of every table, but the clock's columns (when a row was written, not what) and the
    change feed's write counts."""
    conn = sqlite3.connect(db)
    try:
        out: Tables = {}
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({name})")
                       if r[1] not in CLOCK and r[1] != WRITE_COUNTS.get(name)]
            out[name] = sorted(conn.execute(f"SELECT {', '.join(columns)} FROM {name}").fetchall(), key=repr)
        return out
    finally:
        conn.close()


def scan(settings: Settings, db: Path, two_processes: bool) -> tuple[pipeline.ScanReport, Tables]:
    """A serial scan, or the CLI's: two processes, commits grouped."""
    store = Store(db)
    try:
        with store.grouped_commits() if two_processes else contextlib.nullcontext():
            report = pipeline.scan(store, replace(settings, db=db), two_processes=two_processes)
    finally:
        store.close()
    return report, tables(db)


def same_report(a: pipeline.ScanReport, b: pipeline.ScanReport) -> None:
    assert (a.files_seen, a.files_read, a.turns_added, a.chunks_created, a.redacted, sorted(a.problems, key=repr)) == (
        b.files_seen, b.files_read, b.turns_added, b.chunks_created, b.redacted, sorted(b.problems, key=repr))


@pytest.fixture
def corpus(roots: tuple[Path, Path], settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The committed samples laid out as the agents write them, with no lower size limit for the
    second process (they are 0.5 MB)."""
    build_tree(*roots)
    monkeypatch.setattr(read_ahead, "MIN_BYTES", 0)
    return settings


def parent_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files this process reads itself (the child's reads happen in its own memory)."""
    read: list[str] = []
    me = os.getpid()

    def counting(found: Any, settings: Settings, row: Any, **how: bool) -> Iterator[pipeline.FileStep]:
        if os.getpid() == me:
            read.append(str(found.path))
        return READ_FILE(found, settings, row, **how)

    monkeypatch.setattr(pipeline, "read_file", counting)
    return read


# The real corpus the project keeps beside its repositories, where this checkout has it (as CI does).
CORPORA = ["samples", *(["real"] if REAL.is_dir() else [])]


@pytest.mark.parametrize("corpus_name", CORPORA)
def test_two_processes_store_what_one_does(corpus_name: str, corpus: Settings, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    settings = corpus if corpus_name == "samples" else replace(corpus, sources=[REAL / "claude", REAL / "codex"])
    one_report, one = scan(settings, tmp_path / "one" / "c.db", two_processes=False)
    read_here = parent_reads(monkeypatch)
    two_report, two = scan(settings, tmp_path / "two" / "c.db", two_processes=True)
    assert len(one["turns"]) > (5000 if corpus_name == "real" else 100) and one["chunks"]
    assert two == one
    same_report(two_report, one_report)
    assert 0 < len(read_here) < one_report.files_read  # the child read the others


@pytest.mark.parametrize("redacted_by", ["this process", "the child"])
def test_what_the_child_reads_is_redacted_by_either_process_alike(
    corpus: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redacted_by: str
) -> None:
    """The child parses; this process redacts what it is handed, or the child does once this one is
    far behind: either way the stored text is the serial scan's, with the same redactions counted."""
    # in several samples, tool output among them (kept whole here: more of it to redact)
    settings = replace(corpus, redact_patterns={"word": r"\b[Ff]iles?\b"}, tool_output_chars=0)
    one_report, one = scan(settings, tmp_path / "one" / "c.db", two_processes=False)
    monkeypatch.setattr(read_ahead, "FINISH_BEHIND", -1 if redacted_by == "the child" else 1 << 60)
    read_here = parent_reads(monkeypatch)
    two_report, two = scan(settings, tmp_path / "two" / "c.db", two_processes=True)
    assert sum(one_report.redacted.values()) > 20 and len(read_here) < one_report.files_read
    assert not any(" files " in row[4] for row in two["turns"])
    assert two == one
    same_report(two_report, one_report)


def test_how_a_file_is_cut_into_batches_changes_nothing_stored(
    corpus: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file read in one batch (a cold scan) or many (a daemon reading a session as it grows, a
    child handing over a big file as it goes) leaves the same rows: the session's span included."""
    _, whole = scan(corpus, tmp_path / "whole" / "c.db", two_processes=False)
    monkeypatch.setattr(pipeline, "BATCH_TURNS", 3)
    _, cut = scan(corpus, tmp_path / "cut" / "c.db", two_processes=False)
    assert cut == whole


@hsettings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dies_at=st.integers(min_value=0, max_value=60), batch_turns=st.sampled_from([5, 40, pipeline.BATCH_TURNS]))
def test_a_second_process_that_dies_loses_nothing(
    corpus: Settings, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, dies_at: int,
    batch_turns: int,
) -> None:
    """Killed after it has read n steps (a file opened, a batch read: the last not yet handed over),
    in the middle of a file or between two: this process reads on from what it stored, and the
    database and the report are the serial scan's (each file counted once)."""
    tmp = tmp_path_factory.mktemp("dies")
    one_report, one = scan(corpus, tmp / "one" / "c.db", two_processes=False)
    monkeypatch.setattr(pipeline, "BATCH_TURNS", batch_turns)  # many batches a file: deaths mid-file
    me = os.getpid()
    count = [0]

    def dying(found: Any, settings: Settings, row: Any, **how: bool) -> Iterator[pipeline.FileStep]:
        for step in READ_FILE(found, settings, row, **how):
            if os.getpid() != me:
                count[0] += 1
                if count[0] > dies_at:
                    os.kill(os.getpid(), signal.SIGKILL)
            yield step

    monkeypatch.setattr(pipeline, "read_file", dying)
    two_report, two = scan(corpus, tmp / "two" / "c.db", two_processes=True)
    assert two == one
    same_report(two_report, one_report)


@pytest.mark.parametrize("moved_at", [1, 4, 9])
def test_a_batch_another_process_stored_first_is_read_on_here(
    corpus: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved_at: int
) -> None:
    """The n-th batch finds its cursor moved (another process stored those lines): whether the child
    or this process read it, the file is read on here from the cursor stored, the child's later
    steps for it are not waited for, and the database and the report are the serial scan's."""
    one_report, one = scan(corpus, tmp_path / "one" / "c.db", two_processes=False)
    monkeypatch.setattr(pipeline, "BATCH_TURNS", 5)
    inner, batches = pipeline._apply, [0]

    def moved_once(store: Store, found: Any, step: Any, settings: Settings, report: Any) -> None:
        if isinstance(step, pipeline.StoreBatch):
            batches[0] += 1
            if batches[0] == moved_at:
                raise CursorMoved("stored meanwhile (the test's)")
        inner(store, found, step, settings, report)

    monkeypatch.setattr(pipeline, "_apply", moved_once)
    two_report, two = scan(corpus, tmp_path / "two" / "c.db", two_processes=True)
    assert batches[0] > moved_at
    assert two == one
    same_report(two_report, one_report)


def test_no_second_process_beside_other_threads(corpus: Settings, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon's scans run beside its threads: fork would copy none of them and could leave a lock
    one held locked forever in the child; such a scan reads every file here."""
    read_here = parent_reads(monkeypatch)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        report, _ = scan(corpus, tmp_path / "c.db", two_processes=True)
    finally:
        stop.set()
        other.join()
    assert len(read_here) == report.files_read > 2


@given(sizes=st.lists(st.integers(min_value=0, max_value=64 << 20), max_size=40))
def test_the_child_share(sizes: list[int]) -> None:
    theirs = read_ahead.child_share(sizes)
    total = sum(sizes)
    if total < read_ahead.MIN_BYTES:
        assert theirs == set()
        return
    if len(sizes) == 1:
        assert theirs == {0}  # read there, stored here as it comes
        return
    given_bytes = sum(sizes[i] for i in theirs)
    assert given_bytes <= read_ahead.CHILD_SHARE * total + 1e-6
    assert len(theirs) < len(sizes) or not theirs  # of several files, this process reads some


def test_a_child_far_ahead_waits_and_what_is_taken_is_released(
    corpus: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With room for no more than one file's steps ahead, the child waits for this process at each
    file and the scan still stores what a serial one does (no deadlock, nothing lost)."""
    _, one = scan(corpus, tmp_path / "one" / "c.db", two_processes=False)
    monkeypatch.setattr(read_ahead, "AHEAD_BYTES", 1)
    read_here = parent_reads(monkeypatch)
    report, two = scan(corpus, tmp_path / "two" / "c.db", two_processes=True)
    assert two == one
    assert len(read_here) < report.files_read


def test_a_batch_comes_out_of_pickle_as_it_went_in() -> None:
    """Batches travel between the processes pickled flat (pipeline._Batch.__reduce__): every field
    of every turn, the session and the counts come back equal, and of the same types."""
    batch = pipeline._Batch()
    batch.turns = [
        ScannedTurn(TurnDraft("u1", Role.USER, "hello", ("a.py", "b.py"), "2026-01-01T00:00:00Z", "m1",
                              {"aws_access_key": 2}), 3, 40, 7),
        ScannedTurn(TurnDraft("a1", Role.ASSISTANT, "é \x00 [REDACTED:x]"), 4, 12, 5),
    ]
    batch.add_session(SessionInfo("s1", "claude", cwd="/w", title="t", cwds=("/w", "/x")))
    batch.dropped.update({"progress": 120})
    batch.drop_records.update({"progress": 2})
    batch.problems.append(LineProblem(9, "bad line"))
    batch.bytes = 999
    back = pickle.loads(pickle.dumps(batch, pickle.HIGHEST_PROTOCOL))
    assert vars(back) == vars(batch)
    assert [type(t) for t in back.turns] == [ScannedTurn, ScannedTurn]
    assert [type(t.draft.role) for t in back.turns] == [Role, Role]


def test_released_pages_are_given_back() -> None:
    fd = os.memfd_create("test")
    try:
        os.pwrite(fd, b"x" * (4 << 20), 0)
        assert os.fstat(fd).st_blocks * 512 >= 4 << 20
        read_ahead.release(fd, 0, 4 << 20)
        assert os.fstat(fd).st_blocks == 0 and os.fstat(fd).st_size == 4 << 20
        assert os.pread(fd, 16, 1 << 20) == bytes(16)
    finally:
        os.close(fd)


KILLED_MID_SCAN = """
import os, signal, sys, time
from pathlib import Path
from checkpoint import pipeline, read_ahead
from checkpoint.config import Settings
from checkpoint.store import Store

read_ahead.MIN_BYTES, read_ahead.AHEAD_BYTES = 0, 1
fork = os.fork
def recorded() -> int:
    pid = fork()
    if pid:
        Path(sys.argv[2]).write_text(str(pid))
    return pid
os.fork = recorded
inner, me = pipeline._apply, os.getpid()
def apply(*args, **kwargs):
    inner(*args, **kwargs)
    if os.getpid() == me and Path(sys.argv[2]).exists():
        time.sleep(1.0)  # the child hands over its first file meanwhile, then waits with the next
        os.kill(me, signal.SIGKILL)  # this process dies with the child's steps still to take
pipeline._apply = apply
roots = [Path(p) for p in sys.argv[3:]]
store = Store(Path(sys.argv[1]))
pipeline.scan(store, Settings(db=Path(sys.argv[1]), sources=roots), two_processes=True)
"""


def test_a_child_whose_parent_is_killed_exits(roots: tuple[Path, Path], tmp_path: Path) -> None:
    """Killed while its child waits to hand over steps, a scan leaves no process behind."""
    build_tree(*roots)
    child_pid, errors = tmp_path / "child.pid", tmp_path / "stderr"
    with errors.open("w") as err:  # a file, not a pipe: a child left running would hold a pipe open
        done = subprocess.run([sys.executable, "-c", KILLED_MID_SCAN, str(tmp_path / "c.db"), str(child_pid),
                               *map(str, roots)], stdout=subprocess.DEVNULL, stderr=err, timeout=60, check=False)
    assert done.returncode == -signal.SIGKILL, errors.read_text()
    pid = int(child_pid.read_text())
    deadline = time.monotonic() + 10
    try:
        while _state(pid) not in ("gone", "Z") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state(pid) in ("gone", "Z"), f"the child {pid} still runs, its parent dead"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_steps_that_do_not_load_stop_the_child(corpus: Settings, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A delivery that cannot be used (here: the second file the child reads) ends the child: this
    process reads that file and every later one of the child's itself, without waiting on it."""
    _, one = scan(corpus, tmp_path / "one" / "c.db", two_processes=False)
    inner, files_done, after_failure = read_ahead._take, [0], [0]

    def failing(announced: Any, results: int, index: int) -> Any:
        if files_done[0] == 1:  # the first step of the child's second file
            after_failure[0] += 1
            return None
        step = inner(announced, results, index)
        files_done[0] += step is read_ahead.DONE
        return step

    monkeypatch.setattr(read_ahead, "_take", failing)
    read_here = parent_reads(monkeypatch)
    report, two = scan(corpus, tmp_path / "two" / "c.db", two_processes=True)
    assert two == one
    assert after_failure[0] == 1  # nothing asked of the child after the failure
    assert len(read_here) == report.files_read - 1  # only its first file came from the child


# -- several readers (four cores or more) ------------------------------------------------------------


@pytest.fixture
def several(corpus: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The parallel path forced on any machine (this one may have two cores): eight cores seen, and no
    lower size limit, so that the samples' files go to several children."""
    monkeypatch.setattr(read_ahead, "cpus", lambda: 8)
    monkeypatch.setattr(read_ahead, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(read_ahead, "READER_BYTES", 1)
    return corpus


def reader_pids(monkeypatch: pytest.MonkeyPatch, log: Path) -> list[str]:
    """The processes that read files (written to `log` by each, children included), and those this
    process read itself."""
    here: list[str] = []
    me = os.getpid()

    def logging(found: Any, settings: Settings, row: Any, **how: bool) -> Iterator[pipeline.FileStep]:
        if os.getpid() == me:
            here.append(str(found.path))
        else:
            with log.open("a") as fh:
                fh.write(f"{os.getpid()}\n")
        return READ_FILE(found, settings, row, **how)

    monkeypatch.setattr(pipeline, "read_file", logging)
    return here


@pytest.mark.parametrize("corpus_name", CORPORA)
def test_several_readers_store_what_one_process_does(corpus_name: str, several: Settings, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file read, and redacted, by one of several children: the database and the report are the
    serial scan's, byte for byte (tool output kept whole and a pattern of the user's: much to redact)."""
    settings = several if corpus_name == "samples" else replace(several, sources=[REAL / "claude", REAL / "codex"])
    settings = replace(settings, redact_patterns={"word": r"\b[Ff]iles?\b"}, tool_output_chars=0)
    one_report, one = scan(settings, tmp_path / "one" / "c.db", two_processes=False)
    log = tmp_path / "readers.log"
    read_here = reader_pids(monkeypatch, log)
    two_report, two = scan(settings, tmp_path / "two" / "c.db", two_processes=True)
    assert sum(one_report.redacted.values()) > 20
    assert two == one
    same_report(two_report, one_report)
    assert read_here == []  # this process only stored
    assert len(set(log.read_text().split())) >= 3  # read by several children


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dies_at=st.integers(min_value=0, max_value=40), batch_turns=st.sampled_from([5, pipeline.BATCH_TURNS]))
def test_one_of_several_readers_that_dies_loses_nothing(
    several: Settings, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, dies_at: int,
    batch_turns: int,
) -> None:
    """The first child to read n steps is killed there: its files are read on here, the others' still
    come from them, and the database and the report are the serial scan's."""
    tmp = tmp_path_factory.mktemp("dies")
    one_report, one = scan(several, tmp / "one" / "c.db", two_processes=False)
    monkeypatch.setattr(pipeline, "BATCH_TURNS", batch_turns)
    me, killed, count = os.getpid(), tmp / "killed", [0]

    def dying(found: Any, settings: Settings, row: Any, **how: bool) -> Iterator[pipeline.FileStep]:
        for step in READ_FILE(found, settings, row, **how):
            if os.getpid() != me:
                count[0] += 1  # in the child's own memory: the steps it read
                if count[0] > dies_at and not killed.exists():
                    killed.write_text(str(os.getpid()))
                    os.kill(os.getpid(), signal.SIGKILL)
            yield step

    monkeypatch.setattr(pipeline, "read_file", dying)
    two_report, two = scan(several, tmp / "two" / "c.db", two_processes=True)
    assert two == one
    same_report(two_report, one_report)


@given(sizes=st.lists(st.integers(min_value=0, max_value=64 << 20), max_size=40),
       cores=st.integers(min_value=1, max_value=64))
def test_the_readers_and_their_shares(sizes: list[int], cores: int) -> None:
    """Below four cores one child at most, as before (two cores never lose to a pool); above, never
    more readers than cores less one, files, or READER_BYTES to read; every file read by one of
    them, whatever their number."""
    count = read_ahead.readers(sizes, cores)
    if cores < 4 or sum(sizes) < read_ahead.PARALLEL_MIN_BYTES or len(sizes) < 2:
        assert count == 1
    else:
        assert 1 <= count <= min(cores - 1, read_ahead.MAX_READERS, len(sizes))
    shares = read_ahead.reader_shares(sizes, count)
    if count == 1:
        assert shares == [read_ahead.child_share(sizes)]
    else:
        assert sorted(i for share in shares for i in share) == list(range(len(sizes)))


def test_readers_that_cannot_be_forked_leave_their_files_to_this_process(
    several: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second fork fails (no process to be had): the first child reads its files, this process
    the rest, and the database is the serial scan's."""
    one_report, one = scan(several, tmp_path / "one" / "c.db", two_processes=False)
    fork, forks = os.fork, [0]

    def failing_second() -> int:
        forks[0] += 1
        if forks[0] == 2:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return fork()

    monkeypatch.setattr(os, "fork", failing_second)
    log = tmp_path / "readers.log"
    read_here = reader_pids(monkeypatch, log)
    two_report, two = scan(several, tmp_path / "two" / "c.db", two_processes=True)
    assert two == one
    same_report(two_report, one_report)
    assert forks[0] == 2 and len(set(log.read_text().split())) == 1  # one child read
    assert 0 < len(read_here) < one_report.files_read  # and this process the rest
