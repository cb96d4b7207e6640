"""Two editor windows and a terminal on one database: two `checkpoint serve` daemons and a
`checkpoint now`, started at the same instant on a database that does not exist yet, while a
session keeps being written. The store's BEGIN IMMEDIATE transactions (30 s busy timeout) and chunk
leases must keep it exact:

- no chunk extracted twice: the fake Anthropic API sees every chunk's text exactly once;
- no lost update: the same turns as one clean scan, every chunk captured once (runs' counts add
  up to the chunks), every planted decision exactly one item, usage counted once per request,
  content left out by policy counted once;
- no "database is locked" (nor a traceback) reaching the user: not on the CLI's stderr, not in a
  daemon's showMessage or logMessage, not on a daemon's stderr;
- `status` read meanwhile always adds up (captured + pending + failed = turns, none negative).

And a slow model (answers slower than the lease) is not taken over by the other runner: a live run
renews its leases.
"""

from __future__ import annotations

import os
import random
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

from checkpoint.status_model import read_status
from checkpoint.store import Store
from tests.support import synth
from tests.support.cli_run import CHECKPOINT, cli_env, query
from tests.support.crash_harness import (
    Life,
    Lsp,
    Writer,
    check_database,
    chunk_key,
    chunk_states,
    crash_signs,
    run_now,
    wait_until,
)
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.oracle import clean_scan

CHUNK_TOKENS = 500


def _sends(fake: FakeAnthropic) -> Counter[tuple[str, int]]:
    return Counter(chunk_key(r) for r in fake.message_requests)


def _status_adds_up(db: Path, stop: threading.Event, seen: list[int]) -> None:
    """Read the status over and over while the others write (as `checkpoint status` would)."""
    while not stop.is_set():
        if db.exists():
            store = Store(db)
            try:
                status = read_status(store)
            finally:
                store.close()
            for s in status.sessions:
                assert min(s.captured, s.pending, s.failed) >= 0, s
                assert s.captured + s.pending + s.failed == s.turns, s
            seen.append(status.totals.captured)
        time.sleep(0.01)


def test_two_daemons_and_a_cli_on_one_new_database(tmp_path: Path) -> None:
    corpus = synth.write_corpus(tmp_path / "t", sessions=3, turns=40, chars=10_000, seed=21)
    sources = [corpus.claude_root, corpus.codex_root]
    writer = Writer(corpus.claude_root, random.Random("concurrent-writer"))
    db = tmp_path / "db" / "checkpoint.db"
    work = tmp_path / "runs"
    work.mkdir()
    options = {"checkpoint": {"scope": "all", "idleSeconds": 0, "concurrency": 2}}
    windows = [tmp_path / "window-a", tmp_path / "window-b"]
    for w in windows:
        w.mkdir()
    stop = threading.Event()
    reads: list[int] = []
    errors: list[BaseException] = []

    def read_status() -> None:
        try:
            _status_adds_up(db, stop, reads)
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)

    with FakeAnthropic(latency=0.05) as fake:
        env = cli_env(tmp_path / "home", CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=os.pathsep.join(map(str, sources)),
                      CHECKPOINT_CHUNK_TOKENS=str(CHUNK_TOKENS), CHECKPOINT_EXTRACTOR="anthropic",
                      CHECKPOINT_LEASE_SECONDS="2", **fake.env())
        reader = threading.Thread(target=read_status, daemon=True)
        reader.start()
        daemons: list[Lsp] = []
        cli: Life | None = None

        def terminal() -> None:
            nonlocal cli
            cli = run_now(env, work, "terminal", None)

        term = threading.Thread(target=terminal)
        try:
            # All three at once, on a database none of them created yet.
            daemons = [Lsp(env, work, f"window-{i}", w, options) for i, w in enumerate(windows)]
            term.start()
            for _ in range(10):  # the session goes on meanwhile
                writer.append(4)
                time.sleep(0.1)
            term.join(120)
            assert cli is not None and cli.rc == 0, cli
            # The daemons pick up what the terminal's scan did not see; then everything is captured.
            wait_until(lambda: db.exists() and set(chunk_states(db)) == {"captured"}
                       and query(db, "SELECT count(*) FROM turns")[0][0] >= sum(corpus.turns.values()),
                       timeout=90, what="every chunk captured", step=0.1)
            time.sleep(0.5)  # the daemons' statuses catch up
        finally:
            stop.set()
            for d in daemons:
                d.stop()
        reader.join(5)
        fake.wait_idle()
        sends = _sends(fake)
        requests = len(fake.message_requests)
    if errors:
        raise errors[0]

    # No chunk extracted twice.
    assert sends and max(sends.values()) == 1, f"chunks sent more than once: {[k for k, n in sends.items() if n > 1]}"
    markers = set().union(*corpus.markers.values()) | writer.markers
    checked = check_database(db, sources, CHUNK_TOKENS, markers, tmp_path)
    assert checked.chunks == len(sends)
    runs = "SELECT sum(chunks_tried), sum(chunks_captured), sum(chunks_failed) FROM runs"
    tried, captured, failed = query(db, runs)[0]
    assert (tried, captured, failed) == (checked.chunks, checked.chunks, 0)
    assert query(db, "SELECT sum(requests) FROM session_usage")[0][0] == requests
    # Content left out by policy is counted once, as one clean scan counts it.
    oracle = tmp_path / "oracle.db"
    clean_scan(oracle, sources, CHUNK_TOKENS)
    drops = "SELECT session_id, policy, records, chars FROM drops ORDER BY session_id, policy"
    assert query(db, drops) == query(oracle, drops)

    # Nobody was told the database was locked, nor saw a traceback.
    assert cli is not None and not crash_signs(cli.err), cli.err
    for d in daemons:
        assert not crash_signs(d.life.err), d.life.err
        assert not [m for m in d.said() if crash_signs(m)], d.said()
    worked = {d.name: sum(1 for m in d.said() if "Extracted " in m and "Extracted 0 chunks" not in m) for d in daemons}
    assert reads, "status was never read"
    print(f"\n{checked.chunks} chunks, each sent once ({requests} requests); daemon runs that extracted: {worked};"
          f" status read {len(reads)} times meanwhile, always adding up")


