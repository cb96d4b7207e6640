"""Claude Code transcripts: ~/.claude/projects/<slug>/<session>.jsonl and their sub-agent files.

The format: docs/architecture.md, "Claude Code transcripts". What this reader deliberately does not
turn into turns, and why:
- progress lines: `agent_progress` copies sub-agent messages that the sub-agent file holds too;
  hook and bash progress repeat output that the tool result carries (policy `progress_copy`);
- compaction summaries restate turns that stay in the file (policy `compaction_summary`);
- injected meta text (skill bodies, caveats, `<system-reminder>`s, also inside tool results) was not
  said in the session (`meta_injection`); an `isMeta` line's tool results are kept, only its text goes;
- the compaction summariser's own conversation (`subagents/agent-acompact-*.jsonl`) restates the
  session too (`compaction_summary`);
- a content block repeated under the same `message.id` (one API message is written over several
  lines, one block each; a block written twice is a copy) (`message_copy`);
- base64 images and documents (`base64_image`), redacted thinking (`redacted_thinking`),
  synthetic API-error messages (`api_error_message`);
- what Checkpoint itself fed the agent (`checkpoint_context`): its session-start context, which
  Claude Code records as a `hook_additional_context` attachment, a `hook_success` attachment holding
  the hook's stdout, and a `<system-reminder>` in a user message; and its MCP tools' answers, in tool
  results. Known by their marks (checkpoint.model), they would otherwise come back as new items.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from checkpoint.model import AGENT_CONTEXT_MARK, FileEdit, Role, SessionInfo, TurnDraft
from checkpoint.sources import turn_text
from checkpoint.sources.base import (
    EMPTY_TURN,
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
    line_id,
    text_of,
    whole_record,
    worked_in,
)
from checkpoint.sources.edits import each_edit, file_edit, resolved
from checkpoint.sources.layout import CODEX_ROLLOUT, COPILOT_STATE_DIR, chat_layout

AGENT = "claude"
DESKTOP_SESSIONS = "local-agent-mode-sessions"  # Claude Desktop: <...>/.claude/projects/<slug>/<session>.jsonl
HEAD_BYTES = 64 << 10  # how much of a legacy sub-agent file is read to find its parent session
MESSAGES_REMEMBERED = 64  # message ids whose blocks are remembered, to notice a block written twice
# Text the harness injects into user messages; it was not said in the session.
_INJECTED = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
# The attachments Claude Code records a hook's context and output in.
_HOOK_ATTACHMENTS = ("hook_additional_context", "hook_success")
_TITLE_KEYS = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}
_TITLE_RANK = {"first-prompt": 0, "summary": 1, "ai-title": 2, "custom-title": 3}
# Markers the harness writes as user text; never a session's title.
_NOT_A_TITLE = ("<", "[Request interrupted")
_SESSION_FIELD = re.compile(rb'"sessionId"\s*:\s*"([^"\\]+)"')
_NOT_IN_SLUG = re.compile(r"[^A-Za-z0-9]")
# Record types that are bookkeeping, not turns (request copies, costs, modes, queue state, links...):
# skipped by design. Any other type is skipped too, but counted under UNKNOWN_RECORD.
_BOOKKEEPING = frozenset({
    "system", "file-history-snapshot", "file-history-delta", "queue-operation", "last-prompt", "mode",
    "permission-mode", "worktree-state", "relocated", "pr-link", "frame-link", "bridge-session", "atis-latch",
    "started", "result", "agent-name", "api-request", "api-request-blob", "api-request-shape", "tools-used",
    "cost-state", "fork-context-ref", "tag",
})
# A line's head as Claude Code writes it, up to its top-level type: flat fields only (no `{`, `[` or
# escape before it, so every quote there is a string's edge and the type is the record's own).
_RECORD_START = b'{"parentUuid":'
SKIM_HEAD_BYTES = 2048  # a head longer than this is no head Claude Code writes: parsed
# Text the harness writes in the user's place when a background task, a Monitor or a scheduled
# job reports: a machine speaking, not the user (policy `machine_notification`).
_MACHINE_TAGS = ("<task-notification>", "<monitor-event", "<monitor-notification", "<background-task",
                 "<scheduled-task")
_MACHINE_MODES = frozenset({"task-notification", "monitor", "background-task", "task"})
MACHINE_NOTIFICATION = "machine_notification"
QUEUED_PROMPT = "queued_prompt"  # a queued prompt whose later user record is the one kept


def project_slugs(cwd: Path) -> set[str]:
    """The folder names under ~/.claude/projects that Claude Code gives sessions run in `cwd`: every
    character but letters and digits becomes "-" (seen with 2.1.328), for the path as given and as
    resolved (it may name either)."""
    return {_NOT_IN_SLUG.sub("-", str(p)) for p in (cwd, cwd.resolve())}


class ClaudeCodeReader:
    agent = AGENT
    deletes_old_transcripts = True  # cleanupPeriodDays after its last write (config.claude_cleanup_days)

    def edits_of_call(self, name: str, arguments: object, cwd: str | None) -> tuple[FileEdit, ...]:
        return edits_of_call(name, arguments, cwd)

    def claims_name(self, name: str) -> bool:
        return name.endswith(".jsonl")

    def looks_at(self, path: Path) -> Look:
        # A legacy sub-agent file beside the sessions names its session only in its lines.
        return Look(head=HEAD_BYTES) if _legacy_subagent(path) else Look()

    def locate(self, path: Path, head: Head) -> Claim | Refusal:
        if not _claude_path(path):
            return NOT_MINE
        if path.name.startswith("agent-"):
            # <session>/subagents/[workflows/<wf>/]agent-*.jsonl: the session is the nearest ancestor
            # named like a session; legacy agent-*.jsonl beside sessions learn it from their content.
            for ancestor in path.parents:
                if ancestor.name == "subagents" and ancestor.parent.name:
                    return Claim(FileRole(AGENT, ancestor.parent.name, subagent=True))
            known, session_id = _legacy_parent_session(head)
            return Claim(FileRole(AGENT, session_id, subagent=True)) if known else NOT_YET
        return Claim(FileRole(AGENT, path.stem))

    def skim(self, raw: bytes, state: JsonObject) -> str | None:
        """A progress copy (most lines of a real session: hook and bash progress) known from its
        head, as Claude Code writes it: `{"parentUuid":...` then flat fields (no object, array or
        escape before its `"type"`, so every quote there is a string's edge and the type is the
        record's own), with a `cwd` this file's reading already learnt. Such a line only counts
        under `progress_copy`, as `parse` finds; anything else (a file's first lines, a new cwd) is
        left to `parse`."""
        cwds = state.get("cwds")
        if not cwds or not raw.startswith(_RECORD_START) or "session_id" not in state:
            return None
        at = raw.find(b',"type":"progress",', 0, SKIM_HEAD_BYTES)
        if at < 0:
            return None
        head = at + 1  # the head is raw[:head], looked at in place (a copy of it costs as much as a look)
        if (raw.find(b"{", 1, head) >= 0 or raw.find(b"[", 0, head) >= 0 or raw.find(b"\\", 0, head) >= 0
                or not whole_record(raw, _RECORD_START)):
            return None
        start = raw.find(b',"cwd":"', 0, head) + 8
        end = raw.find(b'"', start, head)
        if start < 8 or end < 0 or raw[start:end].decode("utf-8", "replace") not in cwds:
            return None
        return "progress_copy"

    def parse(self, obj: JsonObject, raw: bytes, state: JsonObject) -> ParsedLine:
        out = ParsedLine()
        kind = obj.get("type")
        self._learn_session(obj, state, out)
        agent_id = obj.get("agentId")
        if isinstance(agent_id, str) and agent_id.startswith("acompact") and kind in ("user", "assistant"):
            out.dropped["compaction_summary"] += len(raw)
        elif kind == "user":
            self._user(obj, raw, state, out)
        elif kind == "assistant":
            self._assistant(obj, raw, state, out)
        elif kind == "progress":
            out.dropped["progress_copy"] += len(raw)
        elif kind == "attachment":
            self._attachment(obj, raw, state, out)
        elif kind in _TITLE_KEYS:
            title = obj.get(_TITLE_KEYS[kind])
            if isinstance(title, str):
                self._title(title, kind, state, out)
        elif kind == "queue-operation":
            self._queue_operation(obj, raw, state, out)
        elif kind not in _BOOKKEEPING:
            # New types appear every few releases: skipped, but never silently.
            out.dropped[UNKNOWN_RECORD] += len(raw)
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
        # isMeta marks injected text (skill bodies, caveats); newer versions also mark tool results
        # with it, and those results (and the edits they confirm) are real.
        meta = bool(obj.get("isMeta"))
        texts: list[str] = []
        results: list[str] = []
        failed = 0
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                if meta:
                    out.dropped["meta_injection"] += len(block["text"])
                else:
                    texts.append(self._said(block["text"], out))
            elif btype == "tool_result":
                results.append(self._tool_result(block, out))
                failed += block.get("is_error") is True
            elif btype in ("image", "document"):
                out.dropped["base64_image"] += _payload_size(block)
        # A failed or rejected edit touched nothing, whatever its result looks like.
        files = _applied_files(obj.get("toolUseResult")) if results and failed < len(results) else ()
        if results:
            text = "\n".join(t for t in texts + results if t)
            role = Role.TOOL
        else:
            text = "\n".join(t for t in texts if t)
            role = Role.USER
            if _is_machine(text, obj.get("origin")):
                out.dropped[MACHINE_NOTIFICATION] += len(text)
                return
            if text and _took_queued(text, state):
                # Its queue entry was already stored as the turn (see _queue_operation).
                out.dropped[QUEUED_PROMPT] += len(text)
                return
            if text and not text.startswith(_NOT_A_TITLE):
                self._title(text, "first-prompt", state, out)
            _said_by_user(text, state)
        if text or files:
            out.add(TurnDraft(_id(obj, raw), role, text, files, _str(obj.get("timestamp")), None))

    @staticmethod
    def _said(text: str, out: ParsedLine) -> str:
        found = _INJECTED.findall(text)
        if not found:
            return text
        for reminder in found:
            out.dropped["checkpoint_context" if AGENT_CONTEXT_MARK in reminder else "meta_injection"] += len(reminder)
        return _INJECTED.sub("", text).strip()

    def _tool_result(self, block: JsonObject, out: ParsedLine) -> str:
        content = block.get("content")
        if isinstance(content, list):
            kept = []
            for part in content:
                if isinstance(part, dict) and part.get("type") in ("image", "document"):
                    out.dropped["base64_image"] += _payload_size(part)
                elif isinstance(part, dict) and is_checkpoint_answer(part.get("text")):
                    out.dropped["checkpoint_context"] += len(part["text"])
                else:
                    kept.append(part)
            content = kept
        elif is_checkpoint_answer(content):
            out.dropped["checkpoint_context"] += len(str(content))
            content = ""
        return turn_text.tool_result(self._said(text_of(content), out), "error" if block.get("is_error") else None)

    def _assistant(self, obj: JsonObject, raw: bytes, state: JsonObject, out: ParsedLine) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            return
        if obj.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
            out.dropped["api_error_message"] += len(text_of(message.get("content")))
            return
        texts: list[str] = []
        tool_calls: list[str] = []
        edits: tuple[FileEdit, ...] = ()
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": text_of(content)}]
        message_id = message.get("id") if isinstance(message.get("id"), str) else None
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if message_id and _seen_before(message_id, block, state):
                out.dropped["message_copy"] += len(str(block.get("text") or block.get("thinking") or block))
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif btype == "thinking" and isinstance(block.get("thinking"), str):
                if block["thinking"].strip():
                    texts.append(turn_text.thinking(block["thinking"]))
                else:  # display omitted: only a signature
                    out.dropped[EMPTY_TURN] += len(block["thinking"]) or 1
            elif btype == "redacted_thinking":
                out.dropped["redacted_thinking"] += len(str(block.get("data", "")))
            elif btype in ("tool_use", "server_tool_use"):
                tool_calls.append(_tool_call(block))
                if block.get("name") in _EDIT_TOOLS:
                    edits += edits_of_call(block["name"], block.get("input"), state.get("cwd"))
        role = Role.ASSISTANT if texts else Role.TOOL
        text = "\n".join(texts + tool_calls)
        if text:
            out.add(TurnDraft(_id(obj, raw), role, text, (), _str(obj.get("timestamp")), message_id, edits=edits))

    def _attachment(self, obj: JsonObject, raw: bytes, state: JsonObject, out: ParsedLine) -> None:
        attachment = obj.get("attachment")
        if isinstance(attachment, dict) and attachment.get("type") in _HOOK_ATTACHMENTS:
            # Ignored like other attachments, but Checkpoint's own context is counted: it must be seen
            # to be left out, not merely happen to be.
            held = text_of(attachment.get("content")) + str(attachment.get("stdout") or "")
            if AGENT_CONTEXT_MARK in held:
                out.dropped["checkpoint_context"] += len(held)
            return
        # A prompt typed while the agent was busy (mid-turn steering) is the user speaking.
        if isinstance(attachment, dict) and attachment.get("type") == "queued_command":
            prompt = attachment.get("prompt")
            for block in prompt if isinstance(prompt, list) else []:
                if isinstance(block, dict) and block.get("type") in ("image", "document"):
                    out.dropped["base64_image"] += _payload_size(block)
            text = self._said(text_of(prompt), out)
            origin = attachment.get("origin")
            mode = attachment.get("commandMode")
            if _is_machine(text, origin) or (isinstance(mode, str) and mode in _MACHINE_MODES):
                out.dropped[MACHINE_NOTIFICATION] += len(text) or 1
                return
            if text and _took_queued(text, state):
                out.dropped[QUEUED_PROMPT] += len(text)
                return
            _said_by_user(text, state)
            if text:
                out.add(TurnDraft(_id(obj, raw), Role.USER, text, (), _str(obj.get("timestamp"))))

    def _queue_operation(self, obj: JsonObject, raw: bytes, state: JsonObject, out: ParsedLine) -> None:
        """A prompt typed while the agent works is queued (`enqueue`). Dequeued, it becomes a user
        record (or a `queued_command` attachment): that record is the turn. Removed from the queue
        without one having appeared since, the harness handed it to the model mid-turn, and the
        queue entry is the only place it is written (seen in real 2.1.39 transcripts; the compaction
        summary shows the model got it): stored then, as the user's turn, under the enqueue line's
        id. A user record of the same text appearing before marks it said (never stored twice);
        one appearing after is the copy (`queued_prompt`). Only whole lines are read, and a re-read
        replays the same lines in the same order: the same decision, the same ids."""
        operation = obj.get("operation")
        if operation == "enqueue":
            text = text_of(obj.get("content")).strip()
            if not text:
                return
            machine = _is_machine(text, None)
            if machine:
                out.dropped[MACHINE_NOTIFICATION] += len(text)
            # Every entry is queued, so that each dequeue and remove takes its own; only a prompt is
            # ever stored from here (a slash command comes back as its command record).
            queue: list[JsonObject] = state.setdefault("queue", [])
            queue.append({"id": line_id(raw), "text": text, "ts": _str(obj.get("timestamp")),
                          "prompt": not machine and not text.startswith("/")})
            del queue[:-QUEUE_REMEMBERED]  # a queue never emptied (a crash) costs nothing forever
        elif operation == "dequeue":
            queue = state.get("queue") or []
            if queue:
                queue.pop(0)  # becomes a user record: that record is the turn
        elif operation == "clear":
            state.pop("queue", None)  # the user emptied the queue: nothing of it was sent
        elif operation == "remove":
            # A remove names no entry. Seen (2.1.39): it takes the prompt just queued, while older
            # task notifications stay queued, never dequeued: so the newest prompt still waiting.
            queue = state.get("queue") or []
            waiting = [i for i, entry in enumerate(queue) if entry["prompt"]]
            if not waiting:
                if queue:
                    queue.pop()
                return
            entry = queue.pop(waiting[-1])
            taken: list[str] = state.setdefault("queued_taken", [])
            taken.append(entry["text"])
            del taken[:-QUEUED_REMEMBERED]
            out.add(TurnDraft(entry["id"], Role.USER, entry["text"], (), entry["ts"]))

    # -- session facts ----------------------------------------------------------------------------

    def _learn_session(self, obj: JsonObject, state: JsonObject, out: ParsedLine) -> None:
        cwd = obj.get("cwd")
        if obj.get("type") == "relocated":
            cwd = obj.get("relocatedCwd")
        if "cwd" not in state and isinstance(cwd, str):
            state["cwd"] = cwd
            out.session = _merge(out.session, cwd=cwd)
        if isinstance(cwd, str) and cwd:
            worked_in(cwd, state, out, _merge)
        if "session_id" not in state and isinstance(obj.get("sessionId"), str):
            state["session_id"] = obj["sessionId"]

    def _title(self, title: str, source: str, state: JsonObject, out: ParsedLine) -> None:
        if _TITLE_RANK[source] < state.get("title_rank", -1):
            return
        if source == "first-prompt" and "title_rank" in state:
            return
        state["title_rank"] = _TITLE_RANK[source]
        out.session = _merge(out.session, title=" ".join(title.split())[:120])


QUEUED_REMEMBERED = 16  # queued prompts stored from the queue, whose later user record is a copy
QUEUE_REMEMBERED = 32  # entries of the queue followed


def _is_machine(text: str, origin: object) -> bool:
    """Text a background task, Monitor or scheduler wrote in the user's place."""
    if text.lstrip().startswith(_MACHINE_TAGS):
        return True
    kind = origin.get("kind") if isinstance(origin, dict) else None
    return isinstance(kind, str) and kind in _MACHINE_MODES


def _said_by_user(text: str, state: JsonObject) -> None:
    """A user record arrived: a queued prompt of the same text became it, not lost."""
    queue = state.get("queue")
    if queue and text:
        for entry in queue:
            if entry["prompt"] and entry["text"] == text.strip():
                entry["prompt"] = False  # kept in the queue: its dequeue or remove is still to come
                return


def _took_queued(text: str, state: JsonObject) -> bool:
    """Whether this user text is the later record of a queued prompt already stored (once)."""
    taken = state.get("queued_taken")
    if taken and text.strip() in taken:
        taken.remove(text.strip())
        return True
    return False


def _under_projects(path: Path) -> bool:
    parts = path.parts
    return any(parts[i] == ".claude" and parts[i + 1] == "projects" for i in range(len(parts) - 1))


def _merge(info: SessionInfo | None, **fields: Any) -> SessionInfo:
    return replace(info, **fields) if info else SessionInfo(**{"id": "", "agent": AGENT, **fields})


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
    return turn_text.tool_call(str(name), rendered)


_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})


