"""checkpoint.now, the checkpoint/items and checkpoint/search requests, and triage (checkpoint.dismiss /
checkpoint.accept, offered as code actions on a checkpoint diagnostic)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from checkpoint.server.protocol import CHECKPOINT_SEARCH, CMD_ACCEPT, CMD_DISMISS, CMD_NOW
from checkpoint.server.requests.items import plain
from checkpoint.store import Store
from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")


@pytest.fixture
def sessions(tmp_path: Path, workspace: Path) -> tuple[Transcript, Transcript]:
    root = tmp_path / "claude" / "projects"
    inside = Transcript(root, workspace / "src")  # launched in a sub-directory: still this workspace
    inside.write(inside.user("Make the queue durable."))
    inside.write(inside.assistant(
        "We'll use marker-queue for the job queue. The queue must never drop a job.",
        edits=[(workspace / "src" / "queue.py", "pass", "        self.jobs.append(job)")],
    ))
    outside = Transcript(root, tmp_path / "other-project")
    outside.write(outside.user("We'll use marker-elsewhere for the other project."))
    return inside, outside


@pytest_asyncio.fixture
async def daemon(tmp_path: Path, workspace: Path, sessions: tuple[Transcript, Transcript]) -> AsyncIterator[Daemon]:
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "claude" / "projects"])
    d = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual"}})
    yield d
    await d.stop()


async def test_now_extracts_the_workspace_sessions_and_returns_a_summary(
    daemon: Daemon, sessions: tuple[Transcript, Transcript]
) -> None:
    inside, outside = sessions
    first = await daemon.wait_status(lambda s: s["totals"]["turns"] == inside.turns, what="the workspace session")
    assert [s["id"] for s in first["sessions"]] == [inside.session_id]
    assert first["totals"]["pending"] == inside.turns and first["extraction"] == "manual"

    result = await daemon.command(CMD_NOW)
    run = result["run"]
    assert run["explicit"] is True and run["captured"] == 1 and run["failed"] == 0
    assert run["items_added"] == 2 and run["stopped_by"] is None and run["extractor"] == "heuristic"
    assert result["totals"] == {"turns": inside.turns, "captured": inside.turns, "pending": 0, "failed": 0}
    after = await daemon.wait_status(lambda s: s["totals"]["pending"] == 0 and s["last_run"])
    assert after["items"]["by_kind"] == {"decision": 1, "constraint": 1}

    # The session outside the workspace was not extracted; naming it runs it.
    outside_result = await daemon.command(CMD_NOW, outside.session_id)
    assert outside_result["run"]["captured"] == 1 and outside_result["totals"]["pending"] == 0


async def test_items_request_filters_and_gives_provenance(
    daemon: Daemon, workspace: Path, sessions: tuple[Transcript, Transcript]
) -> None:
    inside, outside = sessions
    await daemon.command(CMD_NOW)
    await daemon.command(CMD_NOW, outside.session_id)
    in_workspace = await daemon.items()
    assert {i["statement"] for i in in_workspace} == {
        "We'll use marker-queue for the job queue.", "The queue must never drop a job."}
    assert {i["statement"] for i in await daemon.items(scope="all")} >= {
        "We'll use marker-elsewhere for the other project."}
    decision = (await daemon.items(kind="decision"))[0]
    assert decision["session_id"] == inside.session_id
    assert decision["workspace"] == workspace.as_uri()
    assert decision["files"] == [str(workspace / "src" / "queue.py")]
    assert decision["sources"] == [{
        "turn_id": decision["turn_ids"][0], "path": str(inside.path), "line": 2,
        "timestamp": decision["sources"][0]["timestamp"], "role": "assistant", "uri": inside.path.as_uri(),
    }]
    assert sorted(i["kind"] for i in await daemon.items(file=(workspace / "src" / "queue.py").as_uri())) == [
        "constraint", "decision"]
    assert await daemon.items(session=outside.session_id, kind="constraint") == []
    assert {i["id"] for i in await daemon.items(workspace=workspace.as_uri())} == {i["id"] for i in in_workspace}
    assert [i["statement"] for i in await daemon.items(workspace=outside.cwd.as_uri())] == [
        "We'll use marker-elsewhere for the other project."]


async def _search(daemon: Daemon, query: object) -> dict[str, Any]:
    result: dict[str, Any] = plain(await daemon.client.protocol.send_request_async(CHECKPOINT_SEARCH, query))
    return result


async def test_search_request_ranks_the_scope_items_and_refuses_bad_params(
    daemon: Daemon, workspace: Path, sessions: tuple[Transcript, Transcript]
) -> None:
    inside, outside = sessions
    await daemon.command(CMD_NOW)
    await daemon.command(CMD_NOW, outside.session_id)
    found = await _search(daemon, {"query": "queue"})
    assert found["terms"] == ["queue"] and found["matched"] == "all"
    assert [i["statement"] for i in found["items"]] == [  # "queue" twice in the first: ranked above
        "We'll use marker-queue for the job queue.", "The queue must never drop a job."]
    first = found["items"][0]
    assert first["workspace"] == workspace.as_uri() and first["sources"][0]["uri"] == inside.path.as_uri()
    assert isinstance(first["score"], float) and first["score"] <= found["items"][1]["score"]
    assert (await _search(daemon, {"query": "queue", "kind": "constraint"}))["items"][0]["kind"] == "constraint"
    # The other project is out of the workspace scope; scope "all" or its folder finds it.
    assert (await _search(daemon, "elsewhere"))["items"] == []
    assert len((await _search(daemon, {"query": "elsewhere", "scope": "all"}))["items"]) == 1
    assert len((await _search(daemon, {"query": "elsewhere", "workspace": outside.cwd.as_uri()}))["items"]) == 1
    hostile = await _search(daemon, {"query": 'queue" NEAR(* -job:'})
    assert hostile["terms"] == ["queue", "NEAR", "job"]
    assert await _search(daemon, {"query": "  "}) == {"terms": [], "matched": "all", "items": []}
    for bad in ({}, {"query": 3}, {"query": "x", "limit": 0}, {"query": "x", "kind": "idea"}, [1]):
        with pytest.raises(JsonRpcInvalidParams):
            await _search(daemon, bad)


async def test_dismiss_and_accept_via_code_actions(
    daemon: Daemon, workspace: Path, tmp_path: Path, sessions: tuple[Transcript, Transcript]
) -> None:
    uri = (workspace / "src" / "queue.py").as_uri()
    await daemon.command(CMD_NOW)
    diags = await daemon.wait_diagnostics(uri, lambda d: len(d) == 2)
    decision = next(d for d in diags if d.message.startswith("Decision"))
    constraint = next(d for d in diags if d.message.startswith("Constraint"))
    assert decision.range == types.Range(types.Position(2, 8), types.Position(2, 29))  # one line, from its text
    decision_id, constraint_id = (str(d.data["item_id"]) for d in (decision, constraint))  # type: ignore[index]

    actions = await daemon.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=decision.range,
        context=types.CodeActionContext(diagnostics=[decision]),
    ))
    assert actions is not None
    commands = [(a.command.command, a.command.arguments) for a in actions
                if isinstance(a, types.CodeAction) and a.command]
    assert commands == [(CMD_ACCEPT, (decision_id,)), (CMD_DISMISS, (decision_id,))]
    assert all(isinstance(a, types.CodeAction) and a.kind == types.CodeActionKind.QuickFix for a in actions)

    dismissed = await daemon.command(CMD_DISMISS, decision_id)
    assert dismissed == {"id": decision_id, "state": "dismissed", "changed": True}
    left = await daemon.wait_diagnostics(uri, lambda d: len(d) == 1)
    assert left == [constraint]
    accepted = await daemon.command(CMD_ACCEPT, constraint_id)
    assert accepted == {"id": constraint_id, "state": "accepted", "changed": True}
    assert [i["id"] for i in await daemon.items(state="dismissed")] == [decision_id]
    assert [i["state"] for i in await daemon.items()] == ["accepted"]
    for command in (CMD_DISMISS, CMD_ACCEPT):  # an error, not `changed: false` (read as "it was so already")
        with pytest.raises(JsonRpcInvalidParams, match="no item 'no-such-item'"):
            await daemon.command(command, "no-such-item")

    # Stored: another process reading the database sees the triage.
    store = Store(tmp_path / "db" / "checkpoint.db")
    assert {i.id: i.state for i in store.items(include_dismissed=True)} == {
        decision_id: "dismissed", constraint_id: "accepted"}
    store.close()
