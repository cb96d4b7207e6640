"""The shapes every layer agrees on: turns read from transcripts, chunks sent to an extractor,
items that come back. Pydantic validates what crosses a boundary (a reader's output, a model's answer)."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationInfo, field_validator


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"  # tool calls and their results: context for the model, never a source of heuristics


class ChunkState(StrEnum):
    PENDING = "pending"  # formed, never answered
    SENT = "sent"  # leased to a running extraction; reverts to pending when the lease expires
    CAPTURED = "captured"  # answer parsed, validated and committed
    FAILED = "failed"  # last attempt failed; cause recorded; retried on the next run


class ItemKind(StrEnum):
    DECISION = "decision"
    CONSTRAINT = "constraint"
    QUESTION = "question"


class ItemState(StrEnum):
    NEW = "new"
    ACCEPTED = "accepted"
    DISMISSED = "dismissed"


class Turn(BaseModel):
    """One normalized unit of a transcript: a prompt, an answer block, a tool call or its result."""

    model_config = ConfigDict(frozen=True)

    id: str  # stable across re-reads: the line's uuid, or a hash of the raw line where the format has none
    session_id: str
    role: Role
    text: str
    files: tuple[str, ...] = ()  # workspace files this turn changed (applied edits only)
    timestamp: str | None = None
    message_id: str | None = None  # Claude Code writes one API message as several lines sharing this
    source_path: str = ""
    line_no: int = 0  # 1-based line in source_path


class SessionInfo(BaseModel):
    """What a reader learns about the session a file belongs to (all optional; newest wins for title)."""

    id: str
    agent: str
    cwd: str | None = None
    title: str | None = None


class TurnSlice(BaseModel):
    """The part of one turn that a chunk carries: the whole text, or one part of a split turn."""

    turn_id: str
    seq: int
    role: Role
    text: str
    files: tuple[str, ...] = ()
    timestamp: str | None = None
    part: int = 1
    parts: int = 1
    char_start: int = 0  # where this part starts in the turn's text (a part of a split turn)


class KnownItem(BaseModel):
    """An item already recorded for the session, shown to a model so that a restatement in a later
    chunk can point at it (`same_as`) instead of becoming a second item."""

    id: str
    kind: ItemKind
    statement: str


class ChunkInput(BaseModel):
    """Everything an extractor gets: one chunk of one session, never more than the budget."""

    chunk_id: int
    session_id: str
    agent: str
    cwd: str | None
    turns: list[TurnSlice]
    token_estimate: int
    known_items: list[KnownItem] = Field(default_factory=list)


MAX_STATEMENT, MAX_RATIONALE = 2000, 4000
MAX_FILES, MAX_PATH = 100, 4096
Statement = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_STATEMENT)]
# C0 and C1 control characters but tab and newline (terminal escapes, NUL, backspace ...), and the
# bidirectional overrides and isolates that make text display in another order than it reads.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def plain_text(text: str) -> str:
    """The text without control characters (tab and newline stay): safe to print and to show."""
    return _CONTROL.sub("", text)


class ItemDraft(BaseModel):
    """An item as an extractor proposes it, before the store gives it an id. Whatever a model sends,
    an item is plain text of bounded size: control characters go, long texts are cut, file lists are
    capped (HTML or Markdown in it stays text: no surface renders items as markup)."""

    kind: ItemKind
    statement: Statement
    rationale: Annotated[str, StringConstraints(max_length=MAX_RATIONALE)] | None = None
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    turn_ids: list[str] = Field(min_length=1)
    files: list[str] = Field(default_factory=list)
    same_as: str | None = None  # id of a known item of the session this one restates

    @field_validator("statement", "rationale", mode="before")
    @classmethod
    def _plain_and_bounded(cls, value: object, info: ValidationInfo) -> object:
        if not isinstance(value, str):
            return value
        limit = MAX_STATEMENT if info.field_name == "statement" else MAX_RATIONALE
        return plain_text(value[: limit * 2]).strip()[:limit]

    @field_validator("files", mode="before")
    @classmethod
    def _paths(cls, value: object) -> object:
        if not isinstance(value, list):
            return value
        paths = (plain_text(v).strip() for v in value if isinstance(v, str) and len(v) <= MAX_PATH)
        return list(dict.fromkeys(p for p in paths if p))[:MAX_FILES]

    @field_validator("same_as", mode="before")
    @classmethod
    def _item_id(cls, value: object) -> object:
        return value if not isinstance(value, str) or len(value) <= 64 else None


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    requests: int = 0
    cost_usd: float = 0.0

    def add(self, more: Usage) -> None:
        self.input_tokens += more.input_tokens
        self.output_tokens += more.output_tokens
        self.cache_creation_input_tokens += more.cache_creation_input_tokens
        self.cache_read_input_tokens += more.cache_read_input_tokens
        self.requests += more.requests
        self.cost_usd += more.cost_usd

    @property
    def tokens(self) -> int:
        """Every token billed: uncached and cached input, and output."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens + self.output_tokens


class Extraction(BaseModel):
    """A confirmed answer for one chunk: the only thing that may move a marker."""

    chunk_id: int
    items: list[ItemDraft]
    extractor: str
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None  # the model whose answer this is (a fallback, perhaps)
