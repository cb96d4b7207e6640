"""A scan that reads part of its files in a second process stores exactly what a serial scan stores,
also when that process dies at any file; and it never forks where it must not."""

from __future__ import annotations

import contextlib
import os
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
from checkpoint.store import Store
from tests.unit.test_samples import build_tree
from tests.unit.test_skim import REAL

Tables = dict[str, list[tuple[Any, ...]]]
CLOCK = {"updated_at", "seen_at", "created_at"}
READ_FILE = pipeline.read_file  # as it is, before a test wraps it (hypothesis reruns share one monkeypatch)


def tables(db: Path) -> Tables:
    """Every row of every table, but the clock's columns (when a row was written, not what)."""
    conn = sqlite3.connect(db)
    try:
        out: Tables = {}
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({name})") if r[1] not in CLOCK]
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

    def counting(found: Any, settings: Settings, row: Any) -> Iterator[pipeline.FileStep]:
        if os.getpid() == me:
            read.append(str(found.path))
        return READ_FILE(found, settings, row)

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


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dies_at=st.integers(min_value=0, max_value=20), when=st.sampled_from(["before", "after"]))
def test_a_second_process_that_dies_loses_nothing(
    corpus: Settings, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, dies_at: int,
    when: str,
) -> None:
    """Killed before it reads its n-th file, or after reading it (before announcing it): this process
    reads what the child did not deliver, and the database is the serial scan's."""
    tmp = tmp_path_factory.mktemp("dies")
    _, one = scan(corpus, tmp / "one" / "c.db", two_processes=False)
    me = os.getpid()
    count = [0]

    def dying(found: Any, settings: Settings, row: Any) -> Iterator[pipeline.FileStep]:
        if os.getpid() != me:
            count[0] += 1
            if count[0] > dies_at and when == "before":
                os.kill(os.getpid(), signal.SIGKILL)
            if count[0] > dies_at:
                yield from READ_FILE(found, settings, row)
                os.kill(os.getpid(), signal.SIGKILL)
        yield from READ_FILE(found, settings, row)

    monkeypatch.setattr(pipeline, "read_file", dying)
    _, two = scan(corpus, tmp / "two" / "c.db", two_processes=True)
    assert two == one


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
    if total < read_ahead.MIN_BYTES or len(sizes) < 2:
        assert theirs == set()
        return
    given_bytes = sum(sizes[i] for i in theirs)
    assert all(sizes[i] <= read_ahead.MAX_CHILD_FILE for i in theirs)
    assert given_bytes <= read_ahead.CHILD_SHARE * total + 1e-6
    assert len(theirs) < len(sizes) or not theirs  # this process always reads something


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
    inner, taken = read_ahead._take, [0]

    def failing(announced: Any, results: int, index: int) -> list[Any] | None:
        taken[0] += 1
        return None if taken[0] == 2 else inner(announced, results, index)

    monkeypatch.setattr(read_ahead, "_take", failing)
    read_here = parent_reads(monkeypatch)
    report, two = scan(corpus, tmp_path / "two" / "c.db", two_processes=True)
    assert two == one
    assert taken[0] == 2  # nothing asked of the child after the failure
    assert len(read_here) == report.files_read - 1  # only its first file came from the child
