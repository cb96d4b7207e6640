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

A sub-agent (multi-agent mode) writes its own rollout, whose `session_meta` names the parent thread
(`parent_thread_id`, or `source.subagent.thread_spawn.parent_thread_id`): its turns belong to the
parent's session, as a Claude Code sub-agent file's do. The parent's copies of what the sub-agent
said (`response_item` `agent_message`, the `<subagent_notification>` user message 0.169 writes, and
the output of `wait_agent`, which holds the sub-agent's final answer) are policy `subagent_copy`;
`item_completed` envelopes and `task_complete.last_agent_message` copy response items too
(`event_copy`), except an applied patch's (`FileChange`, 0.169's only record of it, where older
versions wrote `patch_apply_end`): a tool turn naming the files changed. `web_search_call` is a
tool turn. What Checkpoint itself fed the agent is
`checkpoint_context`: its MCP tools' answers (a `function_call_output` block of their own, after
the "Wall time" block; the call stays a tool turn) and its session-start context (a SessionStart
hook's additional context: a developer message). Record types not known here are skipped and
counted (`unknown_record`).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from checkpoint.model import FileEdit, Role, SessionInfo, TurnDraft
from checkpoint.sources import turn_text
from checkpoint.sources.base import (
    CHECKPOINT_CONTEXT,
    NO_WORDS,
    NOT_MINE,
    NOT_YET,
    UNKNOWN_RECORD,
    Claim,
    FileRole,
    Head,
    JsonObject,
    Look,
    ParsedLine,
    Refusal,
    is_checkpoint_answer,
    is_checkpoint_context,
    line_id,
    text_of,
    whole_record,
    worked_in,
)
from checkpoint.sources.edits import PATCH_START, decoded, patch_edits
from checkpoint.sources.layout import CODEX_ROLLOUT

AGENT = "codex"
_SESSION_IN_NAME = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.IGNORECASE
)
_INJECTED_PREFIXES = ("<environment_context>", "# AGENTS.md instructions", "<user_instructions>", "<INSTRUCTIONS>")
_EVENT_COPIES = {"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content"}
_ENV_CWD = re.compile(r"<cwd>([^<]+)</cwd>")
HEAD_BYTES = 256 << 10  # the first line (session_meta, with the base instructions) fits in this
_RESPONSE_ITEMS = ("response_item", "message", "reasoning", "function_call", "function_call_output",
                   "custom_tool_call", "custom_tool_call_output", "local_shell_call", "web_search_call")
# Top-level records that are bookkeeping, not turns: skipped by design.
_BOOKKEEPING = frozenset({"world_state", "token_usage_record", "inter_agent_communication_metadata",
                          "ghost_snapshot", "session_state"})
# Response items that are no turn: tool lists offered, a snapshot of the work tree.
_ITEM_BOOKKEEPING = frozenset({"additional_tools", "ghost_snapshot", "compaction", "compaction_summary"})
# The head of an event that carries no words, as Codex writes it (envelope keys in this order).
_RECORD_START = b'{"timestamp":"'
_NO_WORDS = (b'","type":"event_msg","payload":{"type":"token_count",',
             b'","type":"event_msg","payload":{"type":"task_started",')
SUBAGENT_COPY = "subagent_copy"
_SUBAGENT_NOTICE = "<subagent_notification>"
_SUBAGENT_WAITS = frozenset({"wait_agent", "wait"})  # multi-agent tools whose output is the answers
CALLS_REMEMBERED = 32


