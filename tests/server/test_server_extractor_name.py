"""An unknown extractor name in the editor's settings is refused by the daemon as any bad setting
of the editor is: shown once (window/showMessage, a warning) with the setting, the bad value and the
known names, and the editor's engine settings are not applied; the run uses the layer below and says
which extractor it is. It never runs under the bad name, nor silently under another. (The CLI's
paths, and `checkpoint serve` with a bad name in its environment, are tests/e2e/test_extractor_name.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from checkpoint.extract.registry import NAMES
from checkpoint.server.protocol import CMD_NOW
from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")

REFUSED = ("Checkpoint: ignoring the editor's engine settings: options: extractor: unknown extractor {!r} (known: "
           + ", ".join(NAMES) + "; leave it unset to choose automatically)")


async def test_an_unknown_extractor_in_the_editors_settings_is_said_and_not_used(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    root = tmp_path / "claude" / "projects"
    t = Transcript(root, ws)
    t.write(t.user("We'll use marker-0a1b for the message bus."))
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root])  # CHECKPOINT_EXTRACTOR=heuristic
    daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual", "extractor": "bogus"}})
    try:
        await daemon.wait_for(lambda: REFUSED.format("bogus") in daemon.shown(), what="the refusal shown")
        [shown] = [m for m in daemon.client.messages if "unknown extractor" in m.message]
        assert shown.type == types.MessageType.Warning
        assert not any("extractor bogus" in m for m in daemon.logged())
        result = await daemon.command(CMD_NOW)
        assert result["run"]["extractor"] == "heuristic" and result["run"]["captured"] == 1
        await daemon.wait_for(lambda: any("Using the offline heuristic" in m for m in daemon.logged()),
                              what="which extractor ran, said")

        # Changed later to another unknown name: said too; to a known one: taken, nothing more said.
        daemon.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"checkpoint": {"extraction": "manual", "extractor": "claude"}}))
        await daemon.wait_for(lambda: REFUSED.format("claude") in daemon.shown(), what="the second refusal")
        daemon.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"checkpoint": {"extraction": "manual", "extractor": "anthropic"}}))
        await daemon.wait_for(lambda: any("extractor anthropic" in m for m in daemon.logged()),
                              what="the settings logged with the known name")
        assert sum("unknown extractor" in m for m in daemon.shown()) == 2
    finally:
        await daemon.stop()
