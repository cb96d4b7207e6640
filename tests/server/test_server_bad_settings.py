"""A bad value for one of the daemon's enumerated settings (scope, extraction, a severity) is said once
in the editor (a warning naming the setting, the bad value, the allowed values and the default kept)
and only that setting keeps its default: the others the editor sent still apply. (The old code dropped
every daemon setting when one was bad, so a misspelt scope turned `extraction: manual` back into
auto, and an unknown severity kind was taken without a word.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")

SCOPE = ("Checkpoint: ignoring the editor's daemon settings: scope: unknown value (allowed: workspace, all),"
         " got 'everywhere'; keeping workspace")
KIND = ("Checkpoint: ignoring the editor's daemon settings: severity: unknown kind 'decisions' (allowed: decision,"
        " constraint, question)")
LEVEL = ("Checkpoint: ignoring the editor's daemon settings: severity: unknown severity 'loud' for question"
         " (allowed: error, warning, information, hint, off); keeping hint")


async def test_a_bad_enumerated_setting_is_said_once_and_only_it_keeps_its_default(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    root = tmp_path / "claude" / "projects"
    t = Transcript(root, ws)
    t.write(t.user("We'll use marker-5c0e for the queue."))
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root])
    options = {"checkpoint": {"extraction": "manual", "scope": "everywhere",
                              "severity": {"decisions": "error", "question": "loud", "constraint": "warning"}}}
    daemon = await Daemon.start(env, [ws], options)
    try:
        await daemon.wait_for(lambda: all(s in daemon.shown() for s in (SCOPE, KIND, LEVEL)), what="the refusals")
        assert all(m.type == types.MessageType.Warning for m in daemon.client.messages if "ignoring" in m.message)
        # manual is kept despite the bad scope beside it
        await daemon.wait_for(lambda: any("started" in m and "scope workspace; extraction manual" in m
                                          for m in daemon.logged()), what="the settings logged, extraction manual")

        # The same settings again: nothing more said; a second bad value: said too.
        daemon.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=options))
        daemon.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"checkpoint": {"extraction": "sometimes"}}))
        await daemon.wait_for(lambda: any("extraction: unknown value (allowed: auto, manual), got 'sometimes';"
                                          " keeping auto" in m for m in daemon.shown()), what="the second refusal")
        assert [daemon.shown().count(s) for s in (SCOPE, KIND, LEVEL)] == [1, 1, 1]
    finally:
        await daemon.stop()
