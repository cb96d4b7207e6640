"""Codex CLI rollouts: ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl.

The format: docs/architecture.md, "Codex rollouts". Codex writes the same words twice (a
`response_item` and an `event_msg` copy); this reader keeps the `response_item` family and counts
the copies under policy `event_copy`. Injected context (environment, AGENTS.md, developer
permissions) is `injected_context`; encrypted reasoning is `encrypted_reasoning`; compaction
summaries are `compaction_summary`.

Turn ids hash the raw line, whose timestamp makes it unique. Legacy rollouts (mid-2025, no envelope)
have no per-line timestamp, so a line repeated word for word ("yes", twice) is told apart by how many
times it occurred before in the file. A fork copies its parent's history, including a second
`session_meta`: the first one owns the session's identity and cwd.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from checkpoint.model import Role, SessionInfo, TurnDraft
from checkpoint.sources.base import FileRole, JsonObject, ParsedLine, line_id, text_of

AGENT = "codex"
_SESSION_IN_NAME = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.IGNORECASE
)
_INJECTED_PREFIXES = ("<environment_context>", "# AGENTS.md instructions", "<user_instructions>", "<INSTRUCTIONS>")
_EVENT_COPIES = {"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content"}
_ENV_CWD = re.compile(r"<cwd>([^<]+)</cwd>")


class CodexReader:
    agent = AGENT

    def locate(self, path: Path) -> FileRole | None:
        if not path.name.startswith("rollout-") or path.suffix != ".jsonl":
            return None
        match = _SESSION_IN_NAME.search(path.name)
        return FileRole(AGENT, match.group(1) if match else path.stem)

    def parse(self, obj: JsonObject, raw: bytes, state: JsonObject) -> ParsedLine:
        out = ParsedLine()
        kind = obj.get("type")
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            # Legacy rollouts (mid-2025): no envelope, the item itself is the line.
            payload, kind = obj, obj.get("type")
            if kind is None and "id" in obj and "timestamp" in obj:
                kind = "session_meta"
        timestamp = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None

        if kind == "session_meta":
            if not state.get("meta_seen"):  # forks copy the parent's meta; the first one owns identity
                state["meta_seen"] = True
                if isinstance(payload.get("cwd"), str):
                    state["cwd"] = payload["cwd"]
                    out.session = _session(cwd=payload["cwd"])
        elif kind == "turn_context":
            if isinstance(payload.get("cwd"), str):
                state["cwd"] = payload["cwd"]
        elif kind in ("response_item", "message", "reasoning", "function_call", "function_call_output",
                      "custom_tool_call", "custom_tool_call_output", "local_shell_call"):
            self._response_item(payload, raw, timestamp, state, out)
        elif kind == "event_msg":
            self._event(payload, raw, timestamp, state, out)
        elif kind == "compacted":
            out.dropped["compaction_summary"] += len(str(payload.get("message", "")))
        return out

    def _response_item(
        self, item: JsonObject, raw: bytes, timestamp: str | None, state: JsonObject, out: ParsedLine
    ) -> None:
        itype = item.get("type")
        text = ""
        role = Role.TOOL
        if itype == "message":
            who = item.get("role")
            content = item.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "input_image":
                    url = block.get("image_url")
                    out.dropped["base64_image"] += len(url) if isinstance(url, str) else 0
            text = text_of(content)
            if who in ("developer", "system") or text.lstrip().startswith(_INJECTED_PREFIXES):
                out.dropped["injected_context"] += len(text)
                cwd = _ENV_CWD.search(text)
                if cwd and "cwd" not in state:  # legacy rollouts name the cwd only here
                    state["cwd"] = cwd.group(1).strip()
                    out.session = _session(out.session, cwd=state["cwd"])
                return
            role = Role.USER if who == "user" else Role.ASSISTANT
            if role is Role.USER and text and not state.get("titled"):
                state["titled"] = True
                out.session = _session(out.session, title=" ".join(text.split())[:120])
        elif itype == "reasoning":
            summary = item.get("summary")
            text = "\n".join(
                f"(reasoning) {s['text']}" for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)
            ) if isinstance(summary, list) else ""
            if item.get("encrypted_content"):
                out.dropped["encrypted_reasoning"] += len(str(item["encrypted_content"]))
            role = Role.ASSISTANT
        elif itype in ("function_call", "custom_tool_call"):
            name = item.get("name", "tool")
            body = item.get("arguments") if itype == "function_call" else item.get("input")
            text = f"[tool {name}] {body if isinstance(body, str) else ''}"
        elif itype in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            text = f"[tool result]\n{output if isinstance(output, str) else text_of(output)}"
        elif itype == "local_shell_call":
            action = item.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            text = f"[shell] {' '.join(map(str, command)) if isinstance(command, list) else ''}"
        if text.strip():
            out.turns.append(TurnDraft(_turn_id(raw, timestamp, state), role, text, (), timestamp))

    def _event(
        self, event: JsonObject, raw: bytes, timestamp: str | None, state: JsonObject, out: ParsedLine
    ) -> None:
        etype = event.get("type")
        if etype in _EVENT_COPIES:
            out.dropped["event_copy"] += len(str(event.get("message") or event.get("text") or ""))
        elif etype == "patch_apply_end" and event.get("success") is not False:
            changes = event.get("changes")
            if isinstance(changes, dict) and changes:
                files = tuple(_absolute(p, state.get("cwd")) for p in changes if isinstance(p, str))
                summary = "\n".join(f"{_change_type(changes[p])} {p}" for p in changes)
                turn_id = _turn_id(raw, timestamp, state)
                out.turns.append(TurnDraft(turn_id, Role.TOOL, f"[patch applied]\n{summary}", files, timestamp))


def _turn_id(raw: bytes, timestamp: str | None, state: JsonObject) -> str:
    """The line's hash; for a legacy line (no timestamp), also its occurrence among identical lines."""
    key = line_id(raw)
    if timestamp is not None:
        return key
    repeats: dict[str, int] = state.setdefault("repeats", {})
    seen = repeats.get(key, 0)
    repeats[key] = seen + 1
    return key if seen == 0 else line_id(raw + b"#%d" % seen)


def _change_type(change: Any) -> str:
    return str(change.get("type", "update")) if isinstance(change, dict) else "update"


def _absolute(path: str, cwd: object) -> str:
    if os.path.isabs(path) or not isinstance(cwd, str):
        return path
    return os.path.normpath(os.path.join(cwd, path))


def _session(info: SessionInfo | None = None, **fields: Any) -> SessionInfo:
    return replace(info, **fields) if info else SessionInfo(**{"id": "", "agent": AGENT, **fields})

