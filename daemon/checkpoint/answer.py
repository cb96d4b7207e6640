"""What an extractor answers for a chunk, validated by pydantic: whatever a model sends, an item
that is stored is plain text of bounded size citing turns of its chunk. Loaded only where answers are made or
read (extractors, `checkpoint now`, the daemon), never by `checkpoint scan` or `status`."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, ValidationInfo, field_validator

from checkpoint.model import Citation, ItemKind, Usage, plain_text

MAX_STATEMENT, MAX_RATIONALE = 2000, 4000
MAX_FILES, MAX_PATH = 100, 4096
Statement = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_STATEMENT)]


class ItemDraft(BaseModel):
    """An item as an extractor proposes it, before the store gives it an id. Whatever a model sends,
    an item is plain text of bounded size: control characters go, long texts are cut, file lists are
    capped (HTML or Markdown in it stays text: no surface renders items as markup)."""

    kind: ItemKind
    statement: Statement
    rationale: Annotated[str, StringConstraints(max_length=MAX_RATIONALE)] | None = None
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    # As the model gave them; may be empty, or name no turn of the chunk: runner.validate resolves them
    # to the chunk's turn ids, or attributes the item to the chunk (`cited`), before anything is stored.
    turn_ids: list[str] = Field(default_factory=list)
    cited: Citation = Citation.TURNS
    # Set by runner.validate, never by a model: the item reads as a planted instruction to an agent
    # (checkpoint.extract.held) and reaches agents only once the user accepts it.
    held: bool = False
    files: list[str] = Field(default_factory=list)
    same_as: str | None = None  # id of a known item of the workspace this one restates
    supersedes: str | None = None  # id of a known item this one replaces (a reversal, a change of course)
    supersedes_reason: Annotated[str, StringConstraints(max_length=1000)] | None = None
    answers: str | None = None  # id of a known open question this decision or constraint answers
    # False: an order about the task at hand ("when you're done", "for now"): kept in its session, given
    # to no later session, reminder, MCP answer or shared record (checkpoint.extract.one_off).
    lasting: bool = True
    # Set by runner.validate (checkpoint.extract.item_files), never by a model: path -> "statement" (the
    # statement names it), "edit" (its turn edited it) or "statement+edit", for each of `files`.
    file_sources: dict[str, str] = Field(default_factory=dict)
    # What code breaks the item (checkpoint.checks.model), proposed: a check that cannot be read is
    # dropped, never the item.
    check: dict[str, Any] | None = None

    @field_validator("statement", "rationale", "supersedes_reason", mode="before")
    @classmethod
    def _plain_and_bounded(cls, value: object, info: ValidationInfo) -> object:
        if not isinstance(value, str):
            return value
        limit = {"statement": MAX_STATEMENT, "rationale": MAX_RATIONALE}.get(info.field_name or "", 1000)
        return plain_text(value[: limit * 2]).strip()[:limit]

    @field_validator("files", mode="before")
    @classmethod
    def _paths(cls, value: object) -> object:
        if not isinstance(value, list):
            return value
        paths = (plain_text(v).strip() for v in value if isinstance(v, str) and len(v) <= MAX_PATH)
        return list(dict.fromkeys(p for p in paths if p))[:MAX_FILES]

    @field_validator("check", mode="before")
    @classmethod
    def _check(cls, value: object) -> object:
        from checkpoint.checks.model import CheckProblem, read_check

        if value is None:
            return None
        try:
            return read_check(value).as_json()
        except CheckProblem:
            return None

    @field_validator("same_as", "supersedes", "answers", mode="before")
    @classmethod
    def _item_id(cls, value: object) -> object:
        return value if not isinstance(value, str) or len(value) <= 64 else None


class Extraction(BaseModel):
    """A confirmed answer for one chunk: the only thing that may move a marker."""

    chunk_id: int
    items: list[ItemDraft]
    extractor: str
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None  # the model whose answer this is (a fallback, perhaps)
