"""The turn-text owner (sources.turn_text): what it writes, what it reads back; the edits each
reader's edit tools give, and the edits read back from a stored turn's text (the back-fill)."""

from __future__ import annotations

import json

import pytest

from checkpoint.model import FileEdit
from checkpoint.sources import READERS, turn_text
from checkpoint.sources.stored_edits import stored_edits

PATCH = "\n".join([
    "*** Begin Patch", "*** Update File: src/q.py", "@@ class Queue:", " def put(self, job):",
    "-    pass", "+    self.jobs.append(job)", "@@", "+def size(self):", "+    return len(self.jobs)",
    "*** Add File: src/new.py", "+NEW = True", "*** Delete File: src/old.py",
    "*** Update File: src/a.py", "*** Move to: src/b.py", "@@", "-x = 1", "+x = 2", "*** End Patch",
])
PATCHED = (
    FileEdit("/repo/src/q.py", "def put(self, job):\n    self.jobs.append(job)"),
    FileEdit("/repo/src/q.py", "def size(self):\n    return len(self.jobs)"),
    FileEdit("/repo/src/new.py", "NEW = True"),
    FileEdit("/repo/src/b.py", "x = 2"),
)


@pytest.mark.unit
def test_what_the_owner_writes() -> None:
    assert turn_text.tool_call("Edit", '{"a":1}') == '[tool Edit] {"a":1}'
    assert turn_text.tool_call("bash", "ls", by_user=True) == "[tool bash (run by the user)] ls"
    assert turn_text.tool_result("ok") == "[tool result]\nok"
    assert turn_text.tool_result("no", "error") == "[tool result (error)]\nno"
    assert turn_text.tool_error("boom") == "[tool error]\nboom"
    assert turn_text.thinking("hm") == "(thinking) hm"
    assert turn_text.reasoning("hm") == "(reasoning) hm"


@pytest.mark.unit
def test_where_what_was_not_said_starts() -> None:
    said = "We'll use SQLite.\n"
    assert turn_text.not_said_from(said + turn_text.thinking("why")) == len(said)
    assert turn_text.not_said_from(said + turn_text.tool_call("Bash", "{}")) == len(said)
    assert turn_text.not_said_from("We'll use SQLite. (thinking) inline is said") is None
    assert turn_text.not_said_from(said) is None


@pytest.mark.unit
def test_tool_calls_read_back_skip_results_and_keep_multi_line_arguments() -> None:
    text = "\n".join([
        "Let me look.", turn_text.tool_call("Bash", '{"command":"ls"}'),
        turn_text.tool_call("apply_patch", "*** Begin Patch\n*** End Patch"),
        turn_text.tool_result("a\nb"), turn_text.tool_call("edit", "{}", by_user=True), turn_text.tool_error("x"),
    ])
    assert list(turn_text.tool_calls(text)) == [
        ("Bash", '{"command":"ls"}'), ("apply_patch", "*** Begin Patch\n*** End Patch"), ("edit", "{}")]
    assert list(turn_text.tool_calls("no calls here")) == []


@pytest.mark.unit
@pytest.mark.parametrize(("agent", "name", "arguments", "expected"), [
    ("claude", "Edit", {"file_path": "/w/a.py", "old_string": "x", "new_string": "y = 1\nz = 2"},
     (FileEdit("/w/a.py", "y = 1\nz = 2"),)),
    ("claude", "MultiEdit", {"file_path": "b.py", "edits": [{"old_string": "a", "new_string": "first()"},
                                                           {"old_string": "b", "new_string": "second()"}]},
     (FileEdit("/w/b.py", "first()"), FileEdit("/w/b.py", "second()"))),
    ("claude", "Write", {"file_path": "/w/c.py", "content": "print('hi')\n"}, (FileEdit("/w/c.py", "print('hi')\n"),)),
    ("claude", "NotebookEdit", {"notebook_path": "n.ipynb", "cell_id": "c1", "new_source": "x = 1"},
     (FileEdit("/w/n.ipynb", "x = 1"),)),
    ("claude", "Bash", {"command": "ls"}, ()),
    ("gemini", "write_file", {"file_path": "n.md", "content": "# Notes\n"}, (FileEdit("/w/n.md", "# Notes\n"),)),
    ("gemini", "replace", {"file_path": "/w/n.md", "old_string": "a", "new_string": "b"}, (FileEdit("/w/n.md", "b"),)),
    ("gemini", "read_file", {"file_path": "/w/n.md"}, ()),
    ("copilot", "create", {"path": "/w/n.md", "file_text": "# Notez\n"}, (FileEdit("/w/n.md", "# Notez\n"),)),
    ("copilot", "edit", {"path": "/w/n.md", "old_str": "z", "new_str": "s"}, (FileEdit("/w/n.md", "s"),)),
    ("copilot", "str_replace_editor", {"command": "str_replace", "path": "n.md", "old_str": "z", "new_str": "s"},
     (FileEdit("/w/n.md", "s"),)),
    ("copilot", "write", {"path": "/w/n.md", "content": "all\n"}, (FileEdit("/w/n.md", "all\n"),)),
    ("copilot", "bash", {"command": "cat n.md"}, ()),
    ("opencode", "write", {"filePath": "/w/n.md", "content": "x\n"}, (FileEdit("/w/n.md", "x\n"),)),
    ("opencode", "edit", {"filePath": "/w/n.md", "oldString": "x", "newString": "y"}, (FileEdit("/w/n.md", "y"),)),
    ("opencode", "multiedit", {"filePath": "/w/n.md", "edits": [{"oldString": "x", "newString": "y"},
                                                                {"oldString": "p", "newString": "q"}]},
     (FileEdit("/w/n.md", "y"), FileEdit("/w/n.md", "q"))),
    ("opencode", "read", {"filePath": "/w/n.md"}, ()),
])
def test_each_readers_edit_tools_give_what_they_wrote(
    agent: str, name: str, arguments: object, expected: tuple[FileEdit, ...]
) -> None:
    assert READERS[agent].edits_of_call(name, arguments, "/w") == expected


