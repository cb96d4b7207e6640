"""A real, independent editor: Neovim's built-in LSP client starts `checkpoint serve`, receives
checkpoint/status, runs checkpoint.now, and shows the decision as a diagnostic on the edited lines.
scripts/ensure-neovim.sh (run by scripts/test.sh) installs Neovim >= 0.9."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.lsp_support import SERVER, Transcript, server_env
from tests.support.status_deltas import SessionMirror

LUA = Path(__file__).parents[1] / "support" / "nvim" / "checkpoint_client.lua"
FUNCTION = "def cache_get(key):\n    return STORE.get(key)"


def neovim() -> str:
    """Neovim >= 0.9: on PATH, else the one scripts/ensure-neovim.sh put beside this Python."""
    for candidate in (shutil.which("nvim"), str(Path(sys.executable).with_name("nvim"))):
        if not candidate or not Path(candidate).exists():
            continue
        head = subprocess.run([candidate, "--version"], capture_output=True, text=True, timeout=30).stdout
        found = re.match(r"NVIM v(\d+)\.(\d+)", head)
        if found and (int(found[1]), int(found[2])) >= (0, 9):
            return candidate
    raise AssertionError("Neovim >= 0.9 is needed: run scripts/ensure-neovim.sh (scripts/test.sh does)")


def test_neovim_gets_status_runs_checkpoint_now_and_shows_the_decision(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    source = ws / "src" / "cache.py"
    source.write_text(f'"""Cache module."""\n\nimport os\n\n\n{FUNCTION}\n')
    root = tmp_path / "claude" / "projects"
    t = Transcript(root, ws)
    t.write(t.user("Add a cache getter"))
    t.write(t.assistant("We'll use marker-nvim for the cache layer because lookups dominate.",
                        edits=[(source, "pass", FUNCTION)]))
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root], XDG_STATE_HOME=str(tmp_path))
    out = tmp_path / "nvim.json"
    run = subprocess.run(
        [neovim(), "--headless", "-u", "NONE", "-i", "NONE", "-l", str(LUA), str(out), str(ws), str(source),
         json.dumps(SERVER)],
        env=env, capture_output=True, text=True, timeout=90,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(out.read_text())
    assert result["errors"] == [], result

    mirror = SessionMirror()  # the workspace's sessions, kept from the deltas as docs/protocol.md tells a client
    shown = []
    for sent in result["statuses"]:
        assert mirror.apply(sent["workspace_sessions"])
        shown.append(mirror.full(sent))
    first = next(s for s in shown if s["totals"]["turns"])
    assert first["totals"] == {"turns": t.turns, "captured": 0, "pending": t.turns, "failed": 0}
    assert [s["id"] for s in first["sessions"]] == [t.session_id]
    assert result["statuses"][-1]["totals"]["pending"] == 0
    assert result["now_error"] is None
    assert result["now"]["run"]["captured"] == 1 and result["now"]["totals"]["pending"] == 0

    [diagnostic] = result["diagnostics"]
    code = diagnostic.pop("code")
    assert re.fullmatch(r"[0-9a-f]{12}", code)
    assert diagnostic == {
        "lnum": 5, "end_lnum": 6, "col": 0, "end_col": len("    return STORE.get(key)"),
        "severity": 3,  # vim.diagnostic.severity.INFO
        "message": "Decision: We'll use marker-nvim for the cache layer", "source": "checkpoint",
    }
    assert "*Why:* because lookups dominate." in result["hover"]
