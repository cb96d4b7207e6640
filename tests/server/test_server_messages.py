"""What the user must act on reaches the editor once (window/showMessage), not on every retry or
rescan; everything is logged (window/logMessage); an API key never leaves the daemon."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from checkpoint.server.protocol import CMD_NOW
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")

SECRET = "sk-ant-api03-" + "Zq7" * 20  # the shape of a real key, so redaction by shape is tested too


def setup_workspace(tmp_path: Path) -> tuple[Path, Path, Transcript]:
    ws = tmp_path / "ws"
    ws.mkdir()
    root = tmp_path / "claude" / "projects"
    t = Transcript(root, ws)
    t.write(t.user("We'll use marker-msg for the message bus.") + t.assistant("Going with it."))
    return ws, root, t


async def test_refused_chunk_shown_once_logged_every_time_key_never_said(tmp_path: Path) -> None:
    ws, root, t = setup_workspace(tmp_path)
    with FakeAnthropic() as fake:
        fake.set_rates({"refusal": 1.0}, seed=1)
        env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root],
                         CHECKPOINT_EXTRACTOR="anthropic", ANTHROPIC_BASE_URL=fake.base_url,
                         ANTHROPIC_API_KEY=SECRET)
        daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual"}})
        try:
            first = await daemon.command(CMD_NOW)
            second = await daemon.command(CMD_NOW)
            for result in (first, second):
                assert result["run"]["failed"] == 1 and result["run"]["captured"] == 0
                assert "refus" in result["run"]["failures"][0]["cause"]
                assert result["totals"]["failed"] == t.turns
            status = await daemon.wait_status(lambda s: s["last_run"] and s["last_run"]["failed"] == 1)
            assert "refus" in (status["last_error"] or "")
            assert "refus" in status["sessions"][0]["causes"][0]
            await daemon.wait_for(lambda: sum("refus" in m for m in daemon.logged()) >= 2, what="two logs")
            shown = [m for m in daemon.client.messages if "refus" in m.message]
            assert len(shown) == 1 and shown[0].type == types.MessageType.Warning
            said = daemon.shown() + daemon.logged()
            assert not any(SECRET in m or SECRET[:20] in m for m in said)
        finally:
            await daemon.stop()
        assert fake.message_requests  # the daemon did talk to the (fake) API


async def test_missing_api_key_and_unreadable_transcript_shown_once(tmp_path: Path) -> None:
    ws, root, _ = setup_workspace(tmp_path)
    (root / "-broken").mkdir()
    (root / "-broken" / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")  # listed, cannot be read
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root], CHECKPOINT_EXTRACTOR="")
    daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual", "rescanSeconds": 0.2}})
    try:
        for _ in range(2):
            result = await daemon.command(CMD_NOW)  # a full scan and a run, each time
            assert result["run"]["extractor"] == "heuristic"
        await asyncio.sleep(1.0)  # and about five periodic rescans
        unreadable = [m for m in daemon.shown() if "gone.jsonl" in m]
        assert len(unreadable) == 1 and "cannot stat" in unreadable[0]
        assert sum("gone.jsonl" in m for m in daemon.logged()) == 1
        no_key = [m for m in daemon.shown() if "ANTHROPIC_API_KEY" in m]
        assert len(no_key) == 1 and "heuristic" in no_key[0]
    finally:
        await daemon.stop()