class CodexReader:
    agent = AGENT

    def edits_of_call(self, name: str, arguments: object, cwd: str | None) -> tuple[FileEdit, ...]:
        """apply_patch bodies, whatever the tool: apply_patch's own input, a shell command running it."""
        return patch_edits(arguments, cwd)

    def claims_name(self, name: str) -> bool:
        return name.endswith(".jsonl")

    def looks_at(self, path: Path) -> Look:
        return Look(head=HEAD_BYTES) if _rollout(path) else Look()

    def locate(self, path: Path, head: Head) -> Claim | Refusal:
        if not _rollout(path):
            return NOT_MINE
        match = _SESSION_IN_NAME.search(path.name)
        parent = _parent_thread(head)
        if parent is None:
            return NOT_YET  # its first line is not written yet: claimed once it is
        if parent:
            return Claim(FileRole(AGENT, parent, subagent=True))
        return Claim(FileRole(AGENT, match.group(1) if match else path.stem))

    def skim(self, raw: bytes, state: JsonObject) -> str | None:
        """An event that holds no words (token counts, rate limits: a third of a real rollout's
        bytes; a task's start) known from its head, as Codex writes it; it is no turn and no copy,
        as `parse` finds. Anything else is left to `parse`."""
        if not raw.startswith(_RECORD_START):
            return None
        at = max(raw.find(_NO_WORDS[0], 14, 128), raw.find(_NO_WORDS[1], 14, 128))
        if at < 0 or b'"' in raw[14:at] or b"\\" in raw[14:at] or not whole_record(raw, _RECORD_START):
            return None
        return NO_WORDS

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
                    worked_in(payload["cwd"], state, out, _session)
        elif kind == "turn_context":
            if isinstance(payload.get("cwd"), str) and payload["cwd"]:
                state["cwd"] = payload["cwd"]
                worked_in(payload["cwd"], state, out, _session)
        elif kind in _RESPONSE_ITEMS:
            self._response_item(payload, raw, timestamp, state, out)
        elif kind == "event_msg":
            self._event(payload, raw, timestamp, state, out)
        elif kind == "compacted":
            out.dropped["compaction_summary"] += len(str(payload.get("message", "")))
        elif kind not in _BOOKKEEPING and not (kind is None and "record_type" in obj):  # legacy state lines
            out.dropped[UNKNOWN_RECORD] += len(raw)
        return out

    def _response_item(
        self, item: JsonObject, raw: bytes, timestamp: str | None, state: JsonObject, out: ParsedLine
    ) -> None:
        itype = item.get("type")
        text = ""
        role = Role.TOOL
        edits: tuple[FileEdit, ...] = ()
        if itype == "message":
            who = item.get("role")
            content = item.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "input_image":
                    url = block.get("image_url")
                    out.dropped["base64_image"] += len(url) if isinstance(url, str) else 0
            text = text_of(content)
            # A hook's additional context is a developer message (a prompt that quotes it is the user's).
            if who in ("developer", "system") and is_checkpoint_context(text):
                out.dropped[CHECKPOINT_CONTEXT] += len(text)
                return
            if who in ("developer", "system") or text.lstrip().startswith(_INJECTED_PREFIXES):
                out.dropped["injected_context"] += len(text)
                cwd = _ENV_CWD.search(text)
                if cwd and "cwd" not in state:  # legacy rollouts name the cwd only here
                    state["cwd"] = cwd.group(1).strip()
                    out.session = _session(out.session, cwd=state["cwd"])
                    worked_in(state["cwd"], state, out, _session)
                return
            if who == "user" and text.lstrip().startswith(_SUBAGENT_NOTICE):
                out.dropped[SUBAGENT_COPY] += len(text)
                return
            role = Role.USER if who == "user" else Role.ASSISTANT
            if role is Role.USER and text and not state.get("titled"):
                state["titled"] = True
                out.session = _session(out.session, title=" ".join(text.split())[:120])
        elif itype == "reasoning":
            summary = item.get("summary")
            text = "\n".join(
                turn_text.reasoning(s["text"])
                for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)
            ) if isinstance(summary, list) else ""
            if item.get("encrypted_content"):
                out.dropped["encrypted_reasoning"] += len(str(item["encrypted_content"]))
            role = Role.ASSISTANT
        elif itype in ("function_call", "custom_tool_call"):
            name = item.get("name", "tool")
            body = item.get("arguments") if itype == "function_call" else item.get("input")
            body = body if isinstance(body, str) else ""
            text = turn_text.tool_call(str(name), body)
            if PATCH_START in body:
                edits = self.edits_of_call(str(name), decoded(body), state.get("cwd"))
            if name in _SUBAGENT_WAITS and isinstance(item.get("call_id"), str):
                waits: list[str] = state.setdefault("subagent_waits", [])
                waits.append(item["call_id"])
                del waits[:-CALLS_REMEMBERED]
        elif itype in ("function_call_output", "custom_tool_call_output"):
            result = _tool_output(item.get("output"), out)
            if item.get("call_id") in state.get("subagent_waits", ()):
                # The sub-agents' final answers, which their own rollouts hold: only the call is kept.
                out.dropped[SUBAGENT_COPY] += len(result)
                result = "(the sub-agents' answers: in their own turns)"
            text = turn_text.tool_result(result)
        elif itype == "local_shell_call":
            action = item.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            text = f"[shell] {' '.join(map(str, command)) if isinstance(command, list) else ''}"
        elif itype == "web_search_call":
            text = _web_search(item.get("action"))
        elif itype == "agent_message":
            # A sub-agent's message delivered to the parent: the sub-agent's own rollout holds it.
            out.dropped[SUBAGENT_COPY] += len(text_of(item.get("content")) or str(item.get("message") or "")) or 1
            return
        elif itype in _ITEM_BOOKKEEPING:
            return
        else:
            out.dropped[UNKNOWN_RECORD] += len(raw)
            return
        out.add(TurnDraft(_turn_id(raw, timestamp, state), role, text, (), timestamp, edits=edits))

    def _event(
        self, event: JsonObject, raw: bytes, timestamp: str | None, state: JsonObject, out: ParsedLine
    ) -> None:
        etype = event.get("type")
        if etype in _EVENT_COPIES:
            out.dropped["event_copy"] += len(str(event.get("message") or event.get("text") or ""))
        elif etype == "item_completed" and _applied_file_change(event.get("item")):
            # codex 0.169 says an applied patch this way (no patch_apply_end): the files it changed.
            self._patch_applied(event["item"]["changes"], raw, timestamp, state, out)
        elif etype == "item_completed":
            # Typed copies of the response items (AgentMessage, UserMessage, CommandExecution, ...).
            out.dropped["event_copy"] += len(str(event.get("item") or "")) or 1
        elif etype == "task_complete" and isinstance(event.get("last_agent_message"), str):
            out.dropped["event_copy"] += len(event["last_agent_message"]) or 1
        elif etype == "patch_apply_end" and event.get("success") is not False:
            changes = event.get("changes")
            if isinstance(changes, dict) and changes:
                self._patch_applied(changes, raw, timestamp, state, out)

    @staticmethod
    def _patch_applied(changes: JsonObject, raw: bytes, timestamp: str | None, state: JsonObject,
                       out: ParsedLine) -> None:
        files = tuple(_absolute(p, state.get("cwd")) for p in changes if isinstance(p, str))
        summary = "\n".join(f"{_change_type(changes[p])} {p}" for p in changes)
        out.add(TurnDraft(_turn_id(raw, timestamp, state), Role.TOOL, f"[patch applied]\n{summary}", files, timestamp))


