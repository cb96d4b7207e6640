"""GitHub Copilot CLI sessions: ~/.copilot/session-state/<session id>/events.jsonl ($COPILOT_HOME
moves ~/.copilot). Every session's file has the same name: the session is the folder. Older versions
wrote the same events to session-state/<session id>.jsonl, which is read the same way. (The JSON
dumps of history-session-state/, older still and dropped by Copilot itself, are not read.)

Every line is one event `{"type", "data", "id", "timestamp", "parentId"}`; the CLI ships the schema
(schemas/session-events.schema.json in its package; seen with 1.0.102). A resumed session appends to
the same file (`session.resume`). A sub-agent (the `task` tool) writes its turns into its parent's
file (a background one too, `mode: "background"`), its prompt a `user.message` whose source is
`agent-<session>`: they are the session's turns like any.

What this reader deliberately does not turn into turns, and why:
- `user.message.transformedContent`: the prompt again, with the date and context the CLI adds
  (`transformed_copy`);
- `assistant.message.toolRequests`: the calls that `tool.execution_start` records again, which is
  the turn kept (`tool_request_copy`); `reasoningBlocks`, the reasoning text again
  (`reasoning_copy`), as is `reasoningText` when an `assistant.reasoning` event held it first;
  `encryptedContent` and `reasoningOpaque` (`encrypted_reasoning`);
- `tool.execution_complete.result.detailedContent`: the result again, as a diff of the call's
  arguments (`result_detail_copy`); the `task` tool's result (or, for a background task, the
  `read_agent` result) and the prompt in its arguments, which the sub-agent's own turns hold
  (`subagent_copy`); images in results (`base64_image`);
- the system prompt (`system.message`: `injected_context`), skill bodies (`skill.invoked`, a
  user message whose source is `skill-<name>`: `meta_injection`), runtime notifications and
  autopilot continuations (`machine_notification`), compaction summaries and the summariser's own
  model call, whose `model.*` events copy the whole conversation (`compaction_summary`),
  a task's closing summary, which the task_complete call records (`task_summary_copy`);
- streaming deltas and any event marked `"ephemeral": true` (the live stream's copies, not written
  to the file by 1.0.102, but in saved `--output-format json` output: `streaming_delta`);
- what Checkpoint itself fed the agent: its MCP tools' answers (`checkpoint_context`).
Bookkeeping events (turn starts and ends, usage, model and mode changes, hooks, permissions) are
skipped; types not known here are skipped and counted (`unknown_record`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from checkpoint.model import FileEdit, Role, SessionInfo, TurnDraft
from checkpoint.sources import turn_text
from checkpoint.sources.base import (
    CHECKPOINT_CONTEXT,
    EMPTY_TURN,
    NOT_MINE,
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
    worked_in,
)
from checkpoint.sources.edits import file_edit, patch_edits
from checkpoint.sources.layout import COPILOT_STATE_DIR

AGENT = "copilot"
EVENTS = "events.jsonl"
_SESSION_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
SUBAGENT_COPY = "subagent_copy"
MACHINE_NOTIFICATION = "machine_notification"
SUBAGENT_TOOLS = frozenset({"task"})  # the tool that starts a sub-agent; its result is the answer
# The tool that waits for a background sub-agent: its result quotes the sub-agent's turns.
SUBAGENT_READS = frozenset({"read_agent"})
# Tools whose `path` argument is the file they write, for results that carry no `fileEdits`.
_EDIT_TOOLS = frozenset({"create", "edit", "str_replace_editor", "write", "apply_patch"})
CALLS_REMEMBERED = 64  # tool calls in flight whose name and path a result needs
REASONING_REMEMBERED = 32
_STREAM_COPIES = frozenset({"assistant.message_delta", "assistant.reasoning_delta", "assistant.streaming_delta",
                            "assistant.tool_call_delta", "assistant.message_start", "tool.execution_partial_result",
                            "tool.shell_output", "tool.execution_progress", "hook.progress"})
# Events that are bookkeeping, not turns: skipped by design.
_BOOKKEEPING = frozenset({
    "assistant.turn_start", "assistant.turn_end", "assistant.turn_retry", "assistant.idle", "assistant.intent",
    "assistant.usage", "session.usage_record", "session.usage_checkpoint", "session.usage_info", "session.shutdown",
    "session.idle", "session.model_change", "session.mode_changed", "session.mode_notice_delivered", "session.info",
    "session.warning", "session.error", "session.title_changed", "session.truncation", "session.compaction_start",
    "session.plan_changed", "session.todos_changed", "session.memory_changed", "session.workspace_file_changed",
    "session.permissions_changed", "session.session_limits_changed", "session.remote_steerable_changed",
    "session.snapshot_rewind", "session.context_cleared", "session.completion_receipt", "session.tools_updated",
    "session.skills_loaded", "session.custom_agents_updated", "session.mcp_servers_loaded",
    "session.mcp_server_status_changed", "session.mcp_server_tools_loaded", "session.extensions_loaded",
    "session.background_tasks_changed", "session.request_body_compression_disabled", "session.binary_asset",
    "session.auto_mode_resolved", "session.model_deselected", "session.quota_observation",
    "subagent.started", "subagent.configured", "subagent.completed", "subagent.failed", "subagent.selected",
    "subagent.deselected", "hook.start", "hook.end", "permission.requested", "permission.completed",
    "skill.invoked_ref", "skill.context_delivered_ref", "tool_search.activated", "model.call_failure",
    "model.call_start", "model.call_finished", "model.call_final_result", "abort", "agent.interrupted",
    "pending_messages.modified", "sandbox.decision", "human_response.recorded", "external_tool.requested",
    "session.canvas.recorded", "session.canvas.removed", "session.schedule_created", "session.schedule_cancelled",
    "session.schedule_rearmed", "session.autopilot_objective_changed", "session.autopilot_stopped",
    "session.permission_recovery", "mcp.oauth_recovery_completed",
})
_CONTEXT_EVENTS = ("session.start", "session.resume")
# What a compaction's summariser call writes (not in the shipped schema; seen with `/compact`, 1.0.102):
# model.turn_started, model.model_call_started/_success, model.message, model.response,
# model.messages_snapshot, model.turn_ended. (The schema's model.call_* are bookkeeping, above.)
_COMPACTION_CALL = "model."


class CopilotReader:
    agent = AGENT

    def edits_of_call(self, name: str, arguments: object, cwd: str | None) -> tuple[FileEdit, ...]:
        """create (and write) write `file_text`, edit and str_replace_editor their `new_str` (or a
        whole `file_text`), apply_patch its patch."""
        if name == "apply_patch":
            return patch_edits(arguments, cwd)
        if name not in _EDIT_TOOLS or not isinstance(arguments, dict):
            return ()
        text = next((arguments[k] for k in ("file_text", "new_str", "content") if isinstance(arguments.get(k), str)),
                    None)
        return tuple(file_edit(arguments.get("path"), text, cwd))

    def claims_name(self, name: str) -> bool:
        return name.endswith(".jsonl")

    def looks_at(self, path: Path) -> Look:
        return Look()  # the folder names the session

    def locate(self, path: Path, head: Head) -> Claim | Refusal:
        if path.suffix != ".jsonl":
            return NOT_MINE
        if path.name == EVENTS and path.parent.parent.name == COPILOT_STATE_DIR and path.parent.name:
            return Claim(FileRole(AGENT, path.parent.name))
        if path.parent.name == COPILOT_STATE_DIR and _SESSION_NAME.fullmatch(path.stem):
            return Claim(FileRole(AGENT, path.stem))  # the older layout: one file per session, by its id
        return NOT_MINE

    def parse(self, obj: JsonObject, raw: bytes, state: JsonObject) -> ParsedLine:
        out = ParsedLine()
        kind = obj.get("type")
        data = obj.get("data")
        if not isinstance(data, dict):
            data = {}
        turn_id = obj["id"] if isinstance(obj.get("id"), str) and obj["id"] else line_id(raw)
        timestamp = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if obj.get("ephemeral") is True or kind in _STREAM_COPIES:
            out.dropped["streaming_delta"] += len(raw)
        elif kind in _CONTEXT_EVENTS:
            context = data.get("context")
            self._worked_in(context.get("cwd") if isinstance(context, dict) else None, state, out)
        elif kind == "session.context_changed":
            self._worked_in(data.get("cwd"), state, out)
        elif kind == "user.message":
            self._user(data, turn_id, timestamp, state, out)
        elif kind == "assistant.message":
            self._assistant(data, turn_id, timestamp, state, out)
        elif kind == "assistant.reasoning":
            text = _str(data.get("content"))
            if not text.strip():
                out.dropped[EMPTY_TURN] += len(text) or 1
                return out
            # The message that follows repeats it as reasoningText, and names it as reasoningOpaque.
            for key in filter(None, (text, _str(data.get("reasoningId")))):
                _remember(state, "reasoning", key, REASONING_REMEMBERED)
            out.add(TurnDraft(turn_id, Role.ASSISTANT, turn_text.reasoning(text), (), timestamp))
        elif kind in ("tool.execution_start", "tool.user_requested"):
            self._tool_start(data, turn_id, timestamp, state, out, by_user=kind == "tool.user_requested")
        elif kind == "tool.execution_complete":
            self._tool_result(data, turn_id, timestamp, state, out)
        elif kind == "system.message":
            out.dropped["injected_context"] += len(_str(data.get("content"))) or 1
        elif kind == "system.notification":
            out.dropped[MACHINE_NOTIFICATION] += len(_str(data.get("content"))) or 1
        elif kind in ("skill.invoked", "skill.context_delivered"):
            out.dropped["meta_injection"] += len(_str(data.get("content"))) or 1
        elif kind == "session.compaction_complete":
            out.dropped["compaction_summary"] += len(_str(data.get("summaryContent"))) or 1
        elif isinstance(kind, str) and kind.startswith(_COMPACTION_CALL) and kind not in _BOOKKEEPING:
            # The summariser's own model call (its messages, a snapshot of the whole conversation).
            out.dropped["compaction_summary"] += len(raw)
        elif kind == "session.task_complete":
            out.dropped["task_summary_copy"] += len(_str(data.get("summary"))) or 1
        elif kind == "session.handoff":
            out.dropped["injected_context"] += len(_str(data.get("summary")) + _str(data.get("context"))) or 1
        elif kind not in _BOOKKEEPING:
            # New types appear every few releases: skipped, but never silently.
            out.dropped[UNKNOWN_RECORD] += len(raw)
        return out

    # -- event kinds ------------------------------------------------------------------------------

    def _user(self, data: JsonObject, turn_id: str, timestamp: str | None, state: JsonObject,
              out: ParsedLine) -> None:
        text = _str(data.get("content"))
        if isinstance(data.get("transformedContent"), str):
            out.dropped["transformed_copy"] += len(data["transformedContent"]) or 1
        source = _str(data.get("source"))
        if source.startswith("skill-"):  # a skill's hidden injection, not the user speaking
            out.dropped["meta_injection"] += len(text) or 1
            return
        if data.get("isAutopilotContinuation") is True or source == "system":
            out.dropped[MACHINE_NOTIFICATION] += len(text) or 1
            return
        if is_checkpoint_context(text):
            out.dropped[CHECKPOINT_CONTEXT] += len(text)
            return
        # `agent-<id>`: a parent agent's prompt to a sub-agent, kept once here (the task call's copy goes).
        if text.strip() and not source.startswith("agent-") and not state.get("titled"):
            state["titled"] = True
            out.session = _session(out.session, title=" ".join(text.split())[:120])
        out.add(TurnDraft(turn_id, Role.USER, text, (), timestamp))

    def _assistant(self, data: JsonObject, turn_id: str, timestamp: str | None, state: JsonObject,
                   out: ParsedLine) -> None:
        requests = data.get("toolRequests")
        if isinstance(requests, list) and requests:
            out.dropped["tool_request_copy"] += len(requests)
        for key in ("encryptedContent", "reasoningOpaque"):
            if isinstance(data.get(key), str) and data[key]:
                out.dropped["encrypted_reasoning"] += len(data[key])
        if data.get("reasoningBlocks"):
            out.dropped["reasoning_copy"] += 1
        parts: list[str] = []
        content = _str(data.get("content"))
        if content.strip():
            parts.append(content)
        reasoning = _str(data.get("reasoningText"))
        if reasoning.strip():
            known = state.get("reasoning") or ()
            if reasoning in known or (data.get("reasoningOpaque") or None) in known:
                out.dropped["reasoning_copy"] += len(reasoning)  # an assistant.reasoning event held it
            else:
                parts.append(turn_text.reasoning(reasoning))  # after the text: what was said comes first
        if parts:
            out.add(TurnDraft(turn_id, Role.ASSISTANT, "\n".join(parts), (), timestamp,
                              _str(data.get("messageId")) or None))
        elif not requests:
            out.dropped[EMPTY_TURN] += len(content) or 1

    def _tool_start(self, data: JsonObject, turn_id: str, timestamp: str | None, state: JsonObject,
                    out: ParsedLine, *, by_user: bool) -> None:
        name = _str(data.get("toolName")) or "tool"
        if data.get("mcpServerName"):
            name = f"{data['mcpServerName']}/{_str(data.get('mcpToolName')) or name}"
        arguments = data.get("arguments", data.get("toolInput"))
        call = _str(data.get("toolCallId"))
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if call:
            calls: dict[str, JsonObject] = state.setdefault("calls", {})
            background = isinstance(arguments, dict) and arguments.get("mode") == "background"
            calls[call] = {"name": name, "path": path if isinstance(path, str) else None, "background": background}
            while len(calls) > CALLS_REMEMBERED:
                del calls[next(iter(calls))]
        if name in SUBAGENT_TOOLS and isinstance(arguments, dict) and isinstance(arguments.get("prompt"), str):
            # The sub-agent's prompt is its first user message: kept there.
            out.dropped[SUBAGENT_COPY] += len(arguments["prompt"]) or 1
            arguments = {k: v for k, v in arguments.items() if k != "prompt"}
        text = turn_text.tool_call(name, _rendered(arguments), by_user=by_user).rstrip()
        edits = self.edits_of_call(name, arguments, _str(state.get("cwd")) or None) if name in _EDIT_TOOLS else ()
        out.add(TurnDraft(turn_id, Role.TOOL, text, (), timestamp, edits=edits))

    def _tool_result(self, data: JsonObject, turn_id: str, timestamp: str | None, state: JsonObject,
                     out: ParsedLine) -> None:
        call = (state.get("calls") or {}).pop(_str(data.get("toolCallId")), None) or {}
        result = data.get("result")
        result = result if isinstance(result, dict) else {"content": result} if isinstance(result, str) else {}
        text = _str(result.get("content"))
        if isinstance(result.get("detailedContent"), str) and result["detailedContent"] != text:
            out.dropped["result_detail_copy"] += len(result["detailedContent"]) or 1
        for part in result.get("contents") or []:
            if isinstance(part, dict) and part.get("type") in ("image", "resource", "audio"):
                out.dropped["base64_image"] += len(_str(part.get("data"))) or 1
        if result.get("binaryResultsForLlm"):
            out.dropped["base64_image"] += len(str(result["binaryResultsForLlm"]))
        ok = data.get("success") is not False
        if ok and (call.get("name") in SUBAGENT_READS or (call.get("name") in SUBAGENT_TOOLS
                                                           and not call.get("background"))):
            # A background task's result only says it started; its answer comes through read_agent.
            out.dropped[SUBAGENT_COPY] += len(text) or 1
            text = "(the sub-agent's answer: in its own turns)"
        elif is_checkpoint_answer(text):
            out.dropped[CHECKPOINT_CONTEXT] += len(text)
            text = ""
        error = data.get("error")
        if not ok and isinstance(error, dict) and isinstance(error.get("message"), str):
            text = "\n".join(t for t in (text, error["message"]) if t)
        files = _edited(data, call) if ok else ()
        out.add(TurnDraft(turn_id, Role.TOOL, turn_text.tool_result(text, None if ok else "error"), files, timestamp))

    # -- session facts ----------------------------------------------------------------------------

    @staticmethod
    def _worked_in(cwd: object, state: JsonObject, out: ParsedLine) -> None:
        if not isinstance(cwd, str) or not cwd:
            return
        if "cwd" not in state:  # the session's own folder: where it started
            state["cwd"] = cwd
            out.session = _session(out.session, cwd=cwd)
        worked_in(cwd, state, out, _session)


def _edited(data: JsonObject, call: JsonObject) -> tuple[str, ...]:
    """Files a successful tool call wrote: its `fileEdits`, else the path an edit tool was given."""
    edits = data.get("fileEdits")
    if isinstance(edits, list):
        found = [e["path"] for e in edits if isinstance(e, dict) and isinstance(e.get("path"), str) and e["path"]]
        return tuple(dict.fromkeys(found))
    if call.get("name") in _EDIT_TOOLS and call.get("path"):
        return (str(call["path"]),)
    return ()


def _remember(state: JsonObject, key: str, value: str, keep: int) -> None:
    seen: list[str] = state.setdefault(key, [])
    seen.append(value)
    del seen[:-keep]


def _rendered(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _session(info: SessionInfo | None = None, **fields: Any) -> SessionInfo:
    return replace(info, **fields) if info else SessionInfo(**{"id": "", "agent": AGENT, **fields})

