"""A CHECKPOINT_DB that points at another program's SQLite file (by mistake or through a symlink) is
refused before anything is written to it: no tables, no WAL, no chmod. Only a database Checkpoint made
(its application id; or, from before the id, the tables its migrations made) is migrated or used. An
empty file or a new one is Checkpoint's to make."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checkpoint.ownership import database_folder_problem
from checkpoint.store import Store
from checkpoint.store.migrations import APPLICATION_ID, MIGRATIONS, migrate
from tests.support.cli_run import cli_env

CHECKPOINT = [sys.executable, "-m", "checkpoint"]
BEFORE_APPLICATION_ID = 11  # the migrations a database had when Checkpoint began to set its application id


def run(tmp_path: Path, db: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = cli_env(tmp_path / "home", CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=str(tmp_path / "claude"),
                  CHECKPOINT_EXTRACTOR="heuristic")
    return subprocess.run([*CHECKPOINT, *args], env=env, capture_output=True, text=True, timeout=120, input=stdin)


def foreign(path: Path, user_version: int) -> bytes:
    """Another program's database: its own table and row, rollback journal, readable by others."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('the other program''s data')")
        conn.execute(f"PRAGMA user_version={user_version}")
    conn.close()
    path.chmod(0o644)
    return path.read_bytes()


def assert_untouched(path: Path, data: bytes) -> None:
    assert path.read_bytes() == data
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert not Path(f"{path}-wal").exists()
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["notes"]


