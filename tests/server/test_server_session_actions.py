"""The panel's session menu, on the daemon's side: `checkpoint/transcripts` (Open Transcript) and
`checkpoint.forget` (Forget, as `checkpoint forget` does), against the real daemon and database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcInvalidParams

from checkpoint.server.protocol import CHECKPOINT_TRANSCRIPTS, CMD_FORGET
from checkpoint.server.requests.items import plain
from checkpoint.store import Store
from tests.support.lsp_support import Daemon, Transcript, server_env


@pytest.fixture
def sessions(tmp_path: Path, workspace: Path) -> list[Transcript]:
    root = tmp_path / "claude" / "projects"
    made = [Transcript(root, workspace / "src"), Transcript(root, tmp_path / "other")]
    for n, t in enumerate(made):
        t.write(t.user(f"We decided to use SQLite, {n}.") + t.assistant(f"We'll use SQLite for storage {n}."))
    return made


@pytest_asyncio.fixture
async def daemon(tmp_path: Path, workspace: Path, sessions: list[Transcript]) -> AsyncIterator[Daemon]:
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "claude" / "projects"])
    d = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual", "scope": "all"}})
    yield d
    await d.stop()


async def transcripts(daemon: Daemon, params: object) -> dict[str, object]:
    return dict(plain(await daemon.client.protocol.send_request_async(CHECKPOINT_TRANSCRIPTS, params)))


@pytest.mark.asyncio(loop_scope="function")
async def test_a_sessions_transcript_files_are_listed_for_open_transcript(
    daemon: Daemon, sessions: list[Transcript]
) -> None:
    await daemon.wait_status(lambda s: s["sessions_total"] == 2, what="both sessions read")
    mine = sessions[0]
    answer = await transcripts(daemon, {"session": mine.session_id})
    assert answer == {"session_id": mine.session_id, "files": [{"path": str(mine.path), "uri": mine.path.as_uri()}]}
    assert await transcripts(daemon, mine.session_id) == answer  # the id bare
    with pytest.raises(JsonRpcInvalidParams, match="no session 'nope'"):
        await transcripts(daemon, {"session": "nope"})
    with pytest.raises(JsonRpcInvalidParams, match="takes"):
        await transcripts(daemon, {"session": 3})


@pytest.mark.asyncio(loop_scope="function")
async def test_forget_removes_a_session_and_its_items_and_undo_reads_it_again(
    daemon: Daemon, sessions: list[Transcript], tmp_path: Path
) -> None:
    await daemon.wait_status(lambda s: s["sessions_total"] == 2, what="both sessions read")
    await daemon.command("checkpoint.now")
    other = sessions[1].session_id
    assert [i for i in await daemon.items(scope="all") if i["session_id"] == other]
    result = plain(await daemon.command(CMD_FORGET, other))
    assert result["session_id"] == other and result["undone"] is False
    assert result["removed"]["sessions"] == 1 and result["removed"]["turns"] == sessions[1].turns
    assert result["removed"]["items"] >= 1
    status = await daemon.wait_status(lambda s: s["sessions_total"] == 1 and s["forgotten"], what="forgotten")
    assert [f["session_id"] for f in status["forgotten"]] == [other]
    assert not [i for i in await daemon.items(scope="all") if i["session_id"] == other]
    # The other session is untouched.
    assert [i for i in await daemon.items(scope="all") if i["session_id"] == sessions[0].session_id]

    undone = plain(await daemon.command(CMD_FORGET, {"session": other, "undo": True}))
    assert undone == {"session_id": other, "removed": {}, "undone": True}
    store = Store(tmp_path / "db" / "checkpoint.db")
    try:
        assert store.forgotten() == []
    finally:
        store.close()


@pytest.mark.asyncio(loop_scope="function")
async def test_forget_refuses_a_team_session_an_unknown_one_and_a_bad_argument(
    daemon: Daemon, sessions: list[Transcript]
) -> None:
    await daemon.wait_status(lambda s: s["sessions_total"] == 2, what="both sessions read")
    refused = [("team:/repo", "decision records"), ("no-such-session", "no session 'no-such-session'"),
               ({"session": sessions[0].session_id, "undo": "yes"}, "`undo`"), (3, "expected the session id")]
    for argument, says in refused:
        with pytest.raises(JsonRpcInvalidParams, match=says):
            await daemon.command(CMD_FORGET, argument)
    with pytest.raises(JsonRpcInvalidParams, match="is not forgotten"):
        await daemon.command(CMD_FORGET, {"session": sessions[0].session_id, "undo": True})
    status = await daemon.wait_status(lambda s: s["sessions_total"] == 2)
    assert status["forgotten"] == []
