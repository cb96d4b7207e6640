"""The command's entry (checkpoint.startup): its imports are made with the cyclic collector held
back and frozen after; the collector's own state is left as it was found. The agent-facing commands
(the hooks, `checkpoint mcp`) go straight to their front end and load only what they use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checkpoint.answer import ItemDraft
from checkpoint.model import ItemKind
from checkpoint.store import Store
from tests.support import item_corpus

PROBE = """
import gc, sys
if sys.argv[1] == "off":
    gc.disable()
from checkpoint.long_lived import long_lived_imports
with long_lived_imports():
    during = gc.isenabled()
    import checkpoint.pipeline
print(during, gc.isenabled(), gc.get_freeze_count() > 10_000)
"""


@pytest.mark.parametrize(("before", "after"), [("on", "True"), ("off", "False")])
def test_imports_wait_for_no_collection_and_are_frozen_after(before: str, after: str) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, before], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", after, "True"]


HOOK_PROBE = """
import gc, sys
import checkpoint.agent.hooks
if sys.argv[1] == "off":
    gc.disable()
checkpoint.agent.hooks.main = lambda argv: print(gc.isenabled()) or 0
from checkpoint.startup import main
main(["hook", "stop"])
print(gc.isenabled())
"""


@pytest.mark.parametrize(("before", "after"), [("on", "True"), ("off", "False")])
def test_a_hook_runs_with_no_collection_and_leaves_the_collector_as_it_was(before: str, after: str) -> None:
    done = subprocess.run([sys.executable, "-c", HOOK_PROBE, before], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", after]


def test_the_command_runs_through_the_entry() -> None:
    done = subprocess.run([sys.executable, "-m", "checkpoint", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("checkpoint ")


# What the agent-facing commands leave unloaded (each measured with `python -X importtime`): the
# CLI and its pipeline, the extractors, the MCP SDK and pydantic, the daemon's LSP stack; the held-item
# patterns (compiled on import; judged only while the holds' back-fill is due) and shutil (a readiness
# check's, with bz2 and lzma).
NOT_FOR_HOOKS = ("checkpoint.cli", "checkpoint.pipeline", "checkpoint.runner", "checkpoint.server",
                 "checkpoint.extract.held", "checkpoint.extract.anthropic", "checkpoint.extract.heuristic",
                 "checkpoint.agent.mcp_server", "mcp", "pydantic", "anthropic", "pygls", "lsprotocol", "shutil")
NOT_FOR_MCP = ("checkpoint.cli", "checkpoint.pipeline", "checkpoint.runner", "checkpoint.server",
               "checkpoint.extract.anthropic", "pygls", "lsprotocol")

ENTRY_PROBE = """
import json, sys
from checkpoint.startup import main
code = main(sys.argv[1:])
print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)
"""


def _loaded(names: tuple[str, ...], modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in names)]


def _run_entry(args: list[str], stdin: str, tmp_path: Path) -> tuple[str, list[str]]:
    """`checkpoint ARGS` through the entry in a fresh interpreter: its stdout, and every module loaded."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "CHECKPOINT_DB": str(tmp_path / "checkpoint.db"), "CHECKPOINT_SOURCES": str(tmp_path / "none")}
    done = subprocess.run([sys.executable, "-c", ENTRY_PROBE, *args], input=stdin, env=env, capture_output=True,
                          text=True, timeout=60)
    code, modules = json.loads(done.stderr.strip().splitlines()[-1])
    assert code == 0, done.stderr
    return done.stdout, modules


@pytest.fixture
def workspace_with_an_item(tmp_path: Path) -> Path:
    """A database with a decision about `ws/src/app.py`, recorded in a session run in `ws`."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def cache_get(key):\n    return STORE.get(key)\n")
    store = Store(tmp_path / "checkpoint.db")
    [turn] = item_corpus.session(store, "earlier", str(ws))
    item_corpus.commit(store, "earlier", [ItemDraft(kind=ItemKind.DECISION, statement="The cache stays in SQLite.",
                                                    turn_ids=[turn], files=["src/app.py"])])
    store.close()
    return ws


def test_the_hooks_load_neither_the_cli_nor_what_only_other_commands_use(tmp_path: Path,
                                                                        workspace_with_an_item: Path) -> None:
    ws = workspace_with_an_item
    start = json.dumps({"session_id": "s1", "cwd": str(ws), "hook_event_name": "SessionStart", "source": "startup"})
    edit = json.dumps({"session_id": "s1", "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_name": "Edit",
                       "tool_input": {"file_path": str(ws / "src" / "app.py"), "old_string": "a", "new_string": "b"}})
    _run_entry(["hook", "session-start"], start, tmp_path)  # the first builds detect-secrets' cached table
    for event, stdin in (("session-start", start), ("pre-edit", edit)):
        out, modules = _run_entry(["hook", event], stdin, tmp_path)
        assert "The cache stays in SQLite." in json.loads(out)["hookSpecificOutput"]["additionalContext"], event
        assert "checkpoint.store" in modules
        assert _loaded(NOT_FOR_HOOKS, modules) == [], event


def test_the_mcp_server_starts_without_the_cli(tmp_path: Path) -> None:
    """`checkpoint mcp` goes from the entry to the MCP server: the agent waits for its first answer."""
    _, modules = _run_entry(["mcp"], "", tmp_path)
    assert "checkpoint.agent.mcp_server" in modules
    assert _loaded(NOT_FOR_MCP, modules) == []
