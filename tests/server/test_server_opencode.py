"""`checkpoint serve` over an opencode database: what opencode writes (into its WAL, as opencode does)
wakes the watcher, and the status counts the new turns, well before the periodic rescan would."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tarfile
from pathlib import Path

import pytest

from tests.support.lsp_support import Daemon, server_env
from tests.support.paths import DATA_DIR

pytestmark = pytest.mark.asyncio(loop_scope="function")
DATA = DATA_DIR / "opencode" / "sessions.tar.gz"


async def test_writes_into_opencodes_wal_are_read_at_once(tmp_path: Path) -> None:
    with tarfile.open(DATA) as tar:
        tar.extractall(tmp_path / "data", filter="data")
    workspace, root = tmp_path / "ws", tmp_path / "opencode"
    workspace.mkdir()
    root.mkdir()
    db = root / "opencode.db"
    shutil.copy(tmp_path / "data" / "first" / "opencode" / "opencode.db", db)
    # As opencode holds it: WAL mode, a connection open; the session launched in the workspace.
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("UPDATE session SET directory = ?", (str(workspace),))
    conn.commit()

    # PYTHONPATH passed on: a checkout other than the installed one is the daemon under test.
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root],
                     PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    daemon = await Daemon.start(env, [workspace], {"checkpoint": {"idleSeconds": 0.4, "rescanSeconds": 600}})
    try:
        first = await daemon.wait_status(lambda s: s["totals"]["turns"] == 2, what="the first prompt and answer")
        assert [s["agent"] for s in first["sessions"]] == ["opencode"]
        # The rest, as opencode wrote it: new messages, parts, the child session and the fork.
        conn.execute("ATTACH ? AS final", (str(tmp_path / "data" / "final" / "opencode" / "opencode.db"),))
        for table in ("session", "message", "part"):
            conn.execute(f"INSERT OR IGNORE INTO main.{table} SELECT * FROM final.{table}")
        conn.execute("UPDATE main.session SET directory = ?", (str(workspace),))
        conn.commit()
        assert (root / "opencode.db-wal").stat().st_size > 0
        done = await daemon.wait_status(lambda s: s["totals"]["turns"] == 14, timeout=20, what="all 14 turns")
        assert [s["agent"] for s in done["sessions"]] == ["opencode", "opencode"]  # the session and its fork
    finally:
        conn.close()
        await daemon.stop()
