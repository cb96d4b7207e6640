"""What a pre-tool hook is told, per agent: the files about to be edited, and how to answer with
context. The files come from the agent's own reader (`Reader.edits_of_call`, the same that reads the
call back from the transcript): no tool's format is known here. Three agents' pre-tool hooks can add
context before a tool runs (checked on their 2026-12 releases):

- Claude Code 2.1.328 (`PreToolUse`): `tool_name` and `tool_input` (Edit, Write, MultiEdit,
  NotebookEdit); answered with `hookSpecificOutput.additionalContext`;
- Codex 0.169 (`PreToolUse` in `hooks.json`, Claude Code's shape): its edit tool takes a patch that
  names each file (the Codex reader's patch format); the same answer (its
  PreToolUseHookSpecificOutputWire has `additionalContext`);
- GitHub Copilot CLI 1.0.102 (`preToolUse`): `toolName` with `toolArgs` (JSON, maybe as a string);
  answered with a top-level `additionalContext`. (It also runs Claude Code-format plugin hooks with
  Claude Code's tool names: those take the first shape.)

Gemini CLI 0.61's `BeforeTool` reads no context from a hook (only AfterTool, after the edit)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from checkpoint.sources.claude_code import ClaudeCodeReader, edited_paths
from checkpoint.sources.codex import CodexReader
from checkpoint.sources.copilot import CopilotReader

PATCH_FILES = 3  # files of one call reminded of


@dataclass(frozen=True)
class EditTarget:
    """The files an agent is about to edit, in the session and folder it works in, and the shape its
    hook answers in ("claude": hookSpecificOutput, which Codex reads too; "copilot": top-level)."""

    paths: tuple[str, ...]  # absolute
    cwd: str
    session_id: str | None
    shape: str = "claude"
    # (file, text) the edit would write: new strings, a whole file's content, a patch's added lines
    # (checkpoint.agent.edit_checks runs the accepted checks over them)
    texts: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def path(self) -> str:
        return self.paths[0]


def _session(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def _files(edits: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.normpath(os.path.expanduser(e.path)) for e in edits))[:PATCH_FILES]


def _texts(edits: tuple[Any, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((os.path.normpath(os.path.expanduser(e.path)), e.text) for e in edits if e.text)


def edit_target(data: Mapping[str, Any]) -> EditTarget | None:
    """The files a pre-tool hook's input is about to edit; None: not an edit of a file (another tool,
    no path in its input, no absolute folder)."""
    cwd = data.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    if "toolName" in data:  # Copilot CLI's own hook format
        args = data.get("toolArgs")
        if isinstance(args, str):
            with contextlib.suppress(ValueError):  # else a raw patch, as the tool may take it
                args = json.loads(args)
        edits = CopilotReader().edits_of_call(str(data.get("toolName")), args, cwd)
        paths = _files(edits)
        return EditTarget(paths, cwd, _session(data, "sessionId"), "copilot", _texts(edits)) if paths else None
    name, arguments = str(data.get("tool_name")), data.get("tool_input")
    edits = ClaudeCodeReader().edits_of_call(name, arguments, cwd) or CodexReader().edits_of_call(name, arguments, cwd)
    paths = _files(edits)
    if not paths:  # an input that names the file but not (or not as text) what is written: still that file
        paths = tuple(os.path.normpath(os.path.expanduser(p)) for p in edited_paths(name, arguments, cwd))
    return EditTarget(paths, cwd, _session(data, "session_id"), texts=_texts(edits)) if paths else None


def answer(target: EditTarget, text: str, ask: str | None = None) -> str:
    """The hook's stdout: context, and never a denial (the edit is never blocked). `ask`: the reason to
    ask the user first (an accepted decision's check found the edit breaking it, and the user chose to
    be asked: agent_check_ask), in Claude Code's shape only."""
    if target.shape == "copilot":
        return json.dumps({"additionalContext": text}, ensure_ascii=False)
    out: dict[str, Any] = {"hookEventName": "PreToolUse", "additionalContext": text}
    if ask:
        out.update(permissionDecision="ask", permissionDecisionReason=ask)
    return json.dumps({"hookSpecificOutput": out}, ensure_ascii=False)
