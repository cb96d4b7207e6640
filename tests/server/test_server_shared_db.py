"""Two editor windows, two daemons, one database: both ingest and extract in the background at
once, and the store's transactions and chunk leases keep every chunk extracted exactly once and the
database whole."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from lsprotocol import types

from checkpoint.store import Store
from tests.support import synth
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.lsp_support import Daemon, server_env
from tests.support.oracle import clean_scan

pytestmark = pytest.mark.asyncio(loop_scope="function")


async def test_two_daemons_share_one_database_without_double_extraction(tmp_path: Path) -> None:
    corpus = synth.write_corpus(tmp_path / "t", sessions=4, turns=30, chars=10_000, seed=3)
    roots = [corpus.claude_root, corpus.codex_root]
    db = tmp_path / "db" / "checkpoint.db"
    manual = {"checkpoint": {"scope": "all", "idleSeconds": 0, "concurrency": 1, "extraction": "manual"}}
    auto = {"checkpoint": {**manual["checkpoint"], "extraction": "auto"}}
    folders = [tmp_path / "window-a", tmp_path / "window-b"]
    for f in folders:
        f.mkdir()
    # A model that takes its time, so that both daemons are extracting at once.
    with FakeAnthropic(latency=0.01) as fake:
        env = server_env(tmp_path / "home", db, roots, CHECKPOINT_CHUNK_TOKENS="500",
                         CHECKPOINT_EXTRACTOR="anthropic", **fake.env())
        a, b = await asyncio.gather(Daemon.start(env, [folders[0]], manual), Daemon.start(env, [folders[1]], manual))
        try:
            for d in (a, b):  # both up and reading the files; then both extract at once
                await d.wait_status(lambda s: s["totals"]["turns"] > 0, timeout=30, what="ingesting")
            for d in (a, b):
                d.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=auto))
            for d in (a, b):
                await d.wait_status(
                    lambda s: s["totals"]["turns"] > 0 and s["totals"]["pending"] == 0 and not s["running"],
                    timeout=60, what="everything captured",
                )
        finally:
            await asyncio.gather(a.stop(), b.stop())
    for d in (a, b):
        runs = {s["last_run"]["finished_at"]: s["last_run"] for s in d.statuses if s["last_run"]}
        assert sum(r["tried"] for r in runs.values()) > 0  # each window did part of the work

    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        chunks = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
        tried, captured, failed = con.execute(
            "SELECT sum(chunks_tried), sum(chunks_captured), sum(chunks_failed) FROM runs"
        ).fetchone()
        assert chunks > 20
        assert (tried, captured, failed) == (chunks, chunks, 0)  # no chunk sent twice
        assert con.execute("SELECT count(*) FROM chunks WHERE state != 'captured'").fetchone()[0] == 0
        statements = [r[0] for r in con.execute("SELECT statement FROM items")]
    finally:
        con.close()
    for session_id, markers in corpus.markers.items():
        for marker in markers:
            assert sum(marker in s for s in statements) == 1, (session_id, marker)

    # Nothing lost or doubled in ingestion either: a fresh single-process scan counts the same turns.
    clean_scan(tmp_path / "oracle.db", roots, 500)
    oracle = Store(tmp_path / "oracle.db")
    shared = Store(db)
    assert Counter({s.id: s.turns for s in shared.session_counts()}) == Counter(
        {s.id: s.turns for s in oracle.session_counts()})
    shared.close()
    oracle.close()


async def test_another_writers_first_commit_after_the_daemon_started_shows_in_its_status(tmp_path: Path) -> None:
    """Another writer's commits (here one scan through another store) reach the daemon's status with
    nothing committed after them. (The race CI once hit, a commit between the daemon's first status
    and its watch's first look, is not forced here; the watch now looks as it starts.)"""
    corpus = synth.write_corpus(tmp_path / "t", sessions=2, turns=6, chars=2_000, seed=4)
    db = tmp_path / "db" / "checkpoint.db"
    empty = tmp_path / "nothing"
    empty.mkdir()
    folder = tmp_path / "window"
    folder.mkdir()
    settings = {"checkpoint": {"scope": "all", "extraction": "manual"}}
    daemon = await Daemon.start(server_env(tmp_path / "home", db, [empty]), [folder], settings)
    try:
        await daemon.wait_status(lambda s: s["totals"]["turns"] == 0, timeout=30, what="an empty first status")
        await asyncio.sleep(1.0)  # its watch of the database has started by now
        turns = clean_scan(db, [corpus.claude_root, corpus.codex_root], 500).turns_added
        assert turns > 0
        status = await daemon.wait_status(lambda s: s["totals"]["turns"] == turns, timeout=10,
                                          what="the other writer's turns")
        assert status["sessions_total"] == len(corpus.turns)
    finally:
        await daemon.stop()


async def test_another_processes_capture_of_sessions_the_status_holds_reaches_it(tmp_path: Path) -> None:
    """The daemon keeps each session's counts and re-reads only the sessions the database's change
    feed names (status_counts.py): a `checkpoint now` in another process, which changes the chunks of
    sessions the daemon already counted (no new session, no new turn), reaches its status."""
    import subprocess
    import sys

    corpus = synth.write_corpus(tmp_path / "t", sessions=3, turns=6, chars=2_000, seed=5)
    roots = [corpus.claude_root, corpus.codex_root]
    db = tmp_path / "db" / "checkpoint.db"
    folder = tmp_path / "window"
    folder.mkdir()
    env = server_env(tmp_path / "home", db, roots, CHECKPOINT_CHUNK_TOKENS="500")
    settings = {"checkpoint": {"scope": "all", "extraction": "manual"}}
    daemon = await Daemon.start(env, [folder], settings)
    try:
        counted = await daemon.wait_status(
            lambda s: s["sessions_total"] == len(corpus.turns) and s["totals"]["turns"] > 0, timeout=30,
            what="every session counted")
        turns = counted["totals"]["turns"]
        assert counted["totals"]["captured"] == 0
        now = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "checkpoint", "now"], env=env,
                                      capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert now.returncode == 0, now.stderr
        status = await daemon.wait_status(lambda s: s["totals"]["captured"] == turns, timeout=30,
                                          what="the other process's captures")
        assert status["totals"]["pending"] == 0 and status["sessions_total"] == len(corpus.turns)
    finally:
        await daemon.stop()
