"""A database another process holds locked, or one not migrated yet, met by the front ends on an
agent's path (issue 37, finding 9): the real `checkpoint hook session-start` and `checkpoint mcp` in a
git repository with a decision record to read in, the lock held by a separate process for the whole
call. Each waits no longer than its own short budget from its very first statement (the database was
opened with a 30 s timeout and migrated before the short wait applied: 30 s of stall), and neither
creates nor migrates a database.

The bounds asserted are the old stall (30 s), not the budget: a loaded machine may be slow, never 30 s
slow for a 0.3 s wait."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from checkpoint.agent.problems import recent
from checkpoint.store.migrations import MIGRATIONS
from tests.support.agent_corpus import PlannedSession, capture, write_claude_session

CHECKPOINT = Path(sys.executable).with_name("checkpoint")
OLD_STALL = 30.0
RECORD = """---
status: proposed
date: 2026-11-02
id: 0123456789abcdef
kind: decision
---

# We'll use SQLite for the job queue.
"""
HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode=EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("UPDATE sessions SET title = title")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


class Repo:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.ws = tmp / "repo"
        self.db = tmp / "data" / "checkpoint.db"
        self.root = tmp / "projects"
        (self.ws / "docs" / "decisions").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.ws)], check=True, timeout=60)
        (self.ws / "docs" / "decisions" / "0001-queue.md").write_text(RECORD)
        write_claude_session(self.root, PlannedSession("sess-repo", str(self.ws), [
            "We'll use orjson for speed because the API answers large lists."]))
        capture(self.db, self.root)

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.tmp),
                "XDG_CONFIG_HOME": str(self.tmp / ".config"), "CHECKPOINT_DB": str(self.db),
                "CHECKPOINT_SOURCES": str(self.root)}

    def session_start(self) -> subprocess.CompletedProcess[bytes]:
        data = {"session_id": "s1", "cwd": str(self.ws), "hook_event_name": "SessionStart", "source": "startup"}
        return subprocess.run([str(CHECKPOINT), "hook", "session-start"], input=json.dumps(data).encode(),
                              capture_output=True, env=self.env(), timeout=OLD_STALL)

    def problems(self) -> list[dict[str, Any]]:
        out = subprocess.run([str(CHECKPOINT), "status", "--json"], capture_output=True, env=self.env(),
                             timeout=60, check=True)
        found: list[dict[str, Any]] = json.loads(out.stdout)["agent_problems"]
        return found


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path)


@contextmanager
def locked(repo: Repo) -> Iterator[None]:
    """The database held by another process (an exclusive lock: no reader gets in either)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(repo.db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    try:
        yield
    finally:
        holder.communicate("", timeout=60)


def test_session_start_against_a_lock_held_elsewhere_ends_within_its_wait(repo: Repo) -> None:
    with locked(repo):
        result = repo.session_start()  # raises TimeoutExpired at the old stall
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    problems = repo.problems()
    assert problems and all("database is locked" in p["message"] for p in problems), problems
    assert shared_items(repo) == 0
    # Once the lock is gone, the next session start reads the record in.
    assert repo.session_start().returncode == 0
    assert shared_items(repo) == 1


def shared_items(repo: Repo) -> int:
    with sqlite3.connect(f"file:{repo.db}?mode=ro", uri=True) as conn:
        count: int = conn.execute("SELECT count(*) FROM items WHERE statement LIKE '%job queue%'").fetchone()[0]
    conn.close()
    return count


def test_mcp_against_a_lock_held_elsewhere_answers_within_its_wait(repo: Repo) -> None:
    params = StdioServerParameters(command=str(CHECKPOINT), args=["mcp"], cwd=str(repo.ws), env=repo.env())

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await asyncio.wait_for(session.call_tool("list_decisions", {}), timeout=OLD_STALL)

    with locked(repo):
        result = asyncio.run(main())  # the records' 30 s wait and the read's 5 s: over the bound before
    assert result.is_error and "database is locked" in str(result.content[0].text)


def test_a_hook_never_migrates_a_database(repo: Repo) -> None:
    older = len(MIGRATIONS) - 1
    with sqlite3.connect(repo.db) as conn:
        conn.execute(f"PRAGMA user_version={older}")
    conn.close()
    result = repo.session_start()
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    with sqlite3.connect(f"file:{repo.db}?mode=ro", uri=True) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.close()
    assert (version, shared_items(repo)) == (older, 0)  # neither migrated nor written
    [problem] = recent(repo.db)  # `checkpoint status` would migrate it: the file the hooks write is read
    assert f"is at schema version {older}" in problem.message
