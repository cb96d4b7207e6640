"""The migration "workspaces are repositories" on a database of the schema before it (what main
wrote: MIGRATIONS up to "turn edits", rows written with that schema's SQL): every recorded folder,
session and item moves to its repository's workspace; a folder in no repository, or gone, keeps its
own."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from checkpoint.store import MIGRATIONS, Store
from checkpoint.store.migrations import migrate

BEFORE = [m.name for m in MIGRATIONS].index("workspaces are repositories")


def _old_database(path: Path, sessions: dict[str, str]) -> None:
    """A database at the schema before the migration, one session per cwd with one item, written as
    the store of that schema wrote them (items.workspace: the cwd)."""
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, MIGRATIONS[:BEFORE]) == BEFORE
    for n, (session_id, cwd) in enumerate(sessions.items()):
        conn.execute("INSERT INTO sessions (id, agent, cwd) VALUES (?, 'claude', ?)", (session_id, cwd))
        conn.execute("INSERT INTO session_cwds (session_id, cwd) VALUES (?, ?)", (session_id, cwd))
        conn.execute(
            "INSERT INTO items (id, session_id, fingerprint, kind, statement, confidence, turn_ids, extractor,"
            " first_chunk, created_at, updated_at, workspace) VALUES (?, ?, ?, 'decision', ?, 1, '[]', 'test',"
            " 1, ?, ?, ?)",
            (f"item-{session_id}", session_id, f"fp{n}", f"decided in {session_id}", n, n, cwd),
        )
    conn.close()


def test_existing_sessions_and_items_move_to_their_repository(tmp_path: Path) -> None:
    clone, worktree, plain = tmp_path / "app", tmp_path / "app-topic", tmp_path / "plain"
    clone.mkdir()
    plain.mkdir()
    for args in (["init", "-q", "-b", "main"], ["-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q",
                                                  "--allow-empty", "-m", "one"],
                 ["worktree", "add", "-q", "-b", "topic", str(worktree)]):
        subprocess.run(["git", *args], cwd=clone, check=True, capture_output=True)
    (clone / "src").mkdir()
    cwds = {"clone": str(clone), "worktree": str(worktree), "sub": str(clone / "src"), "plain": str(plain),
            "gone": "/nowhere/gone"}
    db = tmp_path / "old.db"
    _old_database(db, cwds)

    store = Store(db)
    repository = str((clone / ".git").resolve())
    expected = {"clone": repository, "worktree": repository, "sub": repository, "plain": str(plain),
                "gone": "/nowhere/gone"}
    assert dict(store.conn.execute("SELECT session_id, workspace FROM session_cwds")) == expected
    assert dict(store.conn.execute("SELECT id, workspace FROM sessions")) == expected
    assert dict(store.conn.execute("SELECT session_id, workspace FROM items")) == expected
    assert dict(store.conn.execute("SELECT id, origin FROM items")) == {f"item-{s}": "local" for s in cwds}
    # and the scoping rule now holds the three sessions of the repository from any of its folders
    assert {i.session_id for i in store.items(workspaces=[str(worktree)])} == {"clone", "worktree", "sub"}
