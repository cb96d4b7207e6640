"""A decision record a `git pull` brings shows at once in a running daemon: its diagnostic is published
and `checkpoint/items` lists it within a few seconds, with no request from the client (the record
folder is watched; the periodic rescan is set far off so that it cannot be what noticed). A pull that
deletes the record retires the item: its diagnostic is removed. A record that cannot be read is a
problem of the daemon's status (file:line) as soon as it is written, and again when it changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from lsprotocol import types

from checkpoint.model import ItemKind, ItemState, SharedDecision
from checkpoint.team.records import RecordText, file_name, render
from tests.support.lsp_support import Daemon, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")

QUEUE = "class Queue:\n    def put(self, job):\n        self.jobs.append(job)\n"
DECISION = SharedDecision(
    id="5f3a9c0d1e2b", kind=ItemKind.DECISION, statement="We'll use SQLite for the job queue",
    rationale="It is one file.", files=("src/queue.py",), state=ItemState.NEW, status="proposed",
    date="2026-03-04", supersedes=(), superseded_by=(), path="",
)
RECORD = Path("docs") / "decisions" / file_name(DECISION.date, DECISION.statement, DECISION.id)
SOON = 5.0  # seconds: "at once", with room for a loaded machine


def git(cwd: Path, *args: str) -> None:
    out = subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args], cwd=cwd,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, (args, out.stdout, out.stderr)


def clones(tmp: Path) -> tuple[Path, Path]:
    """Two clones of a bare repository holding src/queue.py: the daemon's, and a teammate's."""
    origin = tmp / "origin.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp, "clone", "-q", str(origin), str(tmp / "teammate"))
    teammate = tmp / "teammate"
    (teammate / "src").mkdir()
    (teammate / "src" / "queue.py").write_text(QUEUE)
    git(teammate, "add", "-A")
    git(teammate, "commit", "-q", "-m", "start")
    git(teammate, "push", "-q", "origin", "HEAD:main")
    git(tmp, "clone", "-q", str(origin), str(tmp / "mine"))
    return tmp / "mine", teammate


async def test_a_pulled_record_shows_at_once_and_a_deleted_one_retires(tmp_path: Path) -> None:
    mine, teammate = clones(tmp_path)
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "projects"])
    daemon = await Daemon.start(env, [mine], {"checkpoint": {"extraction": "manual", "rescanSeconds": 600}})
    try:
        await daemon.wait_for(lambda: any(m.startswith("watching decision records") for m in daemon.logged()),
                              what="the record folder watched")
        assert await daemon.items() == []
        uri = (mine / "src" / "queue.py").as_uri()

        (teammate / RECORD).parent.mkdir(parents=True)
        (teammate / RECORD).write_text(render(DECISION, RecordText("T <t@example.com>", "Said in a session.")))
        git(teammate, "add", "-A")
        git(teammate, "commit", "-q", "-m", "decision: SQLite queue")
        git(teammate, "push", "-q", "origin", "HEAD:main")
        git(mine, "pull", "-q", "--no-rebase", "origin", "main")  # docs/decisions/ appears with the record

        [shown] = await daemon.wait_diagnostics(uri, lambda d: len(d) == 1, timeout=SOON)
        assert isinstance(shown.data, dict)
        assert (shown.data["item_id"], shown.code, shown.message, shown.severity, shown.source) == (
            DECISION.id, "decision", f"Decision: {DECISION.statement}", types.DiagnosticSeverity.Information,
            "checkpoint")
        [item] = await daemon.items()
        assert (item["id"], item["statement"], item["origin"], item["record"], item["files"]) == (
            DECISION.id, DECISION.statement, "shared", RECORD.as_posix(), ["src/queue.py"])
        # Who shared it, for the panel's Team row: the record's decision-makers, e-mail left out.
        assert (item["shared_by"], item["accepted_here"]) == ("T", False)

        git(teammate, "rm", "-q", RECORD.as_posix())
        git(teammate, "commit", "-q", "-m", "decision withdrawn")
        git(teammate, "push", "-q", "origin", "HEAD:main")
        git(mine, "pull", "-q", "--no-rebase", "origin", "main")  # the record and its folder are gone

        assert await daemon.wait_diagnostics(uri, lambda d: d == [], timeout=SOON) == []
        assert await daemon.items() == []
    finally:
        await daemon.stop()


async def test_a_malformed_record_is_a_problem_of_the_status_at_once(tmp_path: Path) -> None:
    mine, _ = clones(tmp_path)
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "projects"])
    daemon = await Daemon.start(env, [mine], {"checkpoint": {"extraction": "manual", "rescanSeconds": 600}})
    try:
        await daemon.wait_for(lambda: any(m.startswith("watching decision records") for m in daemon.logged()),
                              what="the record folder watched")
        record = mine.resolve() / RECORD
        record.parent.mkdir(parents=True)
        record.write_text(f"---\nid: {DECISION.id}\nkind: decision\nstatus: maybe\n---\n\n# Something\n")
        expected = {"path": str(record), "line": 4, "session_id": f"team:{mine.resolve() / '.git'}",
                    "message": "status: expected one of proposed, accepted, rejected, deprecated, superseded,"
                               " got 'maybe'"}
        count = len(daemon.statuses)
        await daemon.wait_status(lambda s: s["problems"] == [expected], timeout=SOON, after=count,
                                 what="the record's problem")
        count = len(daemon.statuses)
        record.write_text(f"---\nid: {DECISION.id}\nkind: decision\nstatus: accepted\ndate: soon\n---\n\n# X\n")
        expected = {**expected, "line": 5, "message": "date: expected YYYY-MM-DD, got 'soon'"}
        await daemon.wait_status(lambda s: s["problems"] == [expected], timeout=SOON, after=count,
                                 what="the record's new problem")  # nothing else changed: told all the same
        count = len(daemon.statuses)
        record.write_text(render(DECISION, RecordText("T <t@example.com>", "Said in a session.")))
        await daemon.wait_status(lambda s: s["problems"] == [], timeout=SOON, after=count, what="no problem")
        assert [i["id"] for i in await daemon.items()] == [DECISION.id]
    finally:
        await daemon.stop()
