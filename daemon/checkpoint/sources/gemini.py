"""Gemini CLI sessions: ~/.gemini/tmp/<project>/chats/session-<time>-<short id>.jsonl, and the files
of its sub-agents, chats/<parent session id>/<sub-agent session id>.jsonl.

The format (gemini-cli 0.61, `ChatRecordingService`): an append-only JSONL log. A metadata record
(`sessionId`, `projectHash` = sha256 of the project root, `kind` main|subagent, a sub-agent's
`directories`) starts the file and every resume; message records (`id`, `type` user|gemini|info|
error|warning, `content`, a reply's `thoughts` and `toolCalls`) follow; `{"$set": {...}}` patches the
metadata, `{"$rewindTo": id}` drops the messages from `id` on. A message is written again, whole,
under the same id each time it changes (its token counts arrive, a tool call is added, a call's
result lands), and `$set.messages` writes the whole history again (at each start and resume).
Once in a while the file is rewritten whole (an old `.json` session converted, an unreadable file
replaced): a new inode, which the tailer re-reads from the start. Before the log (older gemini-cli)
a session was one pretty-printed `session-*.json` object rewritten whole at every message: read as
one record (the metadata with its `messages`), whole again at each change.

So the reader never trusts a record to be new: a turn's id is the message's id (and a tool call's
id within it), and what a message already gave is remembered by id, so that its later copies add
only what is new. What is not turned into turns, counted by policy:
- `history_copy`: a message of `$set.messages` already read; `message_update`: a message written
  again whose text was already read;
- `tool_result_copy`: the user record of a function response whose result the call (in the reply's
  `toolCalls`) already carried, or the other way round;
- `injected_context`: the `<session_context>` the CLI writes as the first user message (the
  workspace is learnt from it), and a hook's `<hook_context>` block, which leads the text of the
  prompt it came with (the prompt after it is a turn); `cli_notice`: info/error/warning messages;
- `checkpoint_context`: what Checkpoint itself fed the agent: its session-start hook's
  `<hook_context>` block and its MCP tools' answers (`<untrusted_context>`-wrapped tool results);
- `subagent_copy`: the sub-agent's final answer, in the parent's `invoke_agent` result and as the
  sub-agent file's `summary` (its own turns say it);
- `memory_scratchpad`: the CLI's memory notes. `$rewindTo` keeps the turns already read (they
  were said).

The workspace: the project root whose sha256 is the file's `projectHash`, found among the workspace
directories the session context lists, a sub-agent's `directories`, or the `.project_root` file
gemini-cli keeps in the project's folder and its `projects.json` (read by discovery beside the file,
carried into the file's state by the claim).
"""

from __future__ import annotations

import hashlib
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
    text_of,
    worked_in,
)
from checkpoint.sources.edits import file_edit
from checkpoint.sources.layout import chat_layout

AGENT = "gemini"
_INJECTED = ("<session_context>", "<hook_context>")
_HOOK_CONTEXT = "<hook_context>"
# A hook's context is put before the prompt it came with, in the prompt's own text part.
_HOOK_BLOCK = re.compile(r"\s*<hook_context>.*?(?:</hook_context>|\Z)\s*", re.DOTALL)
_WORKSPACE_LIST = re.compile(r"\*\*Workspace Directories:\*\*[ \t]*\n((?:[ \t]+- [^\n]+\n?)+)")
_NOTICES = frozenset({"info", "error", "warning"})
# Tools that write a file (their `file_path` is the file the turn touched, once the call succeeded).
_WRITE_TOOLS = frozenset({"write_file", "replace", "edit"})
_SUBAGENT_TOOLS = frozenset({"invoke_agent"})
_METADATA_KEYS = frozenset({"sessionId", "projectHash", "startTime", "lastUpdated", "kind", "directories",
                            "summary", "messages", "memoryScratchpad"})
HEAD_BYTES = 64 << 10  # the metadata record (ids, times, a sub-agent's directories) fits in this
REMEMBERED = 512  # message and call ids whose turns were read, per file (copies come soon after)
PROJECT_ROOT = ".project_root"  # in the project's folder: the root it is for
PROJECTS = "projects.json"  # beside tmp/: every project's root and its folder's short name


