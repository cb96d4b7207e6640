"""opencode sessions: the SQLite database ~/.local/share/opencode/opencode.db (opencode-<channel>.db
for a channel build), as opencode 1.x writes it.

Reading opencode's database is this reader's job; Checkpoint's own SQL is the store's alone. The
database is opened read-only (`mode=ro`, `query_only`), read in one short read transaction (a
consistent snapshot; in WAL mode a reader never blocks opencode's writes) and closed at once.

The tables read: `session` (id, parent_id, directory, title, time_updated), `message` (one row per
user or assistant message, its JSON in `data`) and `part` (the message's parts: text, reasoning, tool
calls with their input and output). Each part worth keeping is one turn whose id hashes what the
part holds and when its message was created, so a re-read never stores a turn twice, and neither
does a fork: `opencode run --fork` copies the session's messages and parts, with new ids but the
same content and creation times, into a session of its own (its turns are only its new ones).

A session's progress is the (time_created, id) of its last message read, stored with its turns; a
message is read only once it is complete (an assistant message with `time.completed` or an error,
any message followed by another one, or unchanged for STALE_SECONDS), and reading stops before the
first one that is not, so that text still streaming is never stored cut short and nothing after it
is skipped. Unchanged sessions (the same update time, message count and newest message) are not
read at all.

Sub-sessions (the task tool's sub-agents: `parent_id`) belong to their root session. Copies, each a
named policy: the task tool's output (the sub-agent's final answer, which its own session holds) is
`subagent_copy`, as is a `subtask` part's prompt; text opencode injects itself (`synthetic`) is
`injected_context`; what Checkpoint itself fed the agent (its MCP tools' answers, as a tool's output)
is `checkpoint_context`; a compaction's summary is `compaction_summary`. Step markers, snapshots and
patches (the files a step changed, also named by its tool calls) are bookkeeping; other part types
are counted under `unknown_record`. The files a turn touched come from its edit tools' input.

The older JSON layout (storage/session, storage/message, storage/part; opencode migrates it into the
database) is not read.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from checkpoint.model import FileEdit, Role, SessionInfo, TurnDraft
from checkpoint.sources import turn_text
from checkpoint.sources.base import (
    CHECKPOINT_CONTEXT,
    NOT_MINE,
    UNKNOWN_RECORD,
    Claim,
    FileRole,
    Head,
    JsonObject,
    Look,
    ParsedLine,
    Refusal,
    SessionRead,
    is_checkpoint_answer,
    line_id,
    worked_in,
)
from checkpoint.sources.edits import file_edit, patch_edits

AGENT = "opencode"
_DB_NAME = re.compile(r"opencode(?:-[A-Za-z0-9._-]+)?\.db")
# A message neither completed nor followed by another, unchanged this long: its writer is gone
# (killed mid-answer); read as it is rather than waited for forever.
STALE_SECONDS = 600.0
BUSY_MS = 2000  # most a read waits for a lock opencode holds (rollback-journal databases only)
SUBAGENT_COPY = "subagent_copy"
_BOOKKEEPING = frozenset({"step-start", "step-finish", "snapshot", "patch", "agent", "retry"})
_EDIT_TOOLS = frozenset({"write", "edit", "multiedit", "patch", "apply_patch"})
_DEFAULT_TITLE = re.compile(r"(?:New|Child) session - \d{4}-\d\d-\d\dT")
MESSAGES_PER_READ = 5000  # a long session is read on in several scans; memory stays bounded


class OpencodeReader:
    agent = AGENT

    def edits_of_call(self, name: str, arguments: object, cwd: str | None) -> tuple[FileEdit, ...]:
        return edits_of_call(name, arguments, cwd)

    def claims_name(self, name: str) -> bool:
        # The -wal file too: opencode's writes land there first, and the watcher must wake for them.
        return _DB_NAME.fullmatch(name.removesuffix("-wal")) is not None

    def looks_at(self, path: Path) -> Look:
        return Look()  # a database: its name says so, its sessions are read by read_sessions

    def locate(self, path: Path, head: Head) -> Claim | Refusal:
        if _DB_NAME.fullmatch(path.name) is None:
            return NOT_MINE
        return Claim(FileRole(AGENT, None))  # many sessions: each one's role comes with its records

    def parse(self, obj: JsonObject, raw: bytes, state: JsonObject) -> ParsedLine:
        """Not a line format: read_sessions reads it. A line handed here is no opencode record."""
        out = ParsedLine()
        out.dropped[UNKNOWN_RECORD] += len(raw)
        return out

    def read_sessions(self, path: Path, known: Mapping[str, tuple[int, JsonObject]]) -> Iterator[SessionRead]:
        rows = _snapshot(path, known)
        sessions, messages, parts = rows
        parents = {sid: parent for sid, parent, *_ in sessions}
        for sid, _, directory, title, version in sessions:
            key = f"{path}#{sid}"
            stored = known.get(key)
            state = dict(stored[1]) if stored else {}
            root = _root(sid, parents)
            read = SessionRead(key, FileRole(AGENT, root, subagent=root != sid), version,
                               int(state.get("after", [0])[0]), int(state.get("messages", 0)), state)
            named = bool(title) and not _DEFAULT_TITLE.match(title)
            if named:
                state["titled"] = True  # opencode's own title, not the first prompt's start
            first = ParsedLine(session=_session(cwd=directory or None, title=title if named else None))
            if directory:
                worked_in(directory, state, first, _session)
            read.records.append((read.consumed, first))
            _read_messages(read, messages.get(sid, []), parts)
            yield read


def _snapshot(path: Path, known: Mapping[str, tuple[int, JsonObject]]) -> tuple[
        list[tuple[Any, ...]], dict[str, list[tuple[Any, ...]]], dict[str, list[tuple[str, str]]]]:
    """The changed sessions, their messages after each one's progress and those messages' parts,
    read in one read transaction. Raises sqlite3.Error (a database locked, not opencode's, corrupt)."""
    conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=BUSY_MS / 1000,
                           isolation_level=None)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("BEGIN")  # one snapshot: sessions, messages and parts agree with each other
        # Its version: its own update time, how many messages it has and the newest one's creation
        # (from opencode's index on message: no message row is read for it). A message still being
        # written when last read keeps its session's version unset (see _read_messages).
        sessions = [(*row[:4], _version(row[4:])) for row in conn.execute(
            "SELECT s.id, s.parent_id, s.directory, s.title, s.time_updated, m.n, m.newest FROM session s"
            " LEFT JOIN (SELECT session_id, count(*) AS n, max(time_created) AS newest FROM message"
            " GROUP BY session_id) m ON m.session_id = s.id ORDER BY s.time_created, s.id")]
        changed = [s for s in sessions if (known.get(f"{path}#{s[0]}") or (None,))[0] != s[4]]
        messages: dict[str, list[tuple[Any, ...]]] = {}
        parts: dict[str, list[tuple[str, str]]] = {}
        for sid, *_ in changed:
            stored = known.get(f"{path}#{sid}")
            after = (stored[1].get("after") if stored else None) or [0, ""]
            rows = conn.execute(
                "SELECT id, time_created, time_updated, data FROM message WHERE session_id = ?"
                " AND (time_created > ? OR (time_created = ? AND id > ?)) ORDER BY time_created, id LIMIT ?",
                (sid, after[0], after[0], after[1], MESSAGES_PER_READ + 1),
            ).fetchall()
            messages[sid] = rows
            for mid, *_ in rows:
                parts[mid] = conn.execute("SELECT id, data FROM part WHERE message_id = ? ORDER BY id",
                                          (mid,)).fetchall()
        conn.execute("COMMIT")
    finally:
        conn.close()
    return changed, messages, parts


