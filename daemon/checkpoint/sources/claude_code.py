"""Claude Code transcripts: ~/.claude/projects/<slug>/<session>.jsonl and their sub-agent files.

See shared/notes/formats.md §1. What this reader deliberately does not turn into turns, and why:
- progress lines: `agent_progress` copies sub-agent messages that the sub-agent file holds too;
  hook and bash progress repeat output that the tool result carries (policy `progress_copy`);
- compaction summaries restate turns that stay in the file (policy `compaction_summary`);
- injected meta text (skill bodies, caveats, reminders) was not said in the session (`meta_injection`);
- base64 images and documents (`base64_image`), redacted thinking (`redacted_thinking`),
  synthetic API-error messages (`api_error_message`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from checkpoint.model import Role, SessionInfo
from checkpoint.sources.base import FileRole, JsonObject, ParsedLine, TurnDraft, line_id, text_of

AGENT = "claude"
# Text the harness injects into user messages; it was not said in the session.
_INJECTED = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_TITLE_KEYS = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}
_TITLE_RANK = {"first-prompt": 0, "summary": 1, "ai-title": 2, "custom-title": 3}


class ClaudeCodeReader:
    agent = AGENT

    def locate(self, path: Path) -> FileRole | None:
        if path.suffix != ".jsonl" or path.name == "journal.jsonl" or "tool-results" in path.parts:
            return None
        if path.name.startswith("rollout-"):
            return None
        if path.name.startswith("agent-"):
            # <session>/subagents/[workflows/<wf>/]agent-*.jsonl: the session is the nearest ancestor
            # named like a session; legacy agent-*.jsonl beside sessions learn it from their content.
            for ancestor in path.parents:
                if ancestor.name == "subagents" and ancestor.parent.name:
                    return FileRole(AGENT, ancestor.parent.name, subagent=True)
            return FileRole(AGENT, None, subagent=True)
        return FileRole(AGENT, path.stem)

    def parse(self, obj: JsonObject, raw: bytes, state: JsonObject) -> ParsedLine:
        out = ParsedLine()
        kind = obj.get("type")
        self._learn_session(obj, state, out)
        if kind == "user":
            self._user(obj, raw, state, out)
        elif kind == "assistant":
            self._assistant(obj, raw, out)
        elif kind == "progress":
            out.dropped["progress_copy"] += len(raw)
        elif kind == "attachment":
            self._attachment(obj, raw, out)
        elif kind in _TITLE_KEYS:
            title = obj.get(_TITLE_KEYS[kind])
            if isinstance(title, str):
                self._title(title, kind, state, out)
        # everything else (system, snapshots, queue operations, modes, links, unknown types) is
        # bookkeeping: ignored by design, new types appear every few releases.
        return out

    # -- line kinds -------------------------------------------------------------------------------

    def _user(self, obj: JsonObject, raw: bytes, state: JsonObject, out: ParsedLine) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        content = message.get("content")
        if obj.get("isCompactSummary"):
            out.dropped["compaction_summary"] += len(text_of(content))
            return
        if obj.get("isMeta"):
            out.dropped["meta_injection"] += len(text_of(content))
            return
        texts: list[str] = []
        results: list[str] = []
        if isinstance(content, str):
            texts.append(self._said(content, out))
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                btype = block.get("type")
                if btype == "text" and isinstance(block.get("text"), str):
                    texts.append(self._said(block["text"], out))
                elif btype == "tool_result":
                    results.append(self._tool_result(block, out))
                elif btype in ("image", "document"):
                    out.dropped["base64_image"] += _payload_size(block)
        files = _applied_files(obj.get("toolUseResult")) if results else ()
        if results:
            text = "\n".join(t for t in texts + results if t)
            role = Role.TOOL
        else:
            text = "\n".join(t for t in texts if t)
            role = Role.USER
            if text and not text.startswith("<"):
                self._title(text, "first-prompt", state, out)
        if text or files:
            out.turns.append(
                TurnDraft(_id(obj, raw), role, text, files, _str(obj.get("timestamp")), None)
            )

    @staticmethod
    def _said(text: str, out: ParsedLine) -> str:
        injected = sum(len(m) for m in _INJECTED.findall(text))
        if not injected:
            return text
        out.dropped["meta_injection"] += injected
        return _INJECTED.sub("", text).strip()

    def _tool_result(self, block: JsonObject, out: ParsedLine) -> str:
        content = block.get("content")
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") in ("image", "document"):
                    out.dropped["base64_image"] += _payload_size(part)
        status = " (error)" if block.get("is_error") else ""
        return f"[tool result{status}]\n{text_of(content)}"

    def _assistant(self, obj: JsonObject, raw: bytes, out: ParsedLine) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        if obj.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
            out.dropped["api_error_message"] += len(text_of(message.get("content")))
            return
        texts: list[str] = []
        tool_calls: list[str] = []
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": text_of(content)}]
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif btype == "thinking" and isinstance(block.get("thinking"), str):
                texts.append(f"(thinking) {block['thinking']}")
            elif btype == "redacted_thinking":
                out.dropped["redacted_thinking"] += len(str(block.get("data", "")))
            elif btype in ("tool_use", "server_tool_use"):
                tool_calls.append(_tool_call(block))
        role = Role.ASSISTANT if texts else Role.TOOL
        text = "\n".join(texts + tool_calls)
        if text:
            message_id = message.get("id") if isinstance(message.get("id"), str) else None
            out.turns.append(TurnDraft(_id(obj, raw), role, text, (), _str(obj.get("timestamp")), message_id))

    def _attachment(self, obj: JsonObject, raw: bytes, out: ParsedLine) -> None:
        attachment = obj.get("attachment")
        # A prompt typed while the agent was busy (mid-turn steering) is the user speaking.
        if isinstance(attachment, dict) and attachment.get("type") == "queued_command":
            text = text_of(attachment.get("prompt"))
            if text:
                out.turns.append(TurnDraft(_id(obj, raw), Role.USER, text, (), _str(obj.get("timestamp"))))

    # -- session facts ----------------------------------------------------------------------------

    def _learn_session(self, obj: JsonObject, state: JsonObject, out: ParsedLine) -> None:
        if "cwd" not in state and isinstance(obj.get("cwd"), str):
            state["cwd"] = obj["cwd"]
            out.session = _merge(out.session, cwd=obj["cwd"])
        if "session_id" not in state and isinstance(obj.get("sessionId"), str):
            state["session_id"] = obj["sessionId"]

    def _title(self, title: str, source: str, state: JsonObject, out: ParsedLine) -> None:
        if _TITLE_RANK[source] < state.get("title_rank", -1):
            return
        if source == "first-prompt" and "title_rank" in state:
            return
        state["title_rank"] = _TITLE_RANK[source]
        out.session = _merge(out.session, title=" ".join(title.split())[:120])


def _merge(info: SessionInfo | None, **fields: Any) -> SessionInfo:
    base = info.model_dump() if info else {"id": "", "agent": AGENT}
    base.update(fields)
    return SessionInfo(**base)


def _id(obj: JsonObject, raw: bytes) -> str:
    uuid = obj.get("uuid")
    return uuid if isinstance(uuid, str) and uuid else line_id(raw)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _payload_size(block: JsonObject) -> int:
    source = block.get("source")
    if isinstance(source, dict) and isinstance(source.get("data"), str):
        return len(source["data"])
    return 1


def _tool_call(block: JsonObject) -> str:
    name = block.get("name", "tool")
    tool_input = block.get("input")
    try:
        rendered = orjson.dumps(tool_input).decode() if tool_input is not None else ""
    except TypeError:
        rendered = str(tool_input)
    return f"[tool {name}] {rendered}"


def _applied_files(result: object) -> tuple[str, ...]:
    """Files an edit tool really changed: a structured result, never an error string."""
    if not isinstance(result, dict):
        return ()
    if not ("structuredPatch" in result or result.get("type") in ("create", "update")):
        return ()
    path = result.get("filePath") or result.get("notebook_path")
    return (path,) if isinstance(path, str) and path else ()