class GeminiReader:
    agent = AGENT

    def edits_of_call(self, name: str, arguments: object, cwd: str | None) -> tuple[FileEdit, ...]:
        """write_file writes its `content`, replace (edit, in older versions) its `new_string`."""
        if name not in _WRITE_TOOLS or not isinstance(arguments, dict):
            return ()
        path = arguments.get("file_path") or arguments.get("absolute_path") or arguments.get("path")
        return tuple(file_edit(path, arguments.get("content" if name == "write_file" else "new_string"), cwd))

    def claims_name(self, name: str) -> bool:
        # Older gemini-cli wrote one pretty-printed JSON object per session, rewritten whole.
        return name.endswith(".jsonl") or (name.startswith("session-") and name.endswith(".json"))

    def looks_at(self, path: Path) -> Look:
        layout = chat_layout(path)
        if layout is None:
            return Look()
        project = _project_dir(path, layout)
        beside = (project / PROJECT_ROOT, project.parent.parent / PROJECTS)
        if layout == "subagent":
            return Look(beside=beside)
        return Look(head=HEAD_BYTES, whole=layout == "legacy", beside=beside)

    def locate(self, path: Path, head: Head) -> Claim | Refusal:
        layout = chat_layout(path)
        if layout is None:
            return NOT_MINE
        if layout == "subagent":
            role = FileRole(AGENT, path.parts[-2], subagent=True)
        else:
            session_id = _session_in_head(path, head) if layout == "session" else _session_in_whole(path, head)
            if session_id is None:
                return NOT_YET
            role = FileRole(AGENT, session_id)
        roots = _project_roots(_project_dir(path, layout), head)
        return Claim(role, {"project_roots": roots} if roots else {})

    def parse(self, obj: JsonObject, raw: bytes, state: JsonObject) -> ParsedLine:
        out = ParsedLine()
        if isinstance(obj.get("$set"), dict):
            self._set(obj["$set"], state, out)
        elif isinstance(obj.get("$rewindTo"), str):
            pass  # the turns after it were said; what follows has new ids
        elif isinstance(obj.get("id"), str):
            self._message(obj, state, out, copy_of_history=False)
        elif isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str):
            self._metadata(obj, state, out)
        else:
            out.dropped[UNKNOWN_RECORD] += len(raw)
        return out

    # -- records ----------------------------------------------------------------------------------

    def _metadata(self, meta: JsonObject, state: JsonObject, out: ParsedLine) -> None:
        if "sid" not in state:
            state["sid"] = meta["sessionId"]
            state["session_id"] = meta["sessionId"]
        state["hash"] = meta["projectHash"]
        if meta.get("kind") == "subagent":
            state["subagent"] = True
        directories = meta.get("directories")
        if isinstance(directories, list):
            self._workspace([d for d in directories if isinstance(d, str)], state, out)
        elif (root := _known_root(state, meta["projectHash"])) is not None:
            self._workspace([root], state, out)
        if isinstance(meta.get("messages"), list):  # a whole session in one record (a converted .json)
            for message in meta["messages"]:
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self._message(message, state, out, copy_of_history=True)
        if isinstance(meta.get("summary"), str):
            self._summary(meta["summary"], state, out)

    def _set(self, patch: JsonObject, state: JsonObject, out: ParsedLine) -> None:
        if isinstance(patch.get("messages"), list):
            for message in patch["messages"]:
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self._message(message, state, out, copy_of_history=True)
        if isinstance(patch.get("summary"), str):
            self._summary(patch["summary"], state, out)
        if isinstance(patch.get("directories"), list):
            self._workspace([d for d in patch["directories"] if isinstance(d, str)], state, out)
        if patch.get("memoryScratchpad"):
            out.dropped["memory_scratchpad"] += len(orjson.dumps(patch["memoryScratchpad"]))
        if isinstance(patch.get("sessionId"), str) and "sid" not in state:
            state["sid"] = state["session_id"] = patch["sessionId"]
        unknown = [k for k in patch if k not in _METADATA_KEYS]
        if unknown:
            out.dropped[UNKNOWN_RECORD] += len(orjson.dumps({k: patch[k] for k in unknown}))

    def _message(self, msg: JsonObject, state: JsonObject, out: ParsedLine, *, copy_of_history: bool) -> None:
        kind = msg.get("type")
        mid = str(msg["id"])
        timestamp = msg.get("timestamp") if isinstance(msg.get("timestamp"), str) else None
        content = msg.get("content")
        parts = content if isinstance(content, list) else [content] if content is not None else []
        text = _text(parts)
        if kind == "user" and text.lstrip().startswith(_HOOK_CONTEXT):
            text = _without_hook_context(text, out)
            if not text.strip():
                return
        if kind == "user" and text.lstrip().startswith(_INJECTED):
            out.dropped["injected_context"] += len(text)
            found = _WORKSPACE_LIST.search(text)
            if found:
                self._workspace([line.strip()[2:].strip() for line in found.group(1).splitlines() if line.strip()],
                                state, out)
            return
        if kind in _NOTICES:
            out.dropped["cli_notice"] += len(text) or 1
            return
        if kind not in ("user", "gemini"):
            out.dropped[UNKNOWN_RECORD] += len(orjson.dumps(msg))
            return
        responses = [p["functionResponse"] for p in parts
                     if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)]
        if kind == "user" and responses:
            for response in responses:
                self._response(response, mid, timestamp, state, out)
            return
        if copy_of_history and not _remember(state, "ids", mid):
            # A message read before, written again with the whole history: its text is not compared
            # (the history splits and joins parts its own way); only calls not read yet are new.
            out.dropped["history_copy"] += len(text) or 1
            calls = msg.get("toolCalls") if kind == "gemini" else None
            for call in calls if isinstance(calls, list) else []:
                if isinstance(call, dict):
                    self._call(call, mid, timestamp, state, out, "history_copy")
            return
        _remember(state, "ids", mid)
        if kind == "user":
            if _remember(state, "said", f"{mid}#{_digest(text)}"):
                if text.strip():
                    self._title(text, state, out, rank=0)
                out.add(TurnDraft(self._id(state, f"{mid}#{_digest(text)}"), Role.USER, text, (), timestamp))
            else:
                out.dropped["message_update"] += len(text) or 1
        else:
            self._reply(msg, mid, text, timestamp, state, out)

    def _reply(self, msg: JsonObject, mid: str, text: str, timestamp: str | None, state: JsonObject,
               out: ParsedLine) -> None:
        thoughts = msg.get("thoughts")
        thought_text = [turn_text.thinking(_thought(t)) for t in thoughts if isinstance(t, dict)] \
            if isinstance(thoughts, list) else []
        said = "\n".join(t for t in (*thought_text, text) if t.strip())
        if said.strip():
            # One turn per text a reply had, its id the message's and the text's: the same text again
            # is a copy (tokens or calls were added), and a file rewritten whole gives the same ids.
            # The thoughts go with the text but are not its key: the history writes a reply's thoughts
            # as parts of its content, or not at all.
            key = f"{mid}#{_digest(text if text.strip() else said)}"
            if _remember(state, "said", key):
                out.add(TurnDraft(self._id(state, key), Role.ASSISTANT, said, (), timestamp, mid))
            else:
                out.dropped["message_update"] += len(said)
        calls = msg.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                self._call(call, mid, timestamp, state, out, "message_update")

    def _call(self, call: JsonObject, mid: str, timestamp: str | None, state: JsonObject, out: ParsedLine,
              copy_policy: str) -> None:
        name = str(call.get("name") or "tool")
        call_id = str(call.get("id") or f"{mid}:{name}")
        args = call.get("args")
        if _remember(state, "calls", call_id):
            rendered = orjson.dumps(args).decode() if args is not None else ""
            out.add(TurnDraft(self._id(state, f"call:{call_id}"), Role.TOOL, turn_text.tool_call(name, rendered), (),
                              _str(call.get("timestamp")) or timestamp, mid,
                              edits=self.edits_of_call(name, args, _str(state.get("cwd")))))
        else:
            out.dropped[copy_policy] += 1
        status = call.get("status")
        result = call.get("result")
        if result is None or status not in ("success", "error", "cancelled"):
            return  # still running: its result comes in a later copy of the message
        if name in _SUBAGENT_TOOLS:
            self._subagent_result(call_id, result, state, out)
            return
        files = _written(name, args, call.get("resultDisplay"), state) if status == "success" else ()
        body = _result_text(result)
        if _remember(state, "results", call_id):
            body = _not_checkpoints(body, out)
            marker = None if status == "success" else str(status)
            out.add(TurnDraft(self._id(state, f"result:{call_id}"), Role.TOOL, turn_text.tool_result(body, marker),
                              files, _str(call.get("timestamp")) or timestamp, mid))
        else:
            out.dropped["tool_result_copy"] += len(body) or 1
            if files:  # its result was stored from the user record first, which names no file
                out.add(TurnDraft(self._id(state, f"files:{call_id}"), Role.TOOL,
                                  f"[{name} changed]\n" + "\n".join(files), files,
                                  _str(call.get("timestamp")) or timestamp, mid))

    def _response(self, response: JsonObject, mid: str, timestamp: str | None, state: JsonObject,
                  out: ParsedLine) -> None:
        """A function response as a user record: the call's result, unless the call already gave it."""
        call_id = str(response.get("id") or mid)
        body = _result_text([{"functionResponse": response}])
        if str(response.get("name")) in _SUBAGENT_TOOLS:
            self._subagent_result(call_id, [{"functionResponse": response}], state, out)
        elif _remember(state, "results", call_id):
            body = _not_checkpoints(body, out)
            out.add(TurnDraft(self._id(state, f"result:{call_id}"), Role.TOOL, turn_text.tool_result(body), (),
                              timestamp, mid))
        else:
            out.dropped["tool_result_copy"] += len(body) or 1

    def _subagent_result(self, call_id: str, result: object, state: JsonObject, out: ParsedLine) -> None:
        body = _result_text(result)
        if _remember(state, "results", call_id):
            out.add(TurnDraft(self._id(state, f"result:{call_id}"), Role.TOOL,
                              turn_text.tool_result("(the sub-agent's answer: in its own turns)"), ()))
        out.dropped["subagent_copy"] += len(body) or 1

    # -- session facts ----------------------------------------------------------------------------

    def _summary(self, summary: str, state: JsonObject, out: ParsedLine) -> None:
        if state.get("subagent"):
            out.dropped["subagent_copy"] += len(summary) or 1  # the sub-agent's answer, not a title
        else:
            self._title(summary, state, out, rank=1)

    @staticmethod
    def _title(text: str, state: JsonObject, out: ParsedLine, *, rank: int) -> None:
        if state.get("title_rank", -1) >= rank or state.get("subagent"):
            return
        state["title_rank"] = rank
        out.session = _session(out.session, title=" ".join(text.split())[:120])

    def _workspace(self, candidates: list[str], state: JsonObject, out: ParsedLine) -> None:
        """The project root among the folders a record names: the one whose sha256 is the file's
        projectHash (gemini-cli's own key), else the first. Each is a folder the session worked in."""
        candidates = [c for c in candidates if os.path.isabs(c)]
        if not candidates:
            return
        digest = state.get("hash")
        own = next((c for c in candidates if hashlib.sha256(c.encode()).hexdigest() == digest), None)
        if own is None and isinstance(digest, str):
            own = _known_root(state, digest)
        chosen = own or candidates[0]
        # A root checked against the hash is the session's for good; an unchecked one only stands in.
        if not state.get("cwd_verified") and (own is not None or "cwd" not in state) and state.get("cwd") != chosen:
            state["cwd"] = chosen
            state["cwd_verified"] = own is not None
            out.session = _session(out.session, cwd=chosen)
        for folder in [chosen, *candidates]:
            worked_in(folder, state, out, _session)

    @staticmethod
    def _id(state: JsonObject, key: str) -> str:
        # Message ids are UUIDs, but the session context's is the same in every session, and call
        # ids are the tool's name and a clock: scoped by session, they are unique in the store.
        return f"gemini:{state.get('sid', '')}:{key}"


