"""The offline extractor's supersession rules: the plain ways a transcript says a decision changed
("instead of X", "switch from X to Y", "no longer use X", "replace X with Y", "move from X to Y"),
kept only when X names a known item. Phrase rules, deterministic; a model catches the rest."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from checkpoint.model import ItemKind, KnownItem

_REPLACED = (
    re.compile(r"\binstead of (?P<x>[^,.;:!?]+)", re.IGNORECASE),
    re.compile(r"\bswitch(?:ed|ing)? (?:over )?from (?P<x>.+?) to\b", re.IGNORECASE),
    re.compile(r"\bno longer (?:use|using|uses|need|want|go with) (?P<x>[^,.;:!?]+)", re.IGNORECASE),
    re.compile(r"\breplac(?:e|ed|es|ing) (?P<x>.+?) (?:with|by)\b", re.IGNORECASE),
    re.compile(r"\bmov(?:e|ed|es|ing) (?:away )?from (?P<x>.+?) to\b", re.IGNORECASE),
    re.compile(r"\bdrop(?:ped|ping)? (?P<x>.+?) (?:for|in favou?r of)\b", re.IGNORECASE),
)
_WORD = re.compile(r"[^\W_]+")
_FILLER = frozenset((
    "the", "a", "an", "our", "my", "your", "its", "their", "using", "use", "of", "for", "it", "that", "this",
    "these", "those", "them", "doing", "what", "which",
))


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if w not in _FILLER]


def _leading(replaced: list[str], statement: str) -> int:
    """How many of the replaced words, from the first on, the statement holds (X runs on past the
    name: "instead of vLLM from now on")."""
    words = set(_words(statement))
    n = 0
    while n < len(replaced) and replaced[n] in words:
        n += 1
    return n


def find(sentence: str, known: Sequence[KnownItem]) -> KnownItem | None:
    """The known decision or constraint the sentence says is replaced, or None: the one whose
    statement holds the most of what is replaced (X, from its first word; articles aside), the
    earliest listed on a tie, never the sentence itself."""
    own = _words(sentence)
    for rule in _REPLACED:
        match = rule.search(sentence)
        if match is None:
            continue
        replaced = _words(match.group("x"))[:6]
        if not replaced or len(replaced[0]) < 3:
            continue
        best, most = None, 0
        for item in known:
            if item.kind is ItemKind.QUESTION or _words(item.statement) == own:
                continue
            n = _leading(replaced, item.statement)
            if n > most:
                best, most = item, n
        if best is not None:
            return best
    return None


def fields(sentence: str, known: Sequence[KnownItem]) -> dict[str, Any]:
    """ItemDraft keywords naming the known item the sentence supersedes (none: an empty dict)."""
    item = find(sentence, known)
    if item is None:
        return {}
    return {"supersedes": item.id, "supersedes_reason": f"the transcript says: {sentence[:300]}"}
