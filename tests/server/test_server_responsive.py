"""The daemon answers the editor while an extraction is under way (scans, runs and SQLite work run
on worker threads, never on the event loop), and a run the editor stops waiting for still finishes."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path

import pytest
from lsprotocol import types

from checkpoint.server.protocol import CMD_NOW
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest, default_responder
from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")


async def test_requests_answered_while_a_slow_model_extracts(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    root = tmp_path / "claude" / "projects"
    t = Transcript(root, ws)
    filler = " ".join(["The worker drains the queue in order and reports every job it finished."] * 8)
    for i in range(3):
        t.write(t.user(f"We'll use marker-{i:04x} for part {i}. {filler}"))
    # The model answers only when the test says so: the requests below are answered while a chunk's
    # request is certainly out, however loaded the machine (no clock decides it).
    asked, answer = threading.Event(), threading.Event()

    def held(request: MessageRequest) -> list[dict[str, object]]:
        asked.set()
        answer.wait(60)
        return default_responder(request)

    with FakeAnthropic(responder=held) as fake:
        env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root], CHECKPOINT_CHUNK_TOKENS="300",
                         CHECKPOINT_EXTRACTOR="anthropic", **fake.env())
        daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual", "concurrency": 1}})
        try:
            run = asyncio.wrap_future(daemon.client.protocol.send_request(
                types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(command=CMD_NOW, arguments=[]),
                msg_id="now-1"))
            await daemon.wait_status(lambda s: s["running"], timeout=60, what="a run under way")
            assert await asyncio.to_thread(asked.wait, 60), "no request reached the model"
            for _ in range(5):
                await daemon.items()
                await daemon.client.text_document_hover_async(types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=(ws / "a.py").as_uri()),
                    position=types.Position(0, 0)))
                assert not run.done()  # answered while the extraction waits on the model
            answer.set()
            # The editor gives up waiting: the run still finishes, ends its progress, and says so.
            daemon.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="now-1"))
            done = await daemon.wait_status(lambda s: s["last_run"] and not s["running"], timeout=30)
            assert done["last_run"]["captured"] == 3 and done["totals"]["pending"] == 0
            ends = [r for r in daemon.client.progress_reports.values() if isinstance(r[-1], types.WorkDoneProgressEnd)]
            assert len(ends) == 1
            with contextlib.suppress(Exception):
                await asyncio.wait_for(run, 5)  # answered or cancelled: either is fine
        finally:
            answer.set()
            await daemon.stop()