def _applied_file_change(item: object) -> bool:
    """An item_completed FileChange whose patch was applied, naming the files it changed."""
    return (isinstance(item, dict) and item.get("type") == "FileChange" and item.get("status") == "completed"
            and isinstance(item.get("changes"), dict) and bool(item["changes"]))


def _turn_id(raw: bytes, timestamp: str | None, state: JsonObject) -> str:
    """The line's hash; for a legacy line (no timestamp), also its occurrence among identical lines."""
    key = line_id(raw)
    if timestamp is not None:
        return key
    repeats: dict[str, int] = state.setdefault("repeats", {})
    seen = repeats.get(key, 0)
    repeats[key] = seen + 1
    return key if seen == 0 else line_id(raw + b"#%d" % seen)


def _tool_output(output: object, out: ParsedLine) -> str:
    """A tool's output (a string, or content blocks: an MCP tool's is a "Wall time" block, then the
    tool's own), without Checkpoint's MCP answers, which are counted (CHECKPOINT_CONTEXT)."""
    if is_checkpoint_answer(output):
        out.dropped[CHECKPOINT_CONTEXT] += len(str(output))
        return ""
    if not isinstance(output, list):
        return text_of(output)
    kept = []
    for block in output:
        if isinstance(block, dict) and is_checkpoint_answer(block.get("text")):
            out.dropped[CHECKPOINT_CONTEXT] += len(block["text"])
        else:
            kept.append(block)
    return text_of(kept)


def _web_search(action: object) -> str:
    """What a web search looked for (a query, a page opened, a text found in a page)."""
    if not isinstance(action, dict):
        return "[web search]"
    what = action.get("query") or action.get("url") or action.get("pattern") or ""
    queries = action.get("queries")
    if not what and isinstance(queries, list):
        what = "; ".join(q for q in queries if isinstance(q, str))
    kind = action.get("type")
    return f"[web search{' ' + kind if isinstance(kind, str) and kind != 'search' else ''}] {what}".rstrip()


def _rollout(path: Path) -> bool:
    return path.name.startswith(CODEX_ROLLOUT) and path.suffix == ".jsonl"


def _parent_thread(found: Head) -> str | None:
    """The parent thread of a sub-agent rollout, named in its first line's `session_meta`; "" for
    a rollout of its own (or one whose first line says nothing: a legacy file, a bad line); None
    while the first line is not complete yet (claiming it then would file it under itself for good)."""
    if not found.regular:
        return ""  # a FIFO, a directory, unreadable: the reading says what it is
    head = found.data[:HEAD_BYTES]
    end = head.find(b"\n")
    if end < 0:
        return "" if len(head) == HEAD_BYTES else None
    try:
        obj = orjson.loads(head[:end])
    except orjson.JSONDecodeError:
        return ""
    payload = obj.get("payload") if isinstance(obj, dict) else None
    if not isinstance(payload, dict) or obj.get("type") != "session_meta":
        return ""
    # A sub-agent of a sub-agent names its direct parent; `session_id` names the root thread.
    root = payload.get("session_id")
    if isinstance(root, str) and root and root != payload.get("id"):
        return root
    parent = payload.get("parent_thread_id")
    source = payload.get("source")
    if not parent and isinstance(source, dict) and isinstance(source.get("subagent"), dict):
        spawn: JsonObject = source["subagent"]
        if isinstance(spawn.get("thread_spawn"), dict):
            spawn = spawn["thread_spawn"]
        parent = spawn.get("parent_thread_id")
    return parent if isinstance(parent, str) and parent else ""


def _change_type(change: Any) -> str:
    return str(change.get("type", "update")) if isinstance(change, dict) else "update"


def _absolute(path: str, cwd: object) -> str:
    if os.path.isabs(path) or not isinstance(cwd, str):
        return path
    return os.path.normpath(os.path.join(cwd, path))


def _session(info: SessionInfo | None = None, **fields: Any) -> SessionInfo:
    return replace(info, **fields) if info else SessionInfo(**{"id": "", "agent": AGENT, **fields})