@pytest.mark.unit
@pytest.mark.parametrize(("agent", "name", "arguments"), [
    ("codex", "apply_patch", PATCH), ("codex", "shell", {"command": ["apply_patch", PATCH]}),
    ("copilot", "apply_patch", PATCH), ("opencode", "apply_patch", {"patchText": PATCH}),
    ("opencode", "patch", {"patchText": PATCH}),
])
def test_apply_patch_gives_the_new_side_of_each_hunk(agent: str, name: str, arguments: object) -> None:
    assert READERS[agent].edits_of_call(name, arguments, "/repo") == PATCHED


@pytest.mark.unit
def test_edits_read_back_from_a_stored_turns_text() -> None:
    """A turn stored before edits were: its text's tool calls, given to its agent's reader."""
    claude = "\n".join([
        "Let me change it.",
        turn_text.tool_call("Edit", json.dumps({"file_path": "/w/a.py", "old_string": "x", "new_string": "y = 1"})),
        turn_text.tool_call("Write", json.dumps({"file_path": "c.py", "content": "print('hi')\n"})),
        turn_text.tool_call("Bash", json.dumps({"command": "ls"})),
    ])
    assert stored_edits("claude", claude, "/w") == (FileEdit("/w/a.py", "y = 1"), FileEdit("/w/c.py", "print('hi')\n"))
    assert stored_edits("codex", turn_text.tool_call("apply_patch", PATCH), "/repo") == PATCHED
    shell = turn_text.tool_call("shell", json.dumps({"command": ["apply_patch", PATCH]}))
    assert stored_edits("codex", shell, "/repo") == PATCHED
    assert stored_edits("nobody", claude, "/w") == ()


@pytest.mark.unit
def test_tool_output_is_cut_to_its_head_with_its_size_and_kind() -> None:
    body = "\n".join(f"line {n} of the output" for n in range(200))  # 4,389 characters, 200 lines
    with turn_text.tool_output_head(100) as cut:
        text = turn_text.tool_result(body)
        error = turn_text.tool_error(failure := '{"error": "' + "x " * 100 + '"}')
        short = turn_text.tool_result("short output")
    head, note = text.removeprefix("[tool result]\n").rsplit("\n", 1)
    assert body.startswith(head) and 90 < len(head) <= 100 and body[len(head)].isspace()  # ended at a space
    left_out = len(body) - len(head)
    assert note == (f"(tool output cut by policy: {left_out:,} of {len(body):,} characters left out;"
                    " 200 lines of text)")
    assert error.startswith('[tool error]\n{"error": "x x') and error.endswith("1 line of JSON)")
    assert short == "[tool result]\nshort output"  # within the head: kept whole, nothing counted
    error_head = error.removeprefix("[tool error]\n").rsplit("\n", 1)[0]
    assert cut.results == 2 and cut.chars == left_out + len(failure) - len(error_head)
    # Outside the policy's scope, and with head 0, a result is kept whole.
    assert turn_text.tool_result(body) == "[tool result]\n" + body
    with turn_text.tool_output_head(0) as whole:
        assert turn_text.tool_result(body) == "[tool result]\n" + body
    assert whole.chars == 0 and turn_text.tool_output_left_out() == 0


@pytest.mark.unit
def test_a_head_never_keeps_half_a_word() -> None:
    """A secret is never spaced: cut at a space, it is kept whole (redaction then finds it) or left out
    whole, never half; a body with no space in its head keeps nothing of it."""
    secret = "sk-ant-api03-" + "A" * 90
    with turn_text.tool_output_head(60) as cut:
        spaced = turn_text.tool_result(f"token is {secret} ok")
        solid = turn_text.tool_result(secret * 2)
    assert spaced.startswith("[tool result]\ntoken is\n(tool output cut by policy:")
    assert solid.startswith("[tool result]\n\n(tool output cut by policy: 206 of 206 characters left out")
    assert "sk-ant" not in spaced + solid and cut.results == 2