def _project_dir(path: Path, layout: str) -> Path:
    return path.parent.parent.parent if layout == "subagent" else path.parent.parent


def _project_roots(project_dir: Path, head: Head) -> list[str]:
    """The roots the project folder may be for: its `.project_root`, and those gemini-cli's
    `projects.json` gives this folder (by its short name, or by the root's sha256 for a folder still
    named by its hash, from before the short names). The reading keeps the one whose sha256 is the
    file's projectHash, gemini-cli's own key."""
    roots: list[str] = []
    try:
        root = head.beside.get(project_dir / PROJECT_ROOT, b"").decode("utf-8").strip()
    except UnicodeDecodeError:
        root = ""
    if root:
        roots.append(root)
    try:
        data = orjson.loads(head.beside.get(project_dir.parent.parent / PROJECTS, b"null"))
    except orjson.JSONDecodeError:
        data = None  # a broken registry: the other sources name the root
    projects = data.get("projects") if isinstance(data, dict) else None
    if isinstance(projects, dict):
        folder = project_dir.name
        roots.extend(p for p, name in projects.items() if isinstance(p, str) and p not in roots
                     and (name == folder or hashlib.sha256(p.encode()).hexdigest() == folder))
    return roots


def _known_root(state: JsonObject, digest: str) -> str | None:
    """The root the files beside this one named (the claim's facts) whose sha256 is `digest`."""
    roots = state.get("project_roots")
    if not isinstance(roots, list):
        return None
    return next((r for r in roots if isinstance(r, str) and hashlib.sha256(r.encode()).hexdigest() == digest), None)


