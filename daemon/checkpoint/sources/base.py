"""What every transcript reader provides, and the tolerant line decoder they share."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import orjson

from checkpoint.model import AGENT_ANSWER_MARK, AGENT_CONTEXT_MARK, FileEdit, SessionInfo, TurnDraft

JsonObject = dict[str, Any]


@dataclass
class ParsedLine:
    turns: list[TurnDraft] = field(default_factory=list)
    session: SessionInfo | None = None
    # Content deliberately not sent, by named policy: policy -> characters (or 1 per record).
    dropped: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))  # one per line: not a Counter

    def add(self, draft: TurnDraft) -> None:
        """Keep a turn, without terminal escapes; one with nothing but whitespace (and no file it
        touched) is not a turn: counted under EMPTY_TURN."""
        draft.text = without_terminal_escapes(draft.text, self.dropped)
        # (not text or text.isspace()) is (not text.strip()) without copying a long text to find out
        if (not draft.text or draft.text.isspace()) and not draft.files:
            self.dropped[EMPTY_TURN] += len(draft.text) or 1
            return
        self.turns.append(draft)


@dataclass(frozen=True)
class FileRole:
    """Where a file sits: which session it belongs to, if the path says so."""

    agent: str
    session_id: str | None  # None: learn it from the content (legacy Claude sub-agent files)
    subagent: bool = False


@dataclass(frozen=True)
class Look:
    """What a reader must see of a file to say whether it is its own (`Reader.looks_at`)."""

    head: int = 0  # the file's first bytes `locate` needs (0: the path alone tells)
    whole: bool = False  # all of the file (a whole-JSON transcript: its id is inside the object)
    beside: tuple[Path, ...] = ()  # small files near it whose content the claim carries to the reading


@dataclass(frozen=True)
class Head:
    """What discovery read of a file, once, for every reader's `locate` (which does no I/O): as many
    of its first bytes as the readers asked for, and the files beside it they named."""

    data: bytes
    regular: bool = True  # False: no regular file, or unreadable (not read: reading it says what it is)
    ended: bool = True  # `data` is all of the file
    settled: bool = True  # unchanged for the tailer's SETTLE_SECONDS (a writer that stopped)
    beside: Mapping[Path, bytes] = field(default_factory=dict)  # the files named in a Look that could be read


@dataclass(frozen=True)
class Claim:
    """A reader's "mine": the session the file belongs to, and what the claim learnt for the reading."""

    role: FileRole
    # Seeds the reader's per-file state before each reading (what the files beside it said).
    facts: JsonObject = field(default_factory=dict)


class Refusal(Enum):
    NOT_MINE = "not mine"
    NOT_YET = "not yet"  # the head is too short or incomplete to tell: asked again once the file grew


NOT_MINE, NOT_YET = Refusal.NOT_MINE, Refusal.NOT_YET


class Reader(Protocol):
    """One transcript format. Adding a format means one module with one of these, registered."""

    agent: str

    def claims_name(self, name: str) -> bool:
        """Whether a file of this name (no folder) may be this format's: discovery lists, and the
        watcher wakes for, only such names. A `.json` name is read as one whole JSON object, not
        line by line (see the tailer's `whole_file`)."""
        ...

    def looks_at(self, path: Path) -> Look:
        """What of this file (found under a root) `locate` needs to see: from the path alone."""
        ...

    def locate(self, path: Path, head: Head) -> Claim | Refusal:
        """Mine, not mine, or not yet, from the path and what discovery read (no I/O of its own)."""
        ...

    def parse(self, obj: JsonObject, raw: bytes, state: JsonObject) -> ParsedLine:
        """Turn one decoded line into turns. `state` persists per file between calls and runs."""
        ...

    def edits_of_call(self, name: str, arguments: object, cwd: str | None) -> tuple[FileEdit, ...]:
        """What a call of this tool with these arguments (decoded JSON, or the raw text) wrote to
        files, relative paths resolved against `cwd`: the same edits `parse` gives the call's turn.
        The store asks it for turns stored before their edits were (turn_text.tool_calls)."""
        ...


class Expires(Protocol):
    """What a reader may also offer (the registry asks with getattr): its agent deletes a transcript
    some days after it was last written (Claude Code: cleanupPeriodDays), so that the sessions whose
    turns are not captured yet are at risk, and extracted first."""

    deletes_old_transcripts: bool


