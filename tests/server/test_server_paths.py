"""Paths an item names resolve against its session's cwd, never the daemon's, and are normalised
(symlinks, `..`) before they meet the workspace folders: a decision from another project that edited
its own README.md stays off this workspace's README.md, this workspace's relative paths get their
diagnostics wherever the daemon was started, an item's file appears once however it is spelled, and
`checkpoint/items {file}` names the items the diagnostics show."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest

from checkpoint.server.protocol import CMD_NOW
from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")


def started_in(directory: Path) -> list[str]:
    return ["sh", "-c", f"cd {shlex.quote(str(directory))} && exec {shlex.quote(sys.executable)} -m checkpoint serve"]


@pytest.mark.parametrize("start", ["ws", "elsewhere"])  # the extension starts it in the workspace folder
async def test_relative_paths_resolve_against_the_sessions_cwd(tmp_path: Path, start: str) -> None:
    ws, other, elsewhere = tmp_path / "ws", tmp_path / "other", tmp_path / "elsewhere"
    for d in (ws / "src", other, elsewhere):
        d.mkdir(parents=True)
    (ws / "README.md").write_text("# ws\n")
    (ws / "src" / "queue.py").write_text("def put(job):\n    JOBS.append(job)\n")
    (other / "README.md").write_text("# other\n")
    (tmp_path / "link").symlink_to(ws)
    root = tmp_path / "claude" / "projects"

    foreign = Transcript(root, other)
    foreign.write(foreign.user("Document the other project"))
    foreign.write(foreign.assistant("We'll use marker-0the for the other readme because it is shorter.",
                                    edits=[(Path("README.md"), "# x", "# other")]))
    mine = Transcript(root, ws)
    mine.write(mine.user("Write the queue"))
    mine.write(mine.assistant(
        "We'll use marker-0a11 for the queue because jobs arrive in bursts.",
        edits=[(Path("src/queue.py"), "pass", "def put(job):\n    JOBS.append(job)"),
               (Path("src/../src/queue.py"), "pass", "def put(job):\n    JOBS.append(job)"),
               (tmp_path / "link" / "src" / "queue.py", "pass", "def put(job):\n    JOBS.append(job)")]))

    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root])
    daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual", "scope": "all"}},
                                command=started_in(tmp_path / start))
    try:
        await daemon.command(CMD_NOW)
        queue = (ws / "src" / "queue.py").as_uri()
        await daemon.wait_diagnostics(queue, lambda d: len(d) >= 1)
        await asyncio.sleep(0.5)  # let any later publication arrive too
        diags = [ds for _, u, ds in daemon.record.diagnostics if u == queue][-1]
        mine_items = [i for i in await daemon.items(scope="all") if "marker-0a11" in i["statement"]]
        assert len(mine_items) == 1, mine_items
        assert [d.data["item_id"] for d in diags] == [mine_items[0]["id"]]  # type: ignore[index]  # once, not once per spelling
        assert diags[0].range.start.line == 0 and diags[0].range.end.line == 1  # anchored on the lines written
        readme = (ws / "README.md").as_uri()
        assert not [u for _, u, ds in daemon.record.diagnostics if u == readme and ds], "another project's item"
        # checkpoint/items {file} agrees: the same items for the same file, however the file is named
        for spelling in (queue, (tmp_path / "link" / "src" / "queue.py").as_uri()):
            assert [i["id"] for i in await daemon.items(scope="all", file=spelling)] == [mine_items[0]["id"]]
        assert [i["statement"] for i in await daemon.items(scope="all", file=readme)] == []
    finally:
        await daemon.stop()
