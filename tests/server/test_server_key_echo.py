"""The daemon and a gateway that quotes the key in its errors: through pytest-lsp, with every byte
the daemon writes to the client (stdout) and to its log (stderr) captured by a tee, the key is in no
LSP message (status notifications, the checkpoint.now result, logMessage, showMessage), not on
stderr, not in the database or its WAL."""

from __future__ import annotations

import os
import secrets
import shlex
import sys
from pathlib import Path

import pytest

from checkpoint.server.protocol import CMD_NOW
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")


async def test_a_key_quoted_by_the_api_never_reaches_the_editor(tmp_path: Path) -> None:
    key = "gw-" + secrets.token_hex(24)  # no known key shape: only its value can find it
    ws = tmp_path / "ws"
    ws.mkdir()
    root = tmp_path / "claude" / "projects"
    t = Transcript(root, ws)
    t.write(t.user("We'll use marker-echo for the message bus.") + t.assistant("Going with it."))
    db = tmp_path / "db" / "checkpoint.db"
    out, err = tmp_path / "stdout.bytes", tmp_path / "stderr.bytes"
    serve = shlex.join([sys.executable, "-m", "checkpoint", "serve"])
    command = ["sh", "-c", f"{serve} 2>{shlex.quote(str(err))} | tee {shlex.quote(str(out))}"]
    with FakeAnthropic(echo_key=True) as fake:
        env = server_env(tmp_path / "home", db, [root], CHECKPOINT_EXTRACTOR="anthropic",
                         ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY=key,
                         CHECKPOINT_MODEL="claude-no-such-model", CHECKPOINT_LOG_LEVEL="DEBUG",
                         PYTHONPATH=os.environ.get("PYTHONPATH", ""))  # to test another checkout
        daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual"}}, command=command)
        try:
            result = await daemon.command(CMD_NOW)
            assert result["run"]["failed"] == 1
            cause = result["run"]["failures"][0]["cause"]
            assert "model not found" in cause and "authenticated with key" in cause  # said, without the key
            status = await daemon.wait_status(lambda s: s["last_run"] and s["last_run"]["failed"] == 1)
            assert "model not found" in (status["last_error"] or "")
            await daemon.wait_for(lambda: any("model not found" in m for m in daemon.logged()), what="a log")
        finally:
            await daemon.stop()
        assert any(key in str(r.response) for r in fake.requests)  # the gateway did quote it
    said = " ".join([*daemon.shown(), *daemon.logged(), str(daemon.statuses), str(result)])
    traffic, log = out.read_bytes(), err.read_bytes()
    assert b"model not found" in traffic
    stored = b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())
    for secret in (key, key[:16]):
        assert secret not in said
        assert secret.encode() not in traffic
        assert secret.encode() not in log
        assert secret.encode() not in stored
