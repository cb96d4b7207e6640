"""What every transcript reader provides, and the tolerant line decoder they share."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from checkpoint.model import Role, SessionInfo

JsonObject = dict[str, Any]


@dataclass
class TurnDraft:
    """A turn as a reader sees it; the store gives it its place (seq) in the session."""

    id: str
    role: Role
    text: str
    files: tuple[str, ...] = ()
    timestamp: str | None = None
    message_id: str | None = None
    redacted: dict[str, int] | None = None  # secrets the pipeline replaced in `text`, by kind


@dataclass
class ParsedLine:
    turns: list[TurnDraft] = field(default_factory=list)
    session: SessionInfo | None = None
    # Content deliberately not sent, by named policy: policy -> characters (or 1 per record).
    dropped: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class FileRole:
    """Where a file sits: which session it belongs to, if the path says so."""

    agent: str
    session_id: str | None  # None: learn it from the content (legacy Claude sub-agent files)
    subagent: bool = False


class Reader(Protocol):
    """One transcript format. Adding a format means one module with one of these, registered."""

    agent: str

    def locate(self, path: Path) -> FileRole | None:
        """Claim a file found under a root (None: not this format's file)."""
        ...

    def parse(self, obj: JsonObject, raw: bytes, state: JsonObject) -> ParsedLine:
        """Turn one decoded line into turns. `state` persists per file between calls and runs."""
        ...


class LineError(ValueError):
    """A line that could not be decoded; the message says what was wrong."""


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
    except orjson.JSONDecodeError as exc:
        if "utf-8" in str(exc).lower() or "surrogate" in str(exc).lower():
            text = data.decode("utf-8", errors="replace")
            notes.append("replaced invalid UTF-8 bytes")
            try:
                obj = orjson.loads(text.encode("utf-8"))
            except orjson.JSONDecodeError as exc2:
                raise LineError(f"invalid JSON: {exc2}") from None
        elif b"}{" in data:
            return _split_joined(data, notes, exc)
        else:
            raise LineError(f"invalid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise LineError(f"not a JSON object but {type(obj).__name__}")
    return [obj], notes


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
