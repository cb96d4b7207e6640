"""A decision made in a session of each of the five agents is a diagnostic on the lines the agent's own
edit tool wrote, end to end: the session as the real CLI stored it (tests/support/edit_fixtures.py;
Claude Code's Write, Codex's apply_patch, Gemini CLI's write_file, Copilot CLI's create, opencode's
write), laid out under a temp HOME where the agent keeps it, read and extracted (heuristic, offline)
by the real daemon, published for the file in the workspace.

The sessions were made in edit_fixtures.PROJECT; here that path is replaced by the test's workspace
in everything the agent stored (and in Claude Code's project folder name, made from it)."""

from __future__ import annotations

import sqlite3
import tarfile
from dataclasses import dataclass
from pathlib import Path

import attrs
import pytest
from lsprotocol import types

from checkpoint.server.features.diagnostics.cards import AGENT_NAMES
from checkpoint.server.protocol import CMD_NOW, EDITOR_OPEN_TURN, command_link
from tests.support.edit_fixtures import EDITS, PROJECT
from tests.support.lsp_support import Daemon, server_env, slug

pytestmark = pytest.mark.asyncio(loop_scope="function")
DATA = Path(__file__).resolve().parents[1] / "data"
BEFORE = '"""A module the agent added to."""\n\nimport os\n\n\n'  # 5 lines above what the agent wrote
AFTER = "\n\n# more code below, not the agent's\n"


@dataclass(frozen=True)
class Layout:
    archive: Path
    stored: str  # the agent's folder in the archive
    home: str  # where the agent keeps it, under HOME


LAYOUTS = {
    "claude": Layout(DATA / "real_cli" / "edits-claude-codex.tar.gz", "claude/projects", ".claude/projects"),
    "codex": Layout(DATA / "real_cli" / "edits-claude-codex.tar.gz", "codex/sessions", ".codex/sessions"),
    "gemini": Layout(DATA / "real_cli" / "gemini-edits.tar.gz", "gemini", ".gemini"),
    "copilot": Layout(DATA / "real_cli" / "copilot-edits.tar.gz", "copilot/session-state", ".copilot/session-state"),
    "opencode": Layout(DATA / "opencode" / "edits.tar.gz", "edits/opencode", ".local/share/opencode"),
}


def moved(tree: Path, workspace: Path) -> None:
    """Every file under `tree` as if the session had been made in `workspace`."""
    old, new = str(PROJECT), str(workspace)
    for path in sorted(tree.rglob("*"), key=lambda p: len(p.parts), reverse=True):  # files before folders
        if path.is_file() and path.suffix == ".db":
            _replaced_in_database(path, old, new)
        elif path.is_file():
            path.write_bytes(path.read_bytes().replace(old.encode(), new.encode()))
        if slug(PROJECT) in path.name:
            path.rename(path.with_name(path.name.replace(slug(PROJECT), slug(workspace))))


def _replaced_in_database(db: Path, old: str, new: str) -> None:
    """opencode's database: `old` replaced in every text column of every table."""
    conn = sqlite3.connect(db)
    try:
        with conn:
            for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                for name, kind in conn.execute(f"SELECT name, type FROM pragma_table_info('{table}')").fetchall():
                    if kind.upper() == "TEXT":
                        conn.execute(f'UPDATE "{table}" SET "{name}" = replace("{name}", ?, ?)', (old, new))
    finally:
        conn.close()


def laid_out(tmp_path: Path, agent: str, workspace: Path) -> Path:
    """The agent's session under tmp_path/home as the agent keeps it; its folder there."""
    layout = LAYOUTS[agent]
    with tarfile.open(layout.archive) as tar:
        tar.extractall(tmp_path / "archive", filter="data")
    root = tmp_path / "home" / layout.home
    root.parent.mkdir(parents=True)
    (tmp_path / "archive" / layout.stored).rename(root)
    moved(root, workspace)
    return root / "tmp" if agent == "gemini" else root


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest.mark.parametrize("agent", sorted(EDITS))
async def test_a_decision_is_a_diagnostic_on_the_lines_the_agent_wrote(tmp_path: Path, agent: str) -> None:
    edit = EDITS[agent]
    workspace = tmp_path / "project"
    (workspace / "src").mkdir(parents=True)
    (workspace / edit.path).write_text(BEFORE + edit.text + AFTER)
    source = laid_out(tmp_path, agent, workspace)
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [source])
    daemon = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual"}})
    try:
        await daemon.command(CMD_NOW)
        uri = (workspace / edit.path).as_uri()
        [diag] = await daemon.wait_diagnostics(uri, lambda d: len(d) == 1, timeout=30)
        [item] = await daemon.items()
        written = edit.text.rstrip("\n").splitlines()
        assert isinstance(diag.data, dict)
        said = diag.data["said"]
        assert attrs.evolve(diag, related_information=None) == types.Diagnostic(
            range=types.Range(types.Position(5, 0), types.Position(5 + len(written) - 1, utf16_len(written[-1]))),
            message=f"Decision: {edit.said}",
            severity=types.DiagnosticSeverity.Information,
            code="decision",
            code_description=types.CodeDescription(href=command_link(EDITOR_OPEN_TURN, item["id"])),
            source="checkpoint",
            data={"item_id": item["id"], "session_id": item["session_id"], "kind": "decision", "mark": "edited",
                  "said": said},
        )
        # who said it, in which session, for an editor's float (Neovim's, docs/install.md)
        assert said.startswith(f"said by the agent in {AGENT_NAMES[agent]} session ")
        # where it was said: a line of the agent's own session files
        assert [r.location.uri.startswith(source.as_uri()) for r in diag.related_information or ()] == [True]
        assert [u for u, d in daemon.client.diagnostics.items() if d] == [uri]
    finally:
        await daemon.stop()
