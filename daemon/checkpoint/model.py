"""The shapes every layer agrees on: what readers learn about sessions, chunks sent to an extractor,
what a request cost. Plain dataclasses: `checkpoint scan` and `status` never load pydantic, which
validates only what a model answers (`checkpoint.answer`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum


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


@dataclass(slots=True)
class SessionInfo:
    """What a reader learns about the session a file belongs to (all optional; newest wins for title)."""

    id: str
    agent: str
    cwd: str | None = None
    title: str | None = None


@dataclass(slots=True)
class TurnSlice:
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


@dataclass(slots=True)
class KnownItem:
    """An item already recorded for the session, shown to a model so that a restatement in a later
    chunk can point at it (`same_as`) instead of becoming a second item."""

    id: str
    kind: ItemKind
    statement: str


@dataclass(slots=True)
class ChunkInput:
    """Everything an extractor gets: one chunk of one session, never more than the budget."""

    chunk_id: int
    session_id: str
    agent: str
    cwd: str | None
    turns: list[TurnSlice]
    token_estimate: int
    known_items: list[KnownItem] = field(default_factory=list)


@dataclass
class Usage:
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

    def as_dict(self) -> dict[str, int | float]:
        # by hand: dataclasses.asdict deep-copies, and a status holds one Usage per session
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens, "requests": self.requests,
                "cost_usd": self.cost_usd}


# C0 and C1 control characters but tab and newline (terminal escapes, NUL, backspace ...), and the
# bidirectional overrides and isolates that make text display in another order than it reads.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def plain_text(text: str) -> str:
    """The text without control characters (tab and newline stay): safe to print and to show."""
    return _CONTROL.sub("", text)
