"""The answer a model gives for a chunk: its schema (sent to every model extractor, with the system
prompt of prompt.py) and the one function that reads it into item drafts. Whatever extractor asked
(the SDK, the user's Claude Code CLI), an answer is read here and nowhere else."""

from __future__ import annotations

import copy
import re
from typing import Any, Literal

import anthropic
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from checkpoint.answer import ItemDraft
from checkpoint.model import ItemKind


class AnswerCheck(BaseModel):
    """What code breaks the item (checkpoint.checks): a name that must not appear. Kept small: it is in
    every request's schema (a local model's grammar too); rules and regexes are given by hand."""

    model_config = ConfigDict(extra="ignore")

    uses: str = Field(description="the library, module or function that must no longer appear")
    calls_only: bool = Field(default=False, description="only calls of it break the item")
    paths: list[str] = Field(default_factory=list, description="file globs; empty: all")

    def as_check(self) -> dict[str, Any] | None:
        """The check as checkpoint.checks.model reads it (ItemDraft drops one it cannot read)."""
        paths = {"paths": self.paths} if self.paths else {}
        if self.uses:
            return {"uses": self.uses.strip().strip("`"), **({"calls": True} if self.calls_only else {}), **paths}
        return None


class AnswerItem(BaseModel):
    """One item as the model returns it. Statement is one line; the rest is provenance."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["decision", "constraint", "question"]
    statement: str = Field(description="one line, self-contained")
    rationale: str | None = Field(default=None, description="why, when the transcript says so")
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    turn_ids: list[str] = Field(description="labels of the turns it comes from, copied from their headers")
    files: list[str] = Field(default_factory=list, description="workspace files it concerns")
    same_as: str | None = Field(default=None, description="id of an already recorded item it restates")
    supersedes: str | None = Field(
        default=None, description="id of an already recorded item it replaces: the decision was reversed or changed"
    )
    supersedes_reason: str | None = Field(default=None, description="why the replaced item no longer holds")
    answers: str | None = Field(default=None, description="id of an already recorded open question this "
                                "decision or constraint answers")
    lasting: bool = Field(default=True, description="true: holds for the project from now on; false: an order "
                          "about the task at hand only (\"when you're done\", \"for now\", \"don't stop until\")")
    check: AnswerCheck | None = Field(default=None, description="what code breaks it")

    @model_validator(mode="before")
    @classmethod
    def _uncited(cls, value: Any) -> Any:
        # The schema asks for turn_ids; an item that left them out still said something: it is an
        # item without a citation, attributed to its chunk (runner.validate), not a malformed answer.
        if isinstance(value, dict) and value.get("turn_ids") is None:
            return {**value, "turn_ids": []}
        return value


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    items: list[AnswerItem]


SCHEMA: dict[str, Any] = anthropic.transform_schema(Answer)


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The answer schema as OpenAI's strict structured outputs take it (Codex and the `openai` extractor
    send `strict: true`): every object lists all its properties in `required`. The optional properties
    of SCHEMA (rationale, same_as: already nullable; confidence, files: with defaults) become required,
    which read_answer accepts as they are; nothing is made nullable that read_answer would refuse as null."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                node["required"] = list(node["properties"])
                node["additionalProperties"] = False
            if "enum" in node and "type" not in node and all(isinstance(v, str) for v in node["enum"]):
                node["type"] = "string"
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out)
    return out


STRICT_SCHEMA = strict_schema(SCHEMA)
_WS = re.compile(r"\s+")


class MalformedAnswer(ValueError):
    """The answer is not the JSON object the schema describes; the message says what is wrong."""


def read_answer(raw: str | dict[str, Any]) -> list[ItemDraft]:
    """The drafts of an answer given as JSON text or as an already parsed object (a tool's input)."""
    try:
        answer = Answer.model_validate(raw) if isinstance(raw, dict) else Answer.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc)}
        raise MalformedAnswer(f"answer did not match the schema ({first.get('msg', 'invalid')})") from None
    return to_drafts(answer)


def to_drafts(answer: Answer) -> list[ItemDraft]:
    drafts = []
    for item in answer.items:
        statement = _WS.sub(" ", item.statement).strip()
        turn_ids = [t.strip() for t in item.turn_ids if t.strip()]
        if not statement:
            continue  # nothing said: not an item. No citation is still an item (runner.validate attributes it)
        try:
            draft = ItemDraft(
                kind=ItemKind(item.kind),
                statement=statement[:2000],
                rationale=(_WS.sub(" ", item.rationale).strip()[:4000] or None) if item.rationale else None,
                confidence=min(1.0, max(0.0, item.confidence)),
                turn_ids=turn_ids,
                files=[f for f in item.files if f.strip()],
                same_as=item.same_as or None,
                supersedes=item.supersedes or None,
                supersedes_reason=_WS.sub(" ", item.supersedes_reason or "").strip() or None,
                lasting=item.lasting,
                answers=item.answers or None,
                check=item.check.as_check() if item.check else None,
            )
        except ValidationError:
            continue  # nothing left once control characters are gone: not an item (the others stand)
        drafts.append(draft)
    return drafts
