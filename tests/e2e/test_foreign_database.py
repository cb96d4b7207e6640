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
from pathlib import Path

import pytest

from checkpoint.ownership import database_folder_problem
from checkpoint.store import Store
from checkpoint.store.schema import APPLICATION_ID, MIGRATIONS
from tests.support.cli_run import cli_env

CHECKPOINT = [sys.executable, "-m", "checkpoint"]


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