def _session_in_head(path: Path, found: Head) -> str | None:
    """The session id of the file's first record (the file name holds only 8 of its characters);
    None while that record is not complete (claimed then, the file would be filed under its name for
    good); the name when the first line is no metadata record (or the path is no regular file: the
    reading says what it is)."""
    if not found.regular:
        return path.stem
    head = found.data[:HEAD_BYTES]
    end = head.find(b"\n")
    if end < 0:
        return path.stem if len(head) == HEAD_BYTES else None
    try:
        record = orjson.loads(head[:end])
    except orjson.JSONDecodeError:
        return path.stem
    session_id = record.get("sessionId") if isinstance(record, dict) else None
    return session_id if isinstance(session_id, str) and session_id else path.stem


def _session_in_whole(path: Path, found: Head) -> str | None:
    """The session id of a legacy whole-JSON session. None while it is not one whole object and was
    written in the last seconds (being written); the name when it is no session object, so that
    reading it says what is wrong."""
    if not found.regular:
        return path.stem
    try:
        record = orjson.loads(found.data)
    except orjson.JSONDecodeError:
        return path.stem if found.settled else None
    session_id = record.get("sessionId") if isinstance(record, dict) else None
    return session_id if isinstance(session_id, str) and session_id else path.stem


def _remember(state: JsonObject, what: str, key: str) -> bool:
    """True the first time `key` is seen under `what` in this file (and remember it)."""
    seen: list[str] = state.setdefault(what, [])
    if key in seen:
        return False
    seen.append(key)
    del seen[:-REMEMBERED]
    return True