def _version(values: tuple[Any, ...]) -> int:
    """One number for the values (a 56-bit hash: it fits the store's integer column)."""
    return int.from_bytes(hashlib.blake2b(repr(values).encode(), digest_size=7).digest(), "big")


def _root(sid: str, parents: Mapping[str, str | None]) -> str:
    """The session a sub-session's sub-sessions lead up to (a loop or a missing parent ends it)."""
    seen = {sid}
    while (parent := parents.get(sid)) and parent not in seen and parent in parents:
        seen.add(parent)
        sid = parent
    return sid


def _read_messages(read: SessionRead, rows: list[tuple[Any, ...]], parts: Mapping[str, list[tuple[str, str]]]) -> None:
    """Turn the session's new messages into records, in order, up to the first incomplete one."""
    now = time.time() * 1000
    more = len(rows) > MESSAGES_PER_READ
    rows = rows[:MESSAGES_PER_READ]
    for i, (mid, created, updated, data) in enumerate(rows):
        message = _json(data)
        followed = i + 1 < len(rows)
        if not (followed or _complete(message) or now - int(updated) >= STALE_SECONDS * 1000):
            read.version = -1  # something is still being written: read this session again next time
            return
        read.consumed += 1
        before = turn_text.tool_output_left_out()
        parsed = _message(message, mid, parts.get(mid, []), read.state)
        if turn_text.tool_output_left_out() > before:  # its tool output cut by policy: counted as the message's
            parsed.dropped[turn_text.TOOL_OUTPUT] += turn_text.tool_output_left_out() - before
        read.records.append((read.consumed, parsed))
        read.state["after"] = [int(created), mid]
        read.state["messages"] = read.consumed
        read.progress = int(created)
    if more:
        read.version = -1  # more than one read's worth: read on at the next scan


