"""What a pre-tool hook is told, per agent: the file about to be edited, and how to answer with
context. Three agents' pre-tool hooks can add context before a tool runs (checked on their 2026-12
releases):

- Claude Code 2.1.328 (`PreToolUse`): `tool_name` Edit / Write / MultiEdit / NotebookEdit with
  `tool_input.file_path` (`notebook_path`); answered with `hookSpecificOutput.additionalContext`;
- Codex 0.169 (`PreToolUse` in `hooks.json`, Claude Code's shape): its edit tool is `apply_patch`,
  whose input is a patch naming each file on a `*** Update File: <path>` (Add, Delete) line; the
  same answer (its PreToolUseHookSpecificOutputWire has `additionalContext`);
- GitHub Copilot CLI 1.0.102 (`preToolUse`): `toolName` edit / create with `toolArgs` (JSON, maybe as
  a string) holding `path`; answered with a top-level `additionalContext`. (It also runs Claude
  Code-format plugin hooks, with Claude Code's tool names: those take the first shape.)

Gemini CLI 0.61's `BeforeTool` reads no context from a hook (only AfterTool, after the edit)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Claude Code's edit tools: the tool input's key that holds the file's path.
CLAUDE_EDIT_TOOLS: dict[str, str] = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
                                     "NotebookEdit": "notebook_path"}
CODEX_PATCH_TOOL = "apply_patch"
COPILOT_EDIT_TOOLS = ("edit", "create", "str_replace_editor")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
PATCH_FILES = 3  # files of one patch reminded of


@dataclass(frozen=True)
class EditTarget:
    """The files an agent is about to edit, in the session and folder it works in, and the shape its
    hook answers in ("claude": hookSpecificOutput, which Codex reads too; "copilot": top-level)."""

    paths: tuple[str, ...]  # absolute
    cwd: str
    session_id: str | None
    shape: str = "claude"

    @property
    def path(self) -> str:
        return self.paths[0]


def _absolute(cwd: str, paths: list[str]) -> tuple[str, ...]:
    out = [os.path.normpath(os.path.join(cwd, os.path.expanduser(p.strip()))) for p in paths if p and p.strip()]
    return tuple(dict.fromkeys(out))


def _session(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def patch_files(patch: str) -> list[str]:
    """The files a Codex apply_patch input names, in order."""
    return _PATCH_FILE.findall(patch)


def _codex_patch(tool_input: object) -> str:
    if isinstance(tool_input, str):
        return tool_input
    if isinstance(tool_input, dict):
        for key in ("command", "input", "patch"):
            value = tool_input.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list):  # ["apply_patch", "<patch>"]
                return "\n".join(v for v in value if isinstance(v, str))
    return ""


def edit_target(data: Mapping[str, Any]) -> EditTarget | None:
    """The files a pre-tool hook's input is about to edit; None: not an edit of a file (another tool,
    no path in its input, no absolute folder)."""
    cwd = data.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    if "toolName" in data:  # Copilot CLI's own hook format
        if data.get("toolName") not in COPILOT_EDIT_TOOLS:
            return None
        args = data.get("toolArgs")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                return None
        path = args.get("path") if isinstance(args, dict) else None
        paths = _absolute(cwd, [path]) if isinstance(path, str) else ()
        return EditTarget(paths, cwd, _session(data, "sessionId"), "copilot") if paths else None
    tool = str(data.get("tool_name"))
    tool_input = data.get("tool_input")
    if tool == CODEX_PATCH_TOOL:
        paths = _absolute(cwd, patch_files(_codex_patch(tool_input))[:PATCH_FILES])
    elif tool in CLAUDE_EDIT_TOOLS and isinstance(tool_input, dict):
        path = tool_input.get(CLAUDE_EDIT_TOOLS[tool])
        paths = _absolute(cwd, [path]) if isinstance(path, str) else ()
    else:
        return None
    return EditTarget(paths, cwd, _session(data, "session_id")) if paths else None


def answer(target: EditTarget, text: str) -> str:
    """The hook's stdout: context only, never a permission decision (the edit is never blocked)."""
    if target.shape == "copilot":
        return json.dumps({"additionalContext": text}, ensure_ascii=False)
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}},
                      ensure_ascii=False)
