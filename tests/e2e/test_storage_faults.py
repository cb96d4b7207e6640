"""Storage faults said plainly: a full disk, a corrupt or truncated database, a database directory
anyone may write or another user owns, a schema newer than the code. Each CLI command ends with one
line naming the path and what to do, exit 1, no traceback; the database and transcripts are left
as they were. The daemon says the cause in its status."""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli_run import cli_env
from tests.support.lsp_support import Daemon, Transcript, server_env

CHECKPOINT = [sys.executable, "-m", "checkpoint"]


def run(tmp_path: Path, db: Path, *args: str, fsize: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # a file-size limit: writes past it fail as on a full disk
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = cli_env(tmp_path / "home", CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=str(tmp_path / "claude"),
                  CHECKPOINT_EXTRACTOR="heuristic")
    return subprocess.run([*CHECKPOINT, *args], env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=limit)


def one_line_error(result: subprocess.CompletedProcess[str], path: Path, *words: str) -> None:
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(path) in lines[0] and all(w in lines[0] for w in words), lines[0]


def seeded(tmp_path: Path) -> Path:
    t = Transcript(tmp_path / "claude", tmp_path / "proj")
    t.write(t.user("We'll use marker-feed for the cache layer."))
    db = tmp_path / "db" / "checkpoint.db"
    assert run(tmp_path, db, "scan").returncode == 0
    return db


def test_a_world_writable_database_directory_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    result = run(tmp_path, shared / "checkpoint.db", "status")
    one_line_error(result, shared, "writable by everyone", "chmod o-w")
    assert not (shared / "checkpoint.db").exists()


def test_a_database_directory_another_user_owns_is_refused(tmp_path: Path) -> None:
    if os.getuid() == 0:  # root can give a folder away
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o755)
        os.chown(foreign, 65534, 65534)
    else:  # anyone else finds one: root's own, not writable by everyone
        foreign = Path("/usr")
    one_line_error(run(tmp_path, foreign / "checkpoint.db", "status"), foreign, "another user")


def test_a_garbage_database_is_named_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "db" / "checkpoint.db"
    db.parent.mkdir(mode=0o700)
    garbage = b"this is not a database at all" * 200
    db.write_bytes(garbage)
    for command in ("status", "scan", "items"):  # not ours to move: no `mv` (test_foreign_database.py)
        result = run(tmp_path, db, command)
        one_line_error(result, db, "not a Checkpoint database (not an SQLite file")
        assert "mv " not in result.stderr
    assert db.read_bytes() == garbage


def test_a_truncated_database_is_named(tmp_path: Path) -> None:
    db = seeded(tmp_path)
    data = db.read_bytes()
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(data[: len(data) // 2])
    one_line_error(run(tmp_path, db, "status"), db, "Checkpoint database", "is damaged", "mv")


def test_a_schema_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    db = seeded(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version=999")
    one_line_error(run(tmp_path, db, "status"), db, "schema version 999", "upgrade")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 999  # not migrated, not touched


def test_a_full_disk_is_said_in_one_line_and_loses_nothing(tmp_path: Path) -> None:
    db = seeded(tmp_path)
    t = Transcript(tmp_path / "claude", tmp_path / "proj2")
    filler = "The worker drains the queue in order and reports every job it finished. " * 400
    for i in range(40):
        t.write(t.user(f"We'll use marker-{i:04x} for part {i}. {filler}"))
    before = t.path.read_bytes()
    result = run(tmp_path, db, "scan", fsize=db.stat().st_size + 64 * 1024)
    one_line_error(result, db, "disk is full")
    assert t.path.read_bytes() == before
    assert run(tmp_path, db, "scan").returncode == 0  # once there is room, the scan finishes


@pytest.mark.asyncio(loop_scope="function")
async def test_the_daemon_says_a_refused_database_in_its_status(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    env = server_env(tmp_path / "home", shared / "checkpoint.db", [tmp_path / "claude"])
    daemon = await Daemon.start(env, [])
    try:
        status = await daemon.wait_status(lambda s: s.get("last_error"), timeout=15, what="a status with the cause")
        assert str(shared) in status["last_error"] and "writable by everyone" in status["last_error"]
    finally:
        await daemon.stop()
