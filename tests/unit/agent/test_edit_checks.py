"""Before an edit: the text the edit would write (an Edit's or MultiEdit's new strings, a Write's
content) against the accepted checks of the workspace, named with the decision and the line; nothing
for an edit that breaks none, for a proposed check, or for a file outside the workspace."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from checkpoint import redact
from checkpoint.agent.edit_checks import edit_findings
from checkpoint.agent.tool_input import answer, edit_target
from checkpoint.answer import ItemDraft
from checkpoint.model import ItemKind, ItemState
from checkpoint.store import Store
from tests.support import item_corpus

REDACTOR = redact.redactor(True)


def _world(tmp: Path, accept: bool = True) -> tuple[Store, Path, str]:
    ws = tmp / "ws"
    (ws / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    store = Store(tmp / "db")
    [turn] = item_corpus.session(store, "s1", str(ws))
    item_corpus.commit(store, "s1", [ItemDraft(kind=ItemKind.DECISION, statement="We use httpx instead of requests",
                                               turn_ids=[turn], check={"uses": "requests"})])
    [item] = store.items()
    if accept:
        store.set_item_state(item.id, ItemState.ACCEPTED)
    return store, ws, item.id


def _call(ws: Path, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"session_id": "agent-1", "cwd": str(ws), "hook_event_name": "PreToolUse", "tool_name": name,
            "tool_input": tool_input}


def test_an_edit_that_adds_import_requests_is_told_the_decision_and_the_line(tmp_path: Path) -> None:
    store, ws, item_id = _world(tmp_path)
    api = str(ws / "src" / "api.py")
    target = edit_target(_call(ws, "Edit", {"file_path": api, "old_string": "import os",
                                            "new_string": "import os\nimport requests"}))
    assert target is not None
    text = edit_findings(store, target, "docs/decisions", REDACTOR)
    assert text is not None and text.startswith("Checkpoint context:")
    assert (f'- src/api.py, line 2 of the new text: `import requests` breaks decision {item_id} '
            '"We use httpx instead of requests"') in text
    out = json.loads(answer(target, text, ask="It would break an accepted decision"))["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask" and out["additionalContext"] == text
    assert "permissionDecision" not in json.loads(answer(target, text))["hookSpecificOutput"]  # never deny


def test_multiedit_and_write_are_checked_and_a_clean_edit_is_not(tmp_path: Path) -> None:
    store, ws, _ = _world(tmp_path)
    api = str(ws / "src" / "api.py")
    multi = edit_target(_call(ws, "MultiEdit", {"file_path": api, "edits": [
        {"old_string": "a", "new_string": "x = 1"}, {"old_string": "b", "new_string": "r = requests.get(u)"}]}))
    assert multi is not None and "`r = requests.get(u)`" in (edit_findings(store, multi, "docs/decisions", REDACTOR)
                                                              or "")
    write = edit_target(_call(ws, "Write", {"file_path": str(ws / "web" / "a.ts"),
                                            "content": 'import x from "requests";\n'}))
    assert write is not None and "web/a.ts, line 1" in (edit_findings(store, write, "docs/decisions", REDACTOR) or "")
    clean = edit_target(_call(ws, "Write", {"file_path": api, "content": "import httpx\n"}))
    assert clean is not None and edit_findings(store, clean, "docs/decisions", REDACTOR) is None
    outside = edit_target(_call(ws, "Write", {"file_path": str(tmp_path / "elsewhere.py"),
                                              "content": "import requests\n"}))
    assert outside is not None and edit_findings(store, outside, "docs/decisions", REDACTOR) is None


def test_a_proposed_check_says_nothing(tmp_path: Path) -> None:
    store, ws, _ = _world(tmp_path, accept=False)
    target = edit_target(_call(ws, "Write", {"file_path": str(ws / "a.py"), "content": "import requests\n"}))
    assert target is not None and edit_findings(store, target, "docs/decisions", REDACTOR) is None


def test_a_codex_patch_is_checked_by_the_lines_it_adds(tmp_path: Path) -> None:
    store, ws, item_id = _world(tmp_path)
    patch = "*** Begin Patch\n*** Update File: src/api.py\n@@\n-import os\n+import requests\n*** End Patch"
    target = edit_target({"session_id": "t1", "cwd": str(ws), "tool_name": "apply_patch",
                          "tool_input": {"command": patch}})
    assert target is not None and item_id in (edit_findings(store, target, "docs/decisions", REDACTOR) or "")