def _complete(message: JsonObject) -> bool:
    if message.get("role") == "assistant":
        times = message.get("time")
        return bool(isinstance(times, dict) and times.get("completed")) or bool(message.get("error"))
    return False  # a user message: complete once an answer (any later message) follows, or stale


def _message(message: JsonObject, mid: str, parts: list[tuple[str, str]], state: JsonObject) -> ParsedLine:
    out = ParsedLine()
    role = Role.USER if message.get("role") == "user" else Role.ASSISTANT
    times = message.get("time")
    stamp = _iso(times.get("created")) if isinstance(times, dict) else None
    path = message.get("path")
    cwd = path["cwd"] if isinstance(path, dict) and isinstance(path.get("cwd"), str) and path["cwd"] else None
    if cwd:
        worked_in(cwd, state, out, _session)
    summary = role is Role.ASSISTANT and message.get("summary") is True
    key = f"{AGENT}:{message.get('role')}:{times.get('created') if isinstance(times, dict) else mid}:".encode()
    repeats: Counter[str] = Counter()
    for _, data in parts:
        part = _json(data)
        kind = part.get("type")
        # Not the part's id: a fork's copy has another one. The same bytes twice in one message
        # (two identical parts) are told apart by their order.
        repeats[data] += 1
        turn_id = line_id(key + data.encode() + (b"#%d" % repeats[data] if repeats[data] > 1 else b""))
        text: str = part["text"] if isinstance(part.get("text"), str) else ""
        if kind == "text":
            if summary:
                out.dropped["compaction_summary"] += len(text) or 1
            elif part.get("synthetic") or part.get("ignored"):
                out.dropped["injected_context"] += len(text) or 1
            else:
                out.add(TurnDraft(turn_id, role, text, (), stamp, mid))
                if role is Role.USER and text.strip() and not state.get("titled"):
                    state["titled"] = True
                    out.session = _session(out.session, title=" ".join(text.split())[:120])
        elif kind == "reasoning":
            said = turn_text.reasoning(text) if text.strip() else ""
            out.add(TurnDraft(turn_id, Role.ASSISTANT, said, (), stamp, mid))
        elif kind == "tool":
            tool_text, files, (policy, copied) = _tool(part)
            if copied:
                out.dropped[policy] += copied
            edits = _edits(part, cwd)
            out.add(TurnDraft(turn_id, Role.TOOL, tool_text, files, stamp, mid, edits=edits))
        elif kind == "file":
            url = part.get("url")
            if isinstance(url, str) and url.startswith("data:"):
                out.dropped["attached_file_data"] += len(url)
            source = part.get("source")
            where = source.get("path") if isinstance(source, dict) else None
            name = where if isinstance(where, str) else part.get("filename") or "file"
            out.add(TurnDraft(turn_id, role, f"[attached file] {name}", (), stamp, mid))
        elif kind == "subtask":
            # An agent invoked by name: its prompt is the sub-session's first message.
            out.dropped[SUBAGENT_COPY] += len(str(part.get("prompt") or "")) or 1
        elif kind == "compaction":
            out.dropped["compaction_summary"] += 1
        elif kind not in _BOOKKEEPING:
            out.dropped[UNKNOWN_RECORD] += len(data)
    return out


