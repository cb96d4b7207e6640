"""`checkpoint serve`: the watcher ingests what the agent writes, background extraction catches up,
and `checkpoint/status` and work-done progress say so, losing nothing the watcher saw."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import pytest
import pytest_asyncio
from lsprotocol import types

from checkpoint.model import RunReport, Totals
from checkpoint.server.events import EventBus, RunFinished, RunStarted
from checkpoint.server.features.extraction import summary_of
from checkpoint.server.features.status import StatusFeature
from checkpoint.store import Store
from tests.support.lsp_support import Daemon, Transcript, dump, server_env, session
from tests.support.oracle import clean_scan

if TYPE_CHECKING:
    from checkpoint.server.features.extraction import ExtractionFeature
    from checkpoint.server.server import CheckpointServer

pytestmark = pytest.mark.asyncio(loop_scope="function")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    return ws


@pytest.fixture
def claude_root(tmp_path: Path) -> Path:
    root = tmp_path / "claude" / "projects"
    root.mkdir(parents=True)
    return root


@pytest_asyncio.fixture
async def daemon(tmp_path: Path, workspace: Path, claude_root: Path) -> AsyncIterator[Daemon]:
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [claude_root])
    d = await Daemon.start(env, [workspace], {"checkpoint": {"idleSeconds": 0.4, "rescanSeconds": 5}})
    yield d
    await d.stop()


async def test_status_follows_appended_turns_and_loses_nothing(
    daemon: Daemon, workspace: Path, claude_root: Path, tmp_path: Path
) -> None:
    """Appended turns raise pending, background extraction brings it back to 0, a half-written
    line waits until it is complete, and in the end every turn written is counted and captured."""
    await daemon.wait_status(lambda s: s["totals"]["turns"] == 0, what="the first status")
    t = Transcript(claude_root, workspace)
    t.write(t.user("Please build the cache layer.") + t.assistant("We'll use marker-first for the cache layer."))

    before = len(daemon.statuses)
    up = await daemon.wait_status(lambda s: s["totals"]["pending"] > 0, after=before, what="pending > 0")
    assert session(up, t.session_id) is not None
    done = await daemon.wait_status(
        lambda s: s["totals"]["turns"] == t.turns and s["totals"]["pending"] == 0 and not s["running"],
        after=before, what="everything captured",
    )
    assert done["totals"] == {"turns": 2, "captured": 2, "pending": 0, "failed": 0}
    assert done["last_run"]["explicit"] is False and done["last_run"]["captured"] >= 1

    # Half a line: the tailer keeps it back (the watcher sees the write; the scan takes no turn from it).
    raw = dump(t.user("Also: we'll use marker-second for the queue worker.")[0])
    t.write_bytes(raw[:40])
    await asyncio.sleep(0.6)  # many times the watcher's latency
    assert daemon.status is not None and daemon.status["totals"]["turns"] == 2
    mark = len(daemon.statuses)
    t.write_bytes(raw[40:])
    t.write(t.assistant("Going with marker-third for the build step, as decided."))
    final = await daemon.wait_status(
        lambda s: s["totals"]["turns"] == t.turns and s["totals"]["pending"] == 0 and not s["running"],
        after=mark, what="the completed line and the next turn captured",
    )
    assert final["totals"] == {"turns": 4, "captured": 4, "pending": 0, "failed": 0}

    # Nothing lost: an independent scan of the same files finds the same turns.
    clean_scan(tmp_path / "oracle.db", [claude_root])
    oracle = Store(tmp_path / "oracle.db")
    assert Totals.of(oracle.session_counts()).turns == final["totals"]["turns"]
    oracle.close()
    statements = {i["statement"] for i in await daemon.items()}
    assert {"We'll use marker-first for the cache layer.",
            "Also: we'll use marker-second for the queue worker.",
            "Going with marker-third for the build step, as decided."} <= statements


async def test_progress_reports_chunks_done_of_total(daemon: Daemon, workspace: Path, claude_root: Path) -> None:
    """A background run reports work-done progress: begin, done/total per chunk, end."""
    t = Transcript(claude_root, workspace)
    t.write(t.user("We'll use marker-p1 for the parser.") + t.assistant("Decided: marker-p2 for the cache."))
    await daemon.wait_status(lambda s: s["last_run"] is not None and s["totals"]["pending"] == 0)
    reports = await daemon.wait_for(
        lambda: [r for r in daemon.client.progress_reports.values()
                 if r and isinstance(r[-1], types.WorkDoneProgressEnd)],
        what="a finished progress",
    )
    first = reports[0]
    assert isinstance(first[0], types.WorkDoneProgressBegin) and first[0].title == "Checkpoint"
    messages = [r.message for r in first if isinstance(r, types.WorkDoneProgressReport)]
    assert messages[-1] == "1/1 chunks"
    assert first[-1] == types.WorkDoneProgressEnd(message="1 captured, 0 failed, 2 new items")


async def test_background_policy_pending_threshold_and_run_budget(
    tmp_path: Path, workspace: Path, claude_root: Path
) -> None:
    """Not idle long enough: extraction waits for more than maxPendingTurns pending turns. A run
    stops at its budget (one request here) and background extraction then waits for new turns."""
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [claude_root],
                     CHECKPOINT_CHUNK_TOKENS="300")
    options = {"checkpoint": {"idleSeconds": 1000, "maxPendingTurns": 3, "maxRequests": 1}}
    daemon = await Daemon.start(env, [workspace], options)
    filler = " ".join(["The worker drains the queue in order and reports every job it finished."] * 8)
    t = Transcript(claude_root, workspace)
    try:
        t.write(t.user(f"We'll use marker-a for the queue. {filler}") + t.assistant(f"Agreed. {filler}"))
        await daemon.wait_status(lambda s: s["totals"]["turns"] == 2)
        await asyncio.sleep(0.8)
        assert daemon.status is not None and daemon.status["last_run"] is None  # 2 pending, not idle: waits

        t.write(t.user(f"We'll use marker-b for retries. {filler}") + t.assistant(f"Done. {filler}"))
        first = await daemon.wait_status(lambda s: s["last_run"] is not None and not s["running"])
        assert first["last_run"]["tried"] == 1 and first["last_run"]["stopped_by"] == "request budget of 1 reached"
        assert first["paused"] and "waits for new turns" in first["paused"]
        assert 0 < first["totals"]["pending"] < 4
        await asyncio.sleep(0.8)
        assert daemon.status is not None and daemon.status["last_run"] == first["last_run"]  # paused

        t.write(t.user(f"We'll use marker-c for the cache. {filler}"))
        second = await daemon.wait_status(
            lambda s: s["last_run"] is not None and s["last_run"] != first["last_run"] and not s["running"])
        assert second["last_run"]["tried"] == 1 and second["paused"]
        assert second["totals"]["captured"] > first["totals"]["captured"]
    finally:
        await daemon.stop()


async def test_scope_follows_the_workspace_folders(tmp_path: Path, workspace: Path, claude_root: Path) -> None:
    """No folder open: every session. A folder added: only the sessions launched inside it (compared
    as real paths, so a symlinked spelling of the folder counts too)."""
    inside, outside = Transcript(claude_root, workspace), Transcript(claude_root, tmp_path / "elsewhere")
    inside.write(inside.user("Inside the workspace."))
    outside.write(outside.user("Outside of it."))
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [claude_root])
    daemon = await Daemon.start(env, [], {"checkpoint": {"extraction": "manual"}})
    try:
        everything = await daemon.wait_status(lambda s: s["totals"]["turns"] == 2)
        assert everything["scope"] == "all" and everything["workspace_folders"] == []
        link = tmp_path / "link-to-ws"
        link.symlink_to(workspace)
        daemon.client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=link.as_uri(), name="ws")], removed=[])))
        scoped = await daemon.wait_status(lambda s: s["scope"] == "workspace")
        assert scoped["workspace_folders"] == [link.as_uri()]
        assert [(s["id"], s["workspace"]) for s in scoped["sessions"]] == [(inside.session_id, link.as_uri())]
        assert scoped["totals"]["turns"] == 1
    finally:
        await daemon.stop()


async def test_a_first_start_reads_the_workspace_sessions_before_the_rest_of_the_history(
    tmp_path: Path, workspace: Path, claude_root: Path
) -> None:
    """Over a long history not read yet, the workspace's own sessions (launched in it or below it)
    are stored first, so that its status is right long before the whole history is read. Their
    project directories sort last here: a walk in name order would read them last."""
    history = [Transcript(claude_root, tmp_path / "aaa" / f"project{i}") for i in range(30)]
    ours = [Transcript(claude_root, workspace), Transcript(claude_root, workspace / "src")]
    for t in history + ours:
        t.write(t.user(f"Work in {t.cwd}.") + t.assistant("Done."))
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [claude_root])
    daemon = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual", "scope": "all"}})
    try:
        await daemon.wait_status(lambda s: s["totals"]["turns"] == 2 * len(history + ours), timeout=30)
    finally:
        await daemon.stop()
    store = Store(tmp_path / "db" / "checkpoint.db")
    try:
        first_stored = dict(store.conn.execute("SELECT session_id, min(rowid) FROM turns GROUP BY session_id"))
    finally:
        store.close()
    assert max(first_stored[t.session_id] for t in ours) < min(first_stored[t.session_id] for t in history)


async def test_a_finished_run_is_never_sent_beside_counts_read_before_it_finished() -> None:
    """A unit of the status feature, with the database read held open while the run finishes: the
    notification built from that read still says the run is going; the next one has both the
    summary and the counts after the commit. (Before, the summary went out beside the old counts.)"""
    read_started, release = asyncio.Event(), asyncio.Event()
    pending = {"now": 4}
    sent: list[dict[str, Any]] = []

    class Db:
        async def call(self, fn: Any, *args: Any) -> tuple[int, tuple[dict[str, Any], Any]]:
            counts = {"totals": {"pending": pending["now"]}, "listed": []}  # what the read sees when it starts
            read_started.set()
            await release.wait()
            return 0, (counts, None)  # (the connection's data_version, the snapshot)

    server = SimpleNamespace(
        read_worker=Db(), scope="all", folders=SimpleNamespace(uris=[]),
        daemon_settings=SimpleNamespace(auto=SimpleNamespace(extraction="auto")),
        stopping=asyncio.Event(), events=EventBus(),
        protocol=SimpleNamespace(notify=lambda method, payload: sent.append(payload)),
        run_task=lambda coro, name=None: asyncio.get_running_loop().create_task(coro, name=name),
    )
    # stand-ins holding only what the feature reads
    StatusFeature(cast("CheckpointServer", server), extraction=cast("ExtractionFeature", SimpleNamespace(paused=None)))
    server.events.publish(RunStarted(1))
    await read_started.wait()
    pending["now"] = 3  # the run commits while the counts are being read ...
    server.events.publish(RunFinished(summary_of(
        RunReport(run_id=1, extractor="heuristic", tried=1, captured=1, items_added=1), explicit=False)))
    read_started.clear()
    release.set()  # ... and the read returns what it saw before
    while len(sent) < 2:
        await asyncio.sleep(0.01)
    assert [(p["running"], p["last_run"] is not None, p["totals"]["pending"]) for p in sent] == [
        (True, False, 4), (False, True, 3)]
