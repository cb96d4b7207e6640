"""The workspace's sessions as a delta (issue 32): each `checkpoint/status` carries only the workspace
sessions that changed since the status before, with versions; a client that applies them holds the
whole list, equal to the one `checkpoint/sessions` reads from the database, and the counts are exact
in every status. A client that comes in late asks `checkpoint/workspaceSessions` and gets in step."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from checkpoint.status_model import read_status
from checkpoint.store import Store
from tests.support.lsp_support import Daemon, Transcript, server_env
from tests.support.status_deltas import SessionMirror

pytestmark = pytest.mark.asyncio(loop_scope="function")
MANY = 40


@pytest.fixture
def transcripts(tmp_path: Path, workspace: Path) -> list[Transcript]:
    root = tmp_path / "claude" / "projects"
    sessions = [Transcript(root, workspace / f"project{n}") for n in range(MANY)]
    for n, t in enumerate(sessions):
        t.write(t.user(f"Session {n}.") + t.assistant(f"Answer {n}."))
    return sessions


@pytest_asyncio.fixture
async def daemon(tmp_path: Path, workspace: Path, transcripts: list[Transcript]) -> AsyncIterator[Daemon]:
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "claude" / "projects"])
    d = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual", "scope": "workspace"}})
    yield d
    await d.stop()


def totals_of(sessions: list[dict[str, Any]]) -> dict[str, int]:
    return {key: sum(s[key] for s in sessions) for key in ("turns", "captured", "pending", "failed")}


def store_totals(db: Path) -> dict[str, int]:
    store = Store(db)
    try:
        return read_status(store).totals.as_dict()
    finally:
        store.close()


async def test_deltas_rebuild_the_whole_list_and_counts_are_exact_in_every_status(
    daemon: Daemon, tmp_path: Path, transcripts: list[Transcript]
) -> None:
    turns = sum(t.turns for t in transcripts)
    await daemon.wait_status(lambda s: s["totals"]["turns"] == turns and len(s["sessions"]) == MANY,
                             timeout=30, what="every session read")
    mark = len(daemon.record.wire)
    grown = transcripts[3:40:9]  # some of many
    for round_ in range(3):
        for t in grown:
            t.write(t.user(f"More {round_}.") + t.assistant(f"Done {round_}."))
    turns = sum(t.turns for t in transcripts)
    final = await daemon.wait_status(lambda s: s["totals"]["turns"] == turns, timeout=30, what="the appends")

    # Every status: the rebuilt list is as long as the delta says and adds up to the status's totals
    # (scope "workspace": the totals are over exactly the workspace's sessions).
    for shown, sent in zip(daemon.statuses, daemon.record.wire, strict=True):
        assert len(shown["sessions"]) == sent["workspace_sessions"]["total"] == shown["sessions_total"]
        assert totals_of(shown["sessions"]) == shown["totals"]
    assert daemon.record.gaps == 0
    # After the catch-up, a status carries only the sessions that changed, never the whole list.
    changed = {s["id"] for sent in daemon.record.wire[mark:] for s in sent["workspace_sessions"]["changed"]}
    assert changed == {t.session_id for t in grown}
    assert all(len(sent["workspace_sessions"]["changed"]) <= len(grown) for sent in daemon.record.wire[mark:])

    # The rebuilt list is the database's: what `checkpoint/sessions` reads, in the same order.
    listed = await daemon.sessions(scope="workspace")
    assert final["sessions"] == daemon.statuses[-1]["sessions"] == as_in_status(listed["sessions"])
    assert listed["total"] == MANY
    assert final["totals"] == store_totals(tmp_path / "db" / "checkpoint.db")
    answer = await daemon.workspace_sessions()
    assert answer == {"version": daemon.record.mirror.version, "sessions": as_in_status(listed["sessions"]),
                      "total": MANY}


async def test_a_client_that_comes_in_late_asks_for_the_list_and_gets_in_step(
    daemon: Daemon, transcripts: list[Transcript]
) -> None:
    turns = sum(t.turns for t in transcripts)
    await daemon.wait_status(lambda s: s["totals"]["turns"] == turns, timeout=30, what="every session read")
    late = SessionMirror()
    transcripts[0].write(transcripts[0].assistant("Later."))
    await daemon.wait_status(lambda s: s["totals"]["turns"] == turns + 1, what="the append")
    first_seen = daemon.record.wire[-1]["workspace_sessions"]
    assert first_seen["since"] > 0 and not late.apply(first_seen)  # a gap: it holds nothing to apply to
    late.reset(await daemon.workspace_sessions())
    mark = len(daemon.record.wire)
    transcripts[1].write(transcripts[1].assistant("Later still."))
    await daemon.wait_status(lambda s: s["totals"]["turns"] == turns + 2, what="the second append")
    for sent in daemon.record.wire[mark:]:
        assert late.apply(sent["workspace_sessions"])
    assert late.sessions == daemon.statuses[-1]["sessions"] == as_in_status(
        (await daemon.sessions(scope="workspace"))["sessions"])


def as_in_status(listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`checkpoint/sessions`' sessions without the key only that request adds (`repository`)."""
    return [{k: v for k, v in s.items() if k != "repository"} for s in listed]