def _tool(part: JsonObject) -> tuple[str, tuple[str, ...], tuple[str, int]]:
    """A tool part's text (its input, then its output or error), the files it edited, and the
    characters of its output left out, by policy: a sub-agent's answer (the task tool's output: its
    session holds it), or a Checkpoint MCP tool's answer (what Checkpoint already holds)."""
    name = str(part.get("tool") or "tool")
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    assert isinstance(state, dict)
    given = state.get("input")
    text = turn_text.tool_call(name, orjson.dumps(given).decode() if given else "").rstrip()
    left_out = (SUBAGENT_COPY, 0)
    status = state.get("status")
    if status == "completed":
        output = state.get("output")
        result = output if isinstance(output, str) else orjson.dumps(output).decode() if output else ""
        if name == "task":
            left_out = (SUBAGENT_COPY, len(result) or 1)
            result = "(the sub-agent's answer: in its own turns)"
        elif is_checkpoint_answer(result):
            left_out = (CHECKPOINT_CONTEXT, len(result))
            result = ""
        text += "\n" + turn_text.tool_result(result)
    elif status == "error":
        text += "\n" + turn_text.tool_error(str(state.get("error") or ""))
    files: list[str] = []
    if name in _EDIT_TOOLS and status == "completed":
        for value in (given if isinstance(given, dict) else {}, state.get("metadata") or {}):
            if isinstance(value, dict):
                for field in ("filePath", "filepath", "path"):
                    if isinstance(value.get(field), str) and value[field] not in files:
                        files.append(value[field])
    return text, tuple(files), left_out


def _edits(part: JsonObject, cwd: str | None) -> tuple[FileEdit, ...]:
    name = part.get("tool")
    if name not in _EDIT_TOOLS:
        return ()
    call = part.get("state")
    return edits_of_call(str(name), call.get("input") if isinstance(call, dict) else None, cwd)


def edits_of_call(name: str, arguments: object, cwd: str | None) -> tuple[FileEdit, ...]:
    """write writes its `content`, edit its `newString`, multiedit each of its edits' `newString`,
    patch and apply_patch their `patchText`, to `filePath`."""
    if name not in _EDIT_TOOLS or not isinstance(arguments, dict):
        return ()
    if name in ("patch", "apply_patch"):
        return patch_edits(arguments.get("patchText") or arguments, cwd)
    path = arguments.get("filePath")
    if name == "multiedit":
        changes = arguments.get("edits")
        return tuple(edit for change in changes if isinstance(change, dict)
                     for edit in file_edit(change.get("filePath") or path, change.get("newString"), cwd)) \
            if isinstance(changes, list) else ()
    return tuple(file_edit(path, arguments.get("content" if name == "write" else "newString"), cwd))


def _json(data: object) -> JsonObject:
    try:
        value = orjson.loads(data) if isinstance(data, str | bytes) else None
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _iso(ms: object) -> str | None:
    if not isinstance(ms, int | float) or isinstance(ms, bool):
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _session(info: SessionInfo | None = None, **fields: Any) -> SessionInfo:
    return replace(info, **fields) if info else SessionInfo(**{"id": "", "agent": AGENT, **fields})
