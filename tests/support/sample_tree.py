"""The public samples laid out as ~/.claude/projects and ~/.codex/sessions, and what a scan of them must
store, counted here from the files and the formats' policies (docs/architecture.md, "Transcript formats"),
independently of the readers."""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkpoint.sources.base import line_id
from checkpoint.sources.tailer import SETTLE_SECONDS
from tests.support.samples import SAMPLES

# -- the independent count ----------------------------------------------------------------------

REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
MACHINE_TAGS = ("<task-notification>",)  # a background task reporting, in the user's place
CODEX_INJECTED = ("<environment_context>", "# AGENTS.md instructions", "<user_instructions>", "<INSTRUCTIONS>")
CODEX_EVENT_COPIES = ("user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content")
CODEX_TOOL_ITEMS = ("function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output",
                    "local_shell_call", "web_search_call")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def claude_is_turn(obj: dict[str, Any]) -> bool:
    """Is this Claude Code line something said or done in the session? (docs/architecture.md,
    "Claude Code transcripts")"""
    kind, message = obj.get("type"), obj.get("message")
    if str(obj.get("agentId", "")).startswith("acompact"):
        return False  # the compaction summariser's own conversation
    if kind == "user" and isinstance(message, dict) and not obj.get("isCompactSummary"):
        for block in _blocks(message.get("content")):
            if block.get("type") == "tool_result":
                return True
            text = block.get("text")
            said = block.get("type") == "text" and isinstance(text, str) and not obj.get("isMeta")
            if said and REMINDER.sub("", str(text)).strip() and not str(text).lstrip().startswith(MACHINE_TAGS):
                return True
        return False
    if kind == "assistant" and isinstance(message, dict):
        if obj.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
            return False
        return any((b.get("type") == "text" and str(b.get("text") or "").strip())
                   or (b.get("type") == "thinking" and str(b.get("thinking") or "").strip())
                   or b.get("type") in ("tool_use", "server_tool_use") for b in _blocks(message.get("content")))
    if kind == "attachment":
        attachment = obj.get("attachment")
        if isinstance(attachment, dict) and attachment.get("type") == "queued_command":
            return any(b.get("type") == "text" and b.get("text") for b in _blocks(attachment.get("prompt")))
    return False


def codex_is_turn(obj: dict[str, Any]) -> bool:
    """Is this Codex rollout line something said or done: the response_item family?
    (docs/architecture.md, "Codex rollouts")"""
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        return False
    if obj.get("type") == "event_msg":
        changes = payload.get("changes")
        return payload.get("type") == "patch_apply_end" and payload.get("success") is not False and bool(
            isinstance(changes, dict) and changes)
    if obj.get("type") != "response_item":
        return False
    kind = payload.get("type")
    if kind == "message":
        text = "\n".join(b["text"] for b in _blocks(payload.get("content")) if isinstance(b.get("text"), str))
        return payload.get("role") in ("user", "assistant") and bool(text.strip()) and not text.lstrip().startswith(
            CODEX_INJECTED)
    if kind == "reasoning":
        summary = payload.get("summary")
        return isinstance(summary, list) and any(isinstance(s, dict) and isinstance(s.get("text"), str)
                                                 for s in summary)
    return kind in CODEX_TOOL_ITEMS


@dataclass
class Expected:
    session_id: str
    agent: str
    turn_ids: set[str] = field(default_factory=set)
    copies: Counter[str] = field(default_factory=Counter)  # policy -> records, for the copies that are counted
    problem_lines: set[int] = field(default_factory=set)


def expected_of(path: Path, session_id: str, agent: str) -> Expected:
    exp = Expected(session_id, agent)
    data = path.read_bytes()
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        try:
            obj = json.loads(raw)
        except ValueError:
            exp.problem_lines.add(number)
            continue
        if not isinstance(obj, dict):
            exp.problem_lines.add(number)
            continue
        if agent == "claude":
            if claude_is_turn(obj):
                exp.turn_ids.add(obj["uuid"] if isinstance(obj.get("uuid"), str) and obj["uuid"] else line_id(raw))
            if obj.get("type") == "progress":
                exp.copies["progress_copy"] += 1
        else:
            if codex_is_turn(obj):
                exp.turn_ids.add(line_id(raw))
            payload = obj.get("payload")
            event = payload.get("type") if obj.get("type") == "event_msg" and isinstance(payload, dict) else None
            if event in CODEX_EVENT_COPIES or event == "item_completed" or (
                    event == "task_complete" and isinstance(payload, dict)
                    and isinstance(payload.get("last_agent_message"), str)):
                exp.copies["event_copy"] += 1
            if obj.get("type") == "compacted":
                exp.copies["compaction_summary"] += 1
    return exp


# -- the tree -------------------------------------------------------------------------------------


def _first_cwd(path: Path) -> str:
    for raw in path.read_bytes().splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("cwd"), str):
            return str(obj["cwd"])
    raise AssertionError(f"{path} names no cwd")


def _codex_id(path: Path) -> str:
    first = json.loads(path.read_bytes().split(b"\n", 1)[0])
    candidate = str(first.get("payload", {}).get("id", ""))
    try:
        return str(uuid.UUID(candidate))
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, path.name))


def build_tree(claude_root: Path, codex_root: Path) -> dict[Path, Expected]:
    """Copy every sample where the agent would have written it; age them so that a last line without
    a newline counts as settled."""
    layout: dict[Path, Expected] = {}
    for sample in sorted((SAMPLES / "claude").glob("*.jsonl")):
        slug = re.sub(r"[^a-zA-Z0-9]", "-", _first_cwd(sample))
        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, sample.name))
        target = claude_root / slug / f"{session_id}.jsonl"
        layout[target] = expected_of(sample, session_id, "claude")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, target)
    for minute, sample in enumerate(sorted((SAMPLES / "codex").glob("*.jsonl"))):
        session_id = _codex_id(sample)
        target = codex_root / "2026" / "02" / "23" / f"rollout-2026-02-23T13-{minute:02d}-00-{session_id}.jsonl"
        layout[target] = expected_of(sample, session_id, "codex")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, target)
    for target in layout:
        make_settled(target)
    return layout


def make_settled(path: Path) -> None:
    """Older than the tailer's settling time, so that a last line without a newline is read."""
    old = path.stat().st_mtime - SETTLE_SECONDS - 60
    os.utime(path, (old, old))