@pytest.mark.parametrize("user_version", [0, 3, len(MIGRATIONS)])
def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path: Path, user_version: int) -> None:
    db = tmp_path / "data" / "other.db"
    data = foreign(db, user_version)
    for command in ("status", "scan", "now"):
        result = run(tmp_path, db, command)
        assert result.returncode == 1, (command, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert str(db) in lines[0] and "not a Checkpoint database" in lines[0], lines[0]
        assert "mv" not in lines[0] and "rm" not in lines[0].split()  # nothing that touches that file
    hook = run(tmp_path, db, "hook", "session-start", stdin=json.dumps({"session_id": "s", "cwd": str(tmp_path)}))
    assert (hook.returncode, hook.stdout) == (0, "")
    assert_untouched(db, data)


def test_a_symlinked_database_path_to_another_programs_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "app" / "app.db"
    data = foreign(target, 0)
    link = tmp_path / "data" / "checkpoint.db"
    link.parent.mkdir(mode=0o700)
    link.symlink_to(target)
    result = run(tmp_path, link, "scan")
    assert result.returncode == 1 and "not a Checkpoint database" in result.stderr, result.stderr
    assert_untouched(target, data)


def test_an_empty_file_and_a_new_one_become_checkpoint_databases(tmp_path: Path) -> None:
    empty = tmp_path / "data" / "empty.db"
    empty.parent.mkdir(mode=0o700)
    empty.touch()
    for db in (empty, tmp_path / "data" / "new.db"):
        assert run(tmp_path, db, "status").returncode == 0
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
            assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_a_checkpoint_database_from_before_the_application_id_still_opens(tmp_path: Path) -> None:
    """Made by an older Checkpoint: application id 0, our tables. Recognised by its tables, and given
    the id when it is next opened for writing."""
    db = tmp_path / "data" / "checkpoint.db"
    Store(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA application_id=0")
    reader = Store.read_only(db)  # the hooks' and MCP's way in
    try:
        assert reader.schema_version == len(MIGRATIONS)
    finally:
        reader.close()
    assert run(tmp_path, db, "status").returncode == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_a_folder_writable_by_a_group_not_the_users_own_is_refused(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "team"
    folder.mkdir()
    folder.chmod(0o770)
    assert database_folder_problem(folder) is None  # its group is the user's own (per-user groups)
    if os.getuid() == 0:  # root can give the folder to another group: the real command refuses it
        os.chown(folder, -1, 65534)
        result = run(tmp_path, folder / "checkpoint.db", "status")
        assert result.returncode == 1 and "writable by group 65534" in result.stderr, result.stderr
        assert "chmod g-w" in result.stderr and not (folder / "checkpoint.db").exists()
    else:  # anyone else: the folder's group seen as another's
        monkeypatch.setattr(os, "getgid", lambda: folder.stat().st_gid + 1)
        problem = database_folder_problem(folder)
        assert problem is not None and "writable by group" in problem and "chmod g-w" in problem
    folder.chmod(0o750)
    assert database_folder_problem(folder) is None


NOT_SQLITE = "is not a Checkpoint database (not an SQLite file"
NOT_SQLITE_FILES = {
    "passwd": b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
    "notes.txt": b"a text file someone keeps\n" * 40,
    "blob.bin": bytes(range(256)) * 64,
    "short.db": b"SQLite",  # shorter than a header
}


def not_sqlite(tmp_path: Path, name: str) -> tuple[Path, bytes]:
    path = tmp_path / "data" / name
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.write_bytes(NOT_SQLITE_FILES[name])
    path.chmod(0o644)
    return path, path.read_bytes()


def assert_refused_not_sqlite(line: str, db: Path) -> None:
    assert f"{db} {NOT_SQLITE}" in line, line
    assert "mv " not in line and ".broken" not in line and "corrupt" not in line, line  # nothing that touches it


def recorded_problems(db: Path, deadline_seconds: float = 0.0) -> list[str]:
    """The hooks' problems beside the database (agent/problems.py), waited for up to the deadline."""
    path = db.parent / (db.name + ".agent") / "problems.jsonl"
    deadline = time.monotonic() + deadline_seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return [json.loads(line)["message"] for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("name", sorted(NOT_SQLITE_FILES))
def test_a_file_that_is_not_sqlite_is_refused_by_every_command_and_left_as_it_was(tmp_path: Path, name: str) -> None:
    db, data = not_sqlite(tmp_path, name)
    for command in (["status"], ["items"], ["now"], ["scan"], ["search", "sqlite"]):
        result = run(tmp_path, db, *command)
        assert result.returncode == 1, (command, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert_refused_not_sqlite(lines[0], db)
    start = run(tmp_path, db, "hook", "session-start", stdin=json.dumps({"session_id": "s", "cwd": str(tmp_path)}))
    assert (start.returncode, start.stdout) == (0, "")
    [said] = recorded_problems(db)
    assert_refused_not_sqlite(said, db)
    stop = run(tmp_path, db, "hook", "stop", stdin=json.dumps({
        "session_id": "s", "cwd": str(tmp_path), "transcript_path": str(tmp_path / "claude" / "s.jsonl")}))
    assert (stop.returncode, stop.stdout) == (0, "")
    deadline = time.monotonic() + 30
    while len(problems := recorded_problems(db)) < 2 and time.monotonic() < deadline:  # the detached capture
        time.sleep(0.1)
    assert len(problems) == 2, problems
    assert_refused_not_sqlite(problems[1], db)
    assert db.read_bytes() == data and stat.S_IMODE(db.stat().st_mode) == 0o644
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()


def test_the_mcp_server_refuses_a_file_that_is_not_sqlite_in_one_line(tmp_path: Path) -> None:
    db, data = not_sqlite(tmp_path, "passwd")
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_decisions", "arguments": {}}},
    ]
    env = cli_env(tmp_path / "home", CHECKPOINT_DB=str(db))
    done = subprocess.run([*CHECKPOINT, "mcp"], input="".join(json.dumps(m) + "\n" for m in messages),
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    answers = {m.get("id"): m for m in map(json.loads, done.stdout.splitlines())}
    result = answers[2]["result"]
    assert result["isError"], result
    assert_refused_not_sqlite(result["content"][0]["text"], db)
    assert db.read_bytes() == data


def damaged_checkpoint_database(tmp_path: Path, application_id: int | None) -> Path:
    """A database Checkpoint made (with its application id, or from before it: our tables), whose
    pages past the first (the schema) were overwritten: the header still says whose it is."""
    db = tmp_path / "data" / "checkpoint.db"
    db.parent.mkdir(mode=0o700, exist_ok=True)
    if application_id == 0:
        # From before the application id: the schema of then (today's no longer fits in the first page).
        with sqlite3.connect(db) as conn:
            conn.execute("PRAGMA page_size=16384")  # as the store makes it
            migrate(conn, MIGRATIONS[:BEFORE_APPLICATION_ID])
    else:
        Store(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")  # everything in the main file
        if application_id is not None:
            conn.execute(f"PRAGMA application_id={application_id}")
    conn.close()
    raw = bytearray(db.read_bytes())
    page = int.from_bytes(raw[16:18], "big") or 65536
    raw[page:] = b"\xa5" * (len(raw) - page)
    db.write_bytes(bytes(raw))
    return db


@pytest.mark.parametrize("application_id", [APPLICATION_ID, 0])
def test_a_damaged_checkpoint_database_is_told_apart_and_may_be_moved_aside(tmp_path: Path,
                                                                             application_id: int) -> None:
    db = damaged_checkpoint_database(tmp_path, application_id)
    result = run(tmp_path, db, "status")
    assert result.returncode == 1, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert f"the Checkpoint database {db} is damaged" in line, line
    assert f"mv '{db}' '{db}.broken'" in line and "not a Checkpoint database" not in line


def test_a_damaged_sqlite_file_of_unknown_owner_is_left_as_it_is(tmp_path: Path) -> None:
    """Another program's SQLite file, damaged in its schema page: nobody can tell whose it is, so no
    advice moves it."""
    db = tmp_path / "data" / "other.db"
    foreign(db, 0)
    raw = bytearray(db.read_bytes())
    raw[100:] = b"\xa5" * (len(raw) - 100)
    db.write_bytes(bytes(raw))
    result = run(tmp_path, db, "status")
    assert result.returncode == 1, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert str(db) in line and "not known to be a Checkpoint database" in line, line
    assert "mv " not in line and ".broken" not in line, line
