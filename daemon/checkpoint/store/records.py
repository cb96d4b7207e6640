"""What the store hands back, besides the shared records of checkpoint.model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

import orjson

from checkpoint.model import Usage
from checkpoint.sources.tailer import FileCursor


class CursorMoved(RuntimeError):
    """A file's stored cursor moved since a batch was read from it: another process stored those
    lines already. The batch is dropped whole (see Store.ingest)."""


class LeaseLost(RuntimeError):
    """The chunk is no longer leased to this runner (expired and taken by another); its answer is
    discarded so that nothing is committed twice."""


@dataclass(frozen=True)
class FileRow:
    cursor: FileCursor
    agent: str
    session_id: str | None
    subagent: bool
    state_json: str  # the reader's state, decoded only for a file that is read again
    missing: bool

    @property
    def reader_state(self) -> dict[str, Any]:
        state: dict[str, Any] = orjson.loads(self.state_json)
        return state



class Ingested(NamedTuple):
    turns: int  # turns added
    chunks: int  # chunks created for them
    redacted: Mapping[str, int] = MappingProxyType({})  # secrets replaced in the turns added, by kind



@dataclass
class SessionCounts:
    id: str
    agent: str
    title: str | None
    cwd: str | None
    turns: int = 0
    captured: int = 0
    pending: int = 0
    failed: int = 0
    watermark: int = 0
    last_ts: str | None = None
    causes: list[str] = field(default_factory=list)
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    problems: int = 0
    usage: Usage = field(default_factory=Usage)
    redacted: dict[str, int] = field(default_factory=dict)  # secrets replaced before storing, by kind
    # Claude Code deletes a transcript once it is cleanupPeriodDays old (by mtime): the newest of the
    # session's Claude transcripts still on disk, and (set by pipeline.flag_at_risk) whether it goes
    # soon while turns are not captured yet.
    newest_file_mtime: float | None = None
    at_risk: bool = False
    deletes_in_days: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agent": self.agent,
            "title": self.title,
            "cwd": self.cwd,
            "turns": self.turns,
            "captured": self.captured,
            "pending": self.pending,
            "failed": self.failed,
            "watermark": self.watermark,
            "last_ts": self.last_ts,
            "causes": self.causes,
            "dropped": self.dropped,
            "problems": self.problems,
            "usage": self.usage.as_dict(),
            "redacted": self.redacted,
            "at_risk": self.at_risk,
            "deletes_in_days": self.deletes_in_days,
        }