def _digest(text: str) -> str:
    """The text's key, blind to whitespace: the history joins a message's parts its own way, and a
    message forgotten (REMEMBERED) and read again from it must get the id it had."""
    return hashlib.blake2b("".join(text.split()).encode("utf-8", "replace"), digest_size=8).hexdigest()


def _text(parts: list[Any]) -> str:
    """The text of a message's parts (a reply's content is a string, a user's a list of parts);
    thought parts are not its text (the reply's `thoughts` hold them)."""
    kept = [p for p in parts if not (isinstance(p, dict) and p.get("thought"))]
    return text_of(kept)


def _thought(thought: JsonObject) -> str:
    subject, description = _str(thought.get("subject")), _str(thought.get("description"))
    return f"{subject}: {description}" if subject and description else subject or description or ""


def _result_text(result: object) -> str:
    """The output of a call's result (function response parts, or a string)."""
    if isinstance(result, str):
        return result
    texts: list[str] = []
    for part in result if isinstance(result, list) else [result]:
        if not isinstance(part, dict):
            continue
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            if isinstance(body, dict) and isinstance(body.get("output"), str):
                texts.append(body["output"])
            elif isinstance(body, dict) and isinstance(body.get("error"), str):
                texts.append(f"(error) {body['error']}")
            elif body is not None:
                texts.append(orjson.dumps(body).decode())
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def _without_hook_context(text: str, out: ParsedLine) -> str:
    """The prompt after the hooks' `<hook_context>` blocks that lead it, each counted: Checkpoint's
    session-start context under CHECKPOINT_CONTEXT, another hook's under `injected_context`."""
    while (block := _HOOK_BLOCK.match(text)) is not None:
        held = block.group(0)
        out.dropped[CHECKPOINT_CONTEXT if is_checkpoint_context(held) else "injected_context"] += len(held)
        text = text[block.end():]
    return text


def _not_checkpoints(body: str, out: ParsedLine) -> str:
    """A result's text, or nothing when it is a Checkpoint MCP tool's answer (counted): the call
    stays a turn, the answer is what Checkpoint already holds."""
    if is_checkpoint_answer(body):
        out.dropped[CHECKPOINT_CONTEXT] += len(body)
        return ""
    return body


def _written(name: str, args: object, display: object, state: JsonObject) -> tuple[str, ...]:
    """The file a successful write or edit changed: its `file_path`, made absolute from the workspace."""
    path = None
    if name in _WRITE_TOOLS and isinstance(args, dict):
        path = args.get("file_path") or args.get("absolute_path") or args.get("path")
    if not isinstance(path, str) and isinstance(display, dict) and "fileDiff" in display:
        path = display.get("filePath")
    if not isinstance(path, str) or not path:
        return ()
    cwd = state.get("cwd")
    if not os.path.isabs(path) and isinstance(cwd, str):
        path = os.path.normpath(os.path.join(cwd, path))
    return (path,)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _session(info: SessionInfo | None = None, **fields: Any) -> SessionInfo:
    return replace(info, **fields) if info else SessionInfo(**{"id": "", "agent": AGENT, **fields})
