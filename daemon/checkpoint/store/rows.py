"""What the store hands back, besides the shared records of checkpoint.model.

Read-only records, read by attribute: NamedTuples rather than frozen dataclasses, because every
command's start defines them all and a frozen dataclass costs ~0.6 ms to define on Python 3.11
(its methods are compiled one by one), a NamedTuple ~0.15 ms."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

import orjson

from checkpoint.model import FileCursor, ItemRecord, Role


class CursorMoved(RuntimeError):
    """A file's stored cursor moved since a batch was read from it: another process stored those
    lines already. The batch is dropped whole (see Store.ingest)."""


class LeaseLost(RuntimeError):
    """The chunk is no longer leased to this runner (expired and taken by another); its answer is
    discarded so that nothing is committed twice."""


class FileRow(NamedTuple):
    cursor: FileCursor
    agent: str
    session_id: str | None
    subagent: bool
    state_json: str  # the reader's state, decoded only for a file that is read again
    missing: bool
    longest_skipped: int = 0  # bytes of the longest line skipped as too long since the file was read from the start

    @property
    def reader_state(self) -> dict[str, Any]:
        state: dict[str, Any] = orjson.loads(self.state_json)
        return state


class Ingested(NamedTuple):
    turns: int  # turns added
    chunks: int  # chunks created for them
    redacted: Mapping[str, int] = MappingProxyType({})  # secrets replaced in the turns added, by kind


class RunRecord(NamedTuple):
    """One extraction run as recorded: what it tried and captured, and what it cost."""

    id: int
    started_at: float
    finished_at: float | None  # None: still running, or it never finished (the process died)
    extractor: str
    chunks_tried: int
    chunks_captured: int
    chunks_failed: int
    chunks_lost: int
    chunks_resplit: int
    items_added: int
    items_attributed: int  # items that cited no turn of their chunk, attributed to it
    requests: int
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cost_usd: float
    note: str | None
    items_dropped: Mapping[str, int] = MappingProxyType({})  # items validation dropped, by reason

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "started_at": self.started_at, "finished_at": self.finished_at,
            "extractor": self.extractor, "chunks_tried": self.chunks_tried, "chunks_captured": self.chunks_captured,
            "chunks_failed": self.chunks_failed, "chunks_lost": self.chunks_lost,
            "chunks_resplit": self.chunks_resplit, "items_added": self.items_added,
            "items_attributed": self.items_attributed, "requests": self.requests,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens, "cost_usd": self.cost_usd, "note": self.note,
            "items_dropped": dict(self.items_dropped),
        }


class WindowTurn(NamedTuple):
    """A stored turn of the exchange around an item (Store.turn_window): where the daemon looks for
    the edits the session made."""

    id: str
    seq: int
    role: Role
    text: str
    files: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "seq": self.seq, "role": self.role.value, "text": self.text, "files": list(self.files)}


class ItemSummary(NamedTuple):
    """Item counts by kind (dismissed left out) and by state, and when an item last changed."""

    by_kind: Mapping[str, int]
    by_state: Mapping[str, int]
    changed_at: float | None  # None: no item yet
    held: int = 0  # held for review, neither accepted nor dismissed: what needs the user's review

    def as_json(self) -> dict[str, Any]:
        return {"by_kind": dict(self.by_kind), "by_state": dict(self.by_state), "changed_at": self.changed_at}


class ItemPage(NamedTuple):
    """Items up to a limit, and how many matched in all (the rest were left out by the limit)."""

    items: tuple[ItemRecord, ...]
    total: int

    @property
    def left_out(self) -> int:
        return self.total - len(self.items)


class SourceExcerpt(NamedTuple):
    """The start of a turn an item cites (Store.item_excerpts), with where it is in its transcript."""

    turn_id: str
    seq: int
    role: Role
    path: str
    line: int
    timestamp: str | None
    text: str  # the first characters of the turn (redacted when stored)
    length: int  # the turn's whole length in characters


class SearchResult(NamedTuple):
    """What a search found: the query's words as searched, whether an item had to match all of
    them or (none did) any, and the items, best first, each with its bm25 score (lower is better)."""

    terms: tuple[str, ...]  # empty: the query held no word to search for
    matched: Literal["all", "any"]
    hits: tuple[tuple[ItemRecord, float], ...]
    total: int = 0  # how many matched in all, when counted (Store.search(count=True)); else len(hits)

    def as_json(self) -> dict[str, Any]:
        return {
            "terms": list(self.terms), "matched": self.matched,
            "items": [{**item.as_json(), "score": score} for item, score in self.hits],
        }