def edits_of_call(name: str, arguments: object, cwd: str | None) -> tuple[FileEdit, ...]:
    """Edit and MultiEdit write their `new_string`s, Write its `content`, to `file_path`;
    NotebookEdit its `new_source` to `notebook_path`."""
    if name not in _EDIT_TOOLS or not isinstance(arguments, dict):
        return ()
    if name == "NotebookEdit":
        return tuple(file_edit(arguments.get("notebook_path"), arguments.get("new_source") or "", cwd))
    path = arguments.get("file_path")
    if name == "Write":
        return tuple(file_edit(path, arguments.get("content"), cwd))
    changes = arguments.get("edits") if name == "MultiEdit" else [arguments]
    return tuple(each_edit(path, changes, "new_string", cwd))


def edited_paths(name: str, arguments: object, cwd: str | None) -> tuple[str, ...]:
    """The file an edit call names, whatever else its input holds (a PreToolUse hook may be given only
    `file_path`: the reminder is about the file, not the new text)."""
    if name not in _EDIT_TOOLS or not isinstance(arguments, dict):
        return ()
    path = arguments.get("notebook_path" if name == "NotebookEdit" else "file_path")
    return (resolved(path, cwd),) if isinstance(path, str) and path else ()


def _applied_files(result: object) -> tuple[str, ...]:
    """Files an edit tool really changed: a structured result, never an error string.

    Edit/MultiEdit carry `structuredPatch`, Write `type` create/update (both with `filePath`);
    NotebookEdit carries `notebook_path` and, when it failed, a non-empty `error`."""
    if not isinstance(result, dict):
        return ()
    if "structuredPatch" in result or result.get("type") in ("create", "update"):
        path = result.get("filePath")
    elif "notebook_path" in result and not result.get("error"):
        path = result.get("notebook_path")
    else:
        return ()
    return (path,) if isinstance(path, str) and path else ()