@dataclass
class SessionRead:
    """One session of a database source (many sessions in one file) and what was read of it since
    its stored progress: stored together, as a line source's batch and cursor are."""

    key: str  # the session's row in the store's files table: "<database path>#<session id>"
    role: FileRole  # Checkpoint's session (a sub-session's is its root's)
    version: int  # changes whenever the session does: a stored one still equal is not read again
    progress: int  # a number that grows as the session is read on (its cursor's offset)
    consumed: int  # records consumed so far (its cursor's line number)
    state: JsonObject  # the reader's state after these records (the progress marker): stored with them
    records: list[tuple[int, ParsedLine]] = field(default_factory=list)  # (record number, what it gave)


@runtime_checkable
class DatabaseReader(Reader, Protocol):
    """A format kept in a database rather than appended to lines (opencode's SQLite file): the
    pipeline asks for each changed session's new records instead of tailing the file."""

    def read_sessions(self, path: Path, known: Mapping[str, tuple[int, JsonObject]]) -> Iterator[SessionRead]:
        """The sessions of the database whose version differs from `known` (key -> (version, state)
        as stored), each with the records after its stored progress. Reads only, briefly."""


# A skim's verdict on a record that holds no words and counts under no policy (token counts).
NO_WORDS = ""


class Skims(Protocol):
    """What a reader may also offer (the pipeline asks with getattr): a line's fate from its bytes."""

    def skim(self, raw: bytes, state: JsonObject) -> str | None:
        """The line's fate from its bytes alone, without decoding it, for the copies a format holds in
        bulk: the policy its whole length counts under (NO_WORDS: none), exactly as `parse` of the
        decoded line would count it (no turn, no session), or None whenever the bytes leave any doubt
        (the line is then decoded and parsed). A name, not a ParsedLine: most lines of a real session
        are decided here, and building a result for each costs as much as the look."""
        ...


class LineError(ValueError):
    """A line that could not be decoded; the message says what was wrong."""


def whole_record(raw: bytes, start: bytes) -> bool:
    """Whether a line a reader skims is one record as its writer writes them: it ends as an object
    does and holds no second record start (a record appended after a cut-off one, which the full
    decoding salvages). A skim decides nothing about any other line."""
    # (endswith first: rstrip copies the line, and writers end it with the brace or a newline)
    return (raw.endswith(b"}") or raw.rstrip().endswith(b"}")) and raw.find(start, 1) < 0


def line_id(raw: bytes) -> str:
    """Stable id for a record without one of its own: the same bytes give the same id on a re-read."""
    return hashlib.blake2b(raw, digest_size=12).hexdigest()


def decode_line(raw: bytes) -> tuple[list[JsonObject], list[str]]:
    """Decode one JSONL line into objects, repairing what writers are known to break.

    Returns the objects and notes on what was repaired. Raises LineError if nothing usable is there.
    """
    notes: list[str] = []
    data = raw.strip()
    if not data:
        return [], notes
    if data.startswith(b"\x00") or data.endswith(b"\x00"):
        data = data.strip(b"\x00").strip()
        notes.append("stripped NUL bytes")
        if not data:
            return [], notes
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as first:
        exc: orjson.JSONDecodeError | None = first
        if "utf-8" in str(exc).lower():
            data = data.decode("utf-8", errors="replace").encode("utf-8")
            notes.append("replaced invalid UTF-8 bytes")
            try:
                obj = orjson.loads(data)
            except orjson.JSONDecodeError as again:
                exc = again
            else:
                exc = None
        if exc is not None and "surrogate" in str(exc).lower():
            # An escaped half of a UTF-16 pair ("\ud83d" alone: a string cut inside a character) is
            # valid JSON that orjson refuses; read it with json and replace the half character.
            try:
                obj = _without_surrogates(json.loads(data))
            except (ValueError, RecursionError):
                pass
            else:
                exc = None
                notes.append("replaced an escaped half of a UTF-16 character pair (a string cut inside a character)")
        if exc is not None:
            several = _several(data)
            if several is not None:
                objects, gap = several
                notes.append(f"{len(objects)} records written on one line without a newline between them"
                             f"{gap}; all {len(objects)} kept")
                return objects, notes
            if b"}{" in data:
                return _split_joined(data, notes, exc)
            raise LineError(f"invalid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise LineError(f"not a JSON object but {type(obj).__name__}")
    return [obj], notes


_DECODER = json.JSONDecoder()
_GAP = " \t\r\x00"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _whole_characters(text: str) -> str:
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _without_surrogates(value: Any) -> Any:
    """The value with every half UTF-16 pair in its strings (keys too) replaced by U+FFFD: what
    json accepts and no UTF-8 text can hold. Iterative, so depth costs no recursion."""
    if isinstance(value, str):
        return _whole_characters(value)
    stack = [value] if isinstance(value, dict | list) else []
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if any(_SURROGATE.search(k) for k in node):
                fixed = {_whole_characters(k): v for k, v in node.items()}
                node.clear()
                node.update(fixed)
            pairs: Any = node.items()
        else:
            pairs = enumerate(node)
        for key, item in list(pairs):
            if isinstance(item, str):
                if _SURROGATE.search(item):
                    node[key] = _whole_characters(item)
            elif isinstance(item, dict | list):
                stack.append(item)
    return value


def _several(data: bytes) -> tuple[list[JsonObject], str] | None:
    """The line as whole JSON objects one after the other (`}{`, or spaces or NUL bytes between
    them), and what separated them; None unless it is exactly that, with two objects or more."""
    text = data.decode("utf-8", errors="replace")
    objects: list[JsonObject] = []
    pos, nuls = 0, 0
    while True:
        start = pos
        while pos < len(text) and text[pos] in _GAP:
            pos += 1
        nuls += text.count("\x00", start, pos)
        if pos == len(text):
            break
        try:
            obj, pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict):
            return None
        objects.append(_without_surrogates(obj))
    if len(objects) < 2:
        return None
    return objects, f" ({nuls} NUL bytes between them)" if nuls else ""


