"""A real, independent editor: Neovim's built-in LSP client starts `checkpoint serve`, receives
checkpoint/status, runs checkpoint.now, and shows every item said in the turn as a diagnostic on the
edited lines, the line's diagnostic float listing each (with who said it and when, given the format
function docs/install.md shows), the hover float one card each with who and when.
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
    said = "We'll use marker-nvim for the cache layer because lookups dominate. Should we add eviction later?"
    t.write(t.assistant(said, edits=[(source, "pass", FUNCTION)]))
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [root], XDG_STATE_HOME=str(tmp_path),
                     CHECKPOINT_NVIM_DIAGNOSTICS="2")
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

    # Both items on the lines the session wrote reach the client, each with its kind as its code.
    decision, question = sorted(result["diagnostics"], key=lambda d: d["severity"])
    assert decision == {
        "lnum": 5, "end_lnum": 6, "col": 0, "end_col": len("    return STORE.get(key)"),
        "severity": 3,  # vim.diagnostic.severity.INFO
        "message": "Decision: We'll use marker-nvim for the cache layer", "source": "checkpoint", "code": "decision",
    }
    assert (question["lnum"], question["end_lnum"], question["severity"], question["code"]) == (5, 6, 4, "question")
    # The line's diagnostic float lists every item on it; the hover float (K) says who said each and when.
    assert result["float"][0] == "Diagnostics:" and sorted(line[3:] for line in result["float"][1:]) == [
        "checkpoint: Decision: We'll use marker-nvim for the cache layer [decision]",
        "checkpoint: Open question: Should we add eviction later? [question]",
    ]
    # With the format function docs/install.md gives, the float says who said each item, where and when.
    said = f"said by the agent in Claude Code session Add a cache getter ({t.session_id[:8]}), 2026-01-05"
    assert result["said_float"][0] == "Diagnostics:", result["said_float"]
    assert sorted(re.sub(r"^\d+\. ", "", line).strip() for line in result["said_float"][1:]) == sorted([
        "Decision: We'll use marker-nvim for the cache layer", f"{said} [decision]",  # Neovim puts the code last
        "Open question: Should we add eviction later?", f"{said} [question]"])
    cards = sorted(result["hover"].split("\n\n---\n\n"))
    assert [c.split("  \n")[0] for c in cards] == [
        "**Decision** We'll use marker-nvim for the cache layer", "**Open question** Should we add eviction later?"]
    said = r"said by the agent in a Claude Code session, (\d+ \w+ ago|yesterday) · new"
    assert all(re.search(said, c) for c in cards)
    assert "*Why:* because lookups dominate." in cards[0]
