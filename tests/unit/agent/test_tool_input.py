"""The pre-tool hook inputs of three agents, read as the files about to be edited (by each agent's own
reader), and the answer in each one's shape: context only, never a permission decision."""

from __future__ import annotations

import json

from checkpoint.agent.tool_input import EditTarget, answer, edit_target

PATCH = """*** Begin Patch
*** Update File: src/app.py
@@
-x = 1
+x = 2
*** Add File: /w/docs/new.md
+hello
*** End Patch"""


def test_claude_codes_edit_tools_give_their_file() -> None:
    data = {"session_id": "s1", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": "/w/src/app.py", "old_string": "a", "new_string": "b"}}
    assert edit_target(data) == EditTarget(("/w/src/app.py",), "/w", "s1")
    notebook = {**data, "tool_name": "NotebookEdit", "tool_input": {"notebook_path": "nb/a.ipynb"}}
    assert edit_target(notebook) == EditTarget(("/w/nb/a.ipynb",), "/w", "s1")
    assert edit_target({**data, "tool_name": "Bash", "tool_input": {"command": "ls"}}) is None
    assert edit_target({**data, "cwd": "relative"}) is None


def test_an_edit_input_with_only_its_file_path_gives_that_file() -> None:
    """The hook docs' table says `file_path` is what is read: an input with nothing else is still an
    edit of that file (it was silence, with nothing in `status`)."""
    for tool in ("Edit", "Write", "MultiEdit"):
        data = {"session_id": "s1", "cwd": "/w", "tool_name": tool, "tool_input": {"file_path": "src/app.py"}}
        assert edit_target(data) == EditTarget(("/w/src/app.py",), "/w", "s1"), tool
    assert edit_target({"cwd": "/w", "tool_name": "Edit", "tool_input": {"file_path": ""}}) is None


def test_codexs_apply_patch_gives_each_file_it_names() -> None:
    for tool_input in ({"command": PATCH}, PATCH, {"command": ["apply_patch", PATCH]}):
        data = {"session_id": "t1", "cwd": "/w", "tool_name": "apply_patch", "tool_input": tool_input}
        assert edit_target(data) == EditTarget(("/w/src/app.py", "/w/docs/new.md"), "/w", "t1")


def test_copilot_clis_own_format_gives_the_path_and_answers_at_the_top_level() -> None:
    args = json.dumps({"path": "src/app.py", "old_str": "a", "new_str": "b"})
    data = {"timestamp": 1, "cwd": "/w", "toolName": "edit", "toolArgs": args}
    target = edit_target(data)
    assert target == EditTarget(("/w/src/app.py",), "/w", None, "copilot")
    assert edit_target({**data, "toolName": "view"}) is None
    assert json.loads(answer(target, "ctx")) == {"additionalContext": "ctx"}


def test_the_answer_is_context_beside_no_permission_decision() -> None:
    target = EditTarget(("/w/a.py",), "/w", "s1")
    assert json.loads(answer(target, "ctx")) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "ctx"}}