def _seen_before(message_id: str, block: JsonObject, state: JsonObject) -> bool:
    """Whether this block was already read under this message id (and remember it if not)."""
    try:
        digest = line_id(orjson.dumps(block, option=orjson.OPT_SORT_KEYS))
    except TypeError:
        return False
    seen: dict[str, list[str]] = state.setdefault("message_blocks", {})
    known = seen.get(message_id)
    if known is None:
        known = seen[message_id] = []
        while len(seen) > MESSAGES_REMEMBERED:
            del seen[next(iter(seen))]
    if digest in known:
        return True
    known.append(digest)
    return False


def _claude_path(path: Path) -> bool:
    """Whether the path may be a Claude Code transcript (the others' layouts and Claude Code's own
    files that hold no session are not)."""
    if path.suffix != ".jsonl" or path.name == "journal.jsonl" or "tool-results" in path.parts:
        return False
    if path.name.startswith(CODEX_ROLLOUT) or chat_layout(path):
        return False  # Codex's and Gemini CLI's, also before their readers claim them
    if COPILOT_STATE_DIR in path.parts[:-1]:
        return False  # Copilot CLI's folder: its events files are the Copilot reader's, the rest nobody's
    # Claude Desktop's own files beside its sessions' transcripts are not
    return DESKTOP_SESSIONS not in path.parts or _under_projects(path)


def _legacy_subagent(path: Path) -> bool:
    return (path.name.startswith("agent-") and _claude_path(path)
            and not any(a.name == "subagents" and a.parent.name for a in path.parents))


def _legacy_parent_session(found: Head) -> tuple[bool, str | None]:
    """The parent session of a legacy agent-*.jsonl (beside the session files): the sessionId of its
    lines. (False, None) while the file holds no complete line yet: claiming it then would file its
    turns under a made-up session for good."""
    if not found.regular:
        return True, None  # a FIFO (opening it waits for a writer), a directory, unreadable: the reading says so
    head = found.data[:HEAD_BYTES]
    for line in head.split(b"\n")[:-1]:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("sessionId"), str) and obj["sessionId"]:
            return True, obj["sessionId"]
    match = _SESSION_FIELD.search(head)
    if match:
        return True, match.group(1).decode("utf-8", errors="replace")
    return b"\n" in head or len(head) == HEAD_BYTES, None
