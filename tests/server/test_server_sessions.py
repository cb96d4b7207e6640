"""A lean `checkpoint/status` (issue 16): it carries the totals over every session in scope but only
the workspace folders' sessions; the rest is the `checkpoint/sessions` request, asked for when the
status's `others_version` says one of them changed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcInvalidParams

from checkpoint.model import SessionCounts
from checkpoint.server.features.status import MAX_OTHER_CAUSES, digest, split_sessions
from checkpoint.server.folders import Folders
from checkpoint.status_model import read_status
from checkpoint.store import Store
from tests.support.lsp_support import Daemon, Transcript, server_env


@pytest.fixture
def transcripts(tmp_path: Path, workspace: Path) -> tuple[Transcript, list[Transcript]]:
    root = tmp_path / "claude" / "projects"
    inside = Transcript(root, workspace / "src")
    inside.write(inside.user("Inside the workspace."))
    outside = [Transcript(root, tmp_path / f"other-{n}") for n in range(3)]
    for n, t in enumerate(outside):
        t.write(t.user(f"Another project, {n}.") + t.assistant(f"Answered {n}."))
    return inside, outside


@pytest_asyncio.fixture
async def daemon(tmp_path: Path, workspace: Path, transcripts: Any) -> AsyncIterator[Daemon]:
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "claude" / "projects"])
    d = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual", "scope": "all"}})
    yield d
    await d.stop()


def expected_sessions(db: Path, workspace: Path) -> list[dict[str, Any]]:
    """Every session as `checkpoint status --json` reads it from the database, with its workspace."""
    store = Store(db)
    try:
        sessions: list[dict[str, Any]] = read_status(store).as_dict()["sessions"]
    finally:
        store.close()
    for s in sessions:
        s["workspace"] = workspace.as_uri() if s["cwd"].startswith(str(workspace)) else None
    return sessions


@pytest.mark.asyncio(loop_scope="function")
async def test_status_holds_only_the_workspace_sessions_and_the_request_every_one(
    daemon: Daemon, tmp_path: Path, workspace: Path, transcripts: tuple[Transcript, list[Transcript]]
) -> None:
    inside, outside = transcripts
    turns = inside.turns + sum(t.turns for t in outside)
    status = await daemon.wait_status(lambda s: s["totals"]["turns"] == turns, what="every session read")
    every = expected_sessions(tmp_path / "db" / "checkpoint.db", workspace)
    assert len(every) == 4
    mine = [s for s in every if s["id"] == inside.session_id]
    others = [s for s in every if s["id"] != inside.session_id]
    # The totals still count all four sessions; the sessions sent are the workspace's one, whole.
    assert status["totals"] == {"turns": turns, "captured": 0, "pending": turns, "failed": 0}
    assert status["sessions"] == mine
    assert status["sessions_total"] == 4
    assert status["others_version"] == digest(others) != ""
    assert status["other_causes"] == []

    # The request adds each one's repository: no folder here is in one, so each is its own.
    every = [{**s, "repository": s["cwd"]} for s in every]
    mine = [s for s in every if s["id"] == inside.session_id]
    assert await daemon.sessions() == {"sessions": every, "total": 4}
    assert await daemon.sessions(scope="workspace") == {"sessions": mine, "total": 1}
    assert await daemon.sessions(workspace=(tmp_path / "other-1").as_uri()) == {
        "sessions": [s for s in every if s["id"] == outside[1].session_id], "total": 1}
    assert await daemon.sessions(offset=1, limit=2) == {"sessions": every[1:3], "total": 4}
    assert await daemon.sessions(offset=9) == {"sessions": [], "total": 4}


@pytest.mark.asyncio(loop_scope="function")
async def test_each_listed_session_names_the_repository_its_folder_is_in(tmp_path: Path, workspace: Path) -> None:
    """The panel groups scope "all" by repository: the top folder of the git repository (a `.git`
    folder), whichever subfolder the session ran in; a folder in no repository is its own."""
    root = tmp_path / "claude" / "projects"
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg" / "deep").mkdir(parents=True)
    runs = [Transcript(root, repo / "pkg" / "deep"), Transcript(root, repo), Transcript(root, tmp_path / "loose")]
    for t in runs:
        t.write(t.user("Hello."))
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root])
    daemon = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual", "scope": "all"}})
    try:
        await daemon.wait_status(lambda s: s["sessions_total"] == 3, what="every session read")
        listed = {s["id"]: s["repository"] for s in (await daemon.sessions())["sessions"]}
    finally:
        await daemon.stop()
    assert listed == {runs[0].session_id: str(repo.resolve()), runs[1].session_id: str(repo.resolve()),
                      runs[2].session_id: str(tmp_path / "loose")}


@pytest.mark.asyncio(loop_scope="function")
async def test_others_version_changes_only_when_a_session_outside_changes(
    daemon: Daemon, transcripts: tuple[Transcript, list[Transcript]]
) -> None:
    inside, outside = transcripts
    turns = inside.turns + sum(t.turns for t in outside)
    first = await daemon.wait_status(lambda s: s["totals"]["turns"] == turns, what="every session read")
    inside.write(inside.assistant("Growing inside."))
    grown = await daemon.wait_status(lambda s: s["totals"]["turns"] == turns + 1, what="the inside append")
    assert grown["others_version"] == first["others_version"]
    assert grown["sessions"][0]["turns"] == inside.turns
    outside[0].write(outside[0].assistant("Growing outside."))
    moved = await daemon.wait_status(lambda s: s["totals"]["turns"] == turns + 2, what="the outside append")
    assert moved["others_version"] != first["others_version"]
    assert [s["id"] for s in moved["sessions"]] == [inside.session_id]
    listed = await daemon.sessions()
    assert next(s["turns"] for s in listed["sessions"] if s["id"] == outside[0].session_id) == outside[0].turns


@pytest.mark.asyncio(loop_scope="function")
async def test_bad_sessions_params_are_refused(daemon: Daemon) -> None:
    refused: list[tuple[dict[str, Any], str]] = [
        ({"scope": "nowhere"}, "`scope`"), ({"limit": 0}, "`limit`"), ({"offset": -1}, "`offset`"),
        ({"limit": True}, "`limit`"), ({"workspace": 3}, "`workspace`"), ({"page": 1}, "unknown key page")]
    for bad, says in refused:
        with pytest.raises(JsonRpcInvalidParams, match=says):
            await daemon.sessions(**bad)


def test_failing_causes_of_sessions_left_out_are_sent_a_bounded_few(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    folder = Folders([ws.as_uri()]).folders[0]

    def session(n: int, cwd: Path, causes: list[str]) -> SessionCounts:
        return SessionCounts(id=f"s{n}", agent="claude", title=f"t{n}", cwd=str(cwd), causes=causes)

    sessions = [session(0, ws, ["inside cause"])] + [
        session(n, tmp_path / "elsewhere", [f"cause {n}"]) for n in range(1, MAX_OTHER_CAUSES + 5)]
    split = split_sessions(sessions, {"s0": folder})
    assert split["listed"] == [{**sessions[0].as_dict(), "workspace": ws.as_uri()}]
    assert split["sessions_total"] == MAX_OTHER_CAUSES + 5
    assert split["other_causes"] == [
        {"session_id": f"s{n}", "title": f"t{n}", "cwd": str(tmp_path / "elsewhere"), "cause": f"cause {n}"}
        for n in range(1, MAX_OTHER_CAUSES + 1)]
    assert split["others_version"] == digest([{**s.as_dict(), "workspace": None} for s in sessions[1:]])