def _split_joined(data: bytes, notes: list[str], original: Exception) -> tuple[list[JsonObject], list[str]]:
    """Records written without a newline between them (`}{`): keep every part that parses alone."""
    parts = data.split(b"}{")
    objects: list[JsonObject] = []
    for i, part in enumerate(parts):
        piece = (b"{" if i else b"") + part + (b"}" if i < len(parts) - 1 else b"")
        try:
            obj = orjson.loads(piece)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            objects.append(obj)
    if not objects:
        raise LineError(f"invalid JSON: {original}")
    notes.append(f"split {len(parts)} records joined on one line, kept {len(objects)}")
    return objects, notes


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a decoded JSON value, depth first (keys left out)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def text_of(value: Any) -> str:
    """Best-effort text of a content field that may be a string, one block, or a list of blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return value["text"] if isinstance(value.get("text"), str) else ""
    if isinstance(value, list):
        parts = []
        for block in value:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return ""


# Policies every reader counts under the same name.
UNKNOWN_RECORD = "unknown_record"  # a record type this reader does not know: skipped, never silently
EMPTY_TURN = "empty_turn"  # a turn with nothing but whitespace (or an empty thinking block) in it
TERMINAL_ESCAPE = "terminal_escape"  # colour and cursor codes in hook and command output
CHECKPOINT_CONTEXT = "checkpoint_context"  # what Checkpoint itself fed the agent: left out, or it would
# be extracted again as new decisions. Two tests, one per way it reaches a transcript:


# The answer's mark at the start, maybe inside one tag the agent wraps tool output in (Gemini CLI
# 0.61 writes an MCP tool's text as `<untrusted_context>\n...\n</untrusted_context>`).
_ANSWER_START = re.compile(r"\s*(?:<[A-Za-z_][\w-]*>\s*)?" + re.escape(AGENT_ANSWER_MARK))


def is_checkpoint_answer(text: object) -> bool:
    """A tool result that is one of Checkpoint's MCP tools' answers: the mark starts it. Only the
    start: a tool's output that merely quotes the mark (a grep of this very code) is the agent's work."""
    return isinstance(text, str) and _ANSWER_START.match(text) is not None


def is_checkpoint_context(text: object) -> bool:
    """Context injected into the session (a hook's, never a tool's output) that holds Checkpoint's
    session-start context: the mark anywhere, as the agent may wrap it in tags of its own."""
    return isinstance(text, str) and AGENT_CONTEXT_MARK in text


# CSI (colours, cursor moves), OSC (titles, links; ended by BEL or ST) and the two-byte escapes.
_TERMINAL_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
)


def without_terminal_escapes(text: str, dropped: defaultdict[str, int]) -> str:
    """The text without terminal escape sequences (they mean nothing to a reader of the turn and
    split words for search); the characters removed are counted under TERMINAL_ESCAPE."""
    if "\x1b" not in text:
        return text
    cleaned = _TERMINAL_ESCAPE.sub("", text)
    if len(cleaned) != len(text):
        dropped[TERMINAL_ESCAPE] += len(text) - len(cleaned)
    return cleaned


CWDS_REMEMBERED = 64  # folders a file's sessions worked in, remembered to say each once


def worked_in(cwd: str, state: JsonObject, out: ParsedLine,
              merge: Callable[..., SessionInfo]) -> None:
    """Note a folder the session worked in, once per file (the store keeps every one)."""
    seen: list[str] = state.setdefault("cwds", [])
    if cwd in seen:
        return
    seen.append(cwd)
    del seen[:-CWDS_REMEMBERED]
    known = out.session.cwds if out.session is not None else ()
    out.session = merge(out.session, cwds=(*known, cwd))