def test_a_slow_answer_is_not_taken_over_by_another_run(tmp_path: Path) -> None:
    """Answers take longer than the lease: the run waiting for them renews its leases, so the other
    run never sends the same chunk again."""
    corpus = synth.write_corpus(tmp_path / "t", sessions=1, turns=16, chars=6_000, seed=4)
    sources = [corpus.claude_root, corpus.codex_root]
    db = tmp_path / "db" / "checkpoint.db"
    work = tmp_path / "runs"
    work.mkdir()
    with FakeAnthropic(latency=1.2) as fake:
        env = cli_env(tmp_path / "home", CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=os.pathsep.join(map(str, sources)),
                      CHECKPOINT_CHUNK_TOKENS=str(CHUNK_TOKENS), CHECKPOINT_EXTRACTOR="anthropic",
                      CHECKPOINT_LEASE_SECONDS="0.5", CHECKPOINT_CONCURRENCY="1", **fake.env())
        lives: list[Life] = []
        threads = [threading.Thread(target=lambda n=n: lives.append(run_now(env, work, f"terminal-{n}", None)))
                   for n in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        fake.wait_idle()
        sends = _sends(fake)
    assert len(lives) == 2 and all(life.rc == 0 and not crash_signs(life.err) for life in lives), lives
    assert len(sends) >= 3 and max(sends.values()) == 1, sends
    assert set(chunk_states(db)) == {"captured"}


def test_scans_at_once_store_and_count_every_line_once(tmp_path: Path) -> None:
    """Three scans of the same new transcripts at once (a terminal and two windows opening): each
    line is stored by one of them; the others notice the cursor moved and read on from there. So
    content left out by policy is counted once, and a bad line is said once, by one process."""
    corpus = synth.write_corpus(tmp_path / "t", sessions=6, turns=150, chars=60_000, seed=8, codex_share=0.5)
    sources = [corpus.claude_root, corpus.codex_root]
    bad = corpus.claude_root / "-home-dev-bad" / "0bad0000-0000-4000-8000-000000000001.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b'{"type":"user","uuid":"u1","message":{"role":"user","content":"We\'ll use marker-0b1 now."}}\n'
                    b"{not json\n"
                    b'{"type":"user","uuid":"u2","message":{"role":"user","content":"We\'ll use marker-0b2 now."}}\n')
    db = tmp_path / "db" / "checkpoint.db"
    work = tmp_path / "runs"
    work.mkdir()
    env = cli_env(tmp_path / "home", CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=os.pathsep.join(map(str, sources)),
                  CHECKPOINT_CHUNK_TOKENS=str(CHUNK_TOKENS))
    procs = [subprocess.Popen([str(CHECKPOINT), "scan"], env=env, stdin=subprocess.DEVNULL,
                              stdout=(work / f"{n}.out").open("wb"), stderr=(work / f"{n}.err").open("wb"))
             for n in range(3)]
    for proc in procs:
        assert proc.wait(120) == 0
    errs = [(work / f"{n}.err").read_text() for n in range(3)]
    assert not [e for e in errs if crash_signs(e)], errs

    oracle = tmp_path / "oracle.db"
    clean_scan(oracle, sources, CHUNK_TOKENS)
    for sql in ("SELECT session_id, policy, records, chars FROM drops ORDER BY session_id, policy",
                "SELECT session_id, seq, id FROM turns ORDER BY session_id, seq",
                "SELECT path, line_no, message FROM problems ORDER BY path, line_no",
                "SELECT session_id, first_seq, last_seq, char_start, tokens FROM chunks"
                " ORDER BY session_id, first_seq"):
        assert query(db, sql) == query(oracle, sql), sql
    said = [e.count(f"{bad}:2: invalid JSON") for e in errs]
    assert sorted(said) == [0, 0, 1], errs
