"""The daemon answers the editor while an extraction is under way: scans, runs and SQLite work run
on worker threads, never on the event loop."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types

from checkpoint.server.protocol import CMD_NOW
from fakes.fake_anthropic import FakeAnthropic
from lsp_support import Daemon, Transcript, server_env

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
            run = asyncio.ensure_future(daemon.command(CMD_NOW))
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
            result = await run
            assert result["run"]["captured"] == 3
        finally:
            await daemon.stop()
