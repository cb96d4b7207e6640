"""The daemon answers the editor while an extraction is under way (scans, runs and SQLite work run
on worker threads, never on the event loop), and a run the editor stops waiting for still finishes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import pytest
from lsprotocol import types

from checkpoint.server.protocol import CMD_NOW
from tests.support.fake_anthropic import FakeAnthropic
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
    with FakeAnthropic(latency=0.6) as fake:  # each chunk takes 0.6 s to answer
        env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root], CHECKPOINT_CHUNK_TOKENS="300",
                         CHECKPOINT_EXTRACTOR="anthropic", **fake.env())
        daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual", "concurrency": 1}})
        try:
            run = asyncio.wrap_future(daemon.client.protocol.send_request(
                types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(command=CMD_NOW, arguments=[]),
                msg_id="now-1"))
            await daemon.wait_status(lambda s: s["running"], timeout=30, what="a run under way")
            slowest = 0.0
            for _ in range(5):
                started = time.monotonic()
                await daemon.items()
                await daemon.client.text_document_hover_async(types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=(ws / "a.py").as_uri()),
                    position=types.Position(0, 0)))
                slowest = max(slowest, time.monotonic() - started)
                assert not run.done()  # still extracting while it answered
                await asyncio.sleep(0.1)
            assert slowest < 0.5
            # The editor gives up waiting: the run still finishes, ends its progress, and says so.
            daemon.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="now-1"))
            done = await daemon.wait_status(lambda s: s["last_run"] and not s["running"], timeout=30)
            assert done["last_run"]["captured"] == 3 and done["totals"]["pending"] == 0
            ends = [r for r in daemon.client.progress_reports.values() if isinstance(r[-1], types.WorkDoneProgressEnd)]
            assert len(ends) == 1
            with contextlib.suppress(Exception):
                await asyncio.wait_for(run, 5)  # answered or cancelled: either is fine
        finally:
            await daemon.stop()
