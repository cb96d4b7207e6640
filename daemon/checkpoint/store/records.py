"""What the store hands back, besides the shared records of checkpoint.model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

import orjson

from checkpoint.model import FileCursor


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
