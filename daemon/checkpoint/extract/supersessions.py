"""The offline extractor's supersession rules: the plain ways a transcript says a decision changed
("instead of X", "switch from X to Y", "no longer use X", "X is no longer used", "replace X with Y",
"move from X to Y"), kept only when X names a known item. Phrase rules, deterministic; a model catches
the rest.

A switch said again ("Redis is no longer used ...", "Done: it now uses Memcached instead of Redis")
restates the item that already says it, the one replacing the same X: it merges into that item and
never supersedes it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from checkpoint.model import ItemKind, KnownItem

_REPLACED = (
    re.compile(r"\binstead of (?P<x>[^,.;:!?]+)", re.IGNORECASE),
    re.compile(r"\bswitch(?:ed|es|ing)? (?:over )?from (?P<x>.+?) to\b", re.IGNORECASE),
    re.compile(r"\bno longer (?:use|using|uses|need|want|go with) (?P<x>[^,.;:!?]+)", re.IGNORECASE),
    re.compile(r"^(?:the )?(?P<x>[^,.;:!?]+?) (?:is|are|was|were) no longer (?:used|needed|wanted|in use)\b",
               re.IGNORECASE),
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


def _replaced_by_rules(sentence: str) -> list[list[str]]:
    """What the sentence says is replaced, once per rule that finds it (X's words, articles aside)."""
    found = []
    for rule in _REPLACED:
        match = rule.search(sentence)
        if match is None:
            continue
        replaced = _words(match.group("x"))[:6]
        if replaced and len(replaced[0]) >= 3:
            found.append(replaced)
    return found


def replaced(sentence: str) -> list[str] | None:
    """The words of what the sentence says is replaced (its first phrase of replacement), or None:
    it says no switch."""
    found = _replaced_by_rules(sentence)
    return found[0] if found else None


def restates(sentence: str, statement: str) -> bool:
    """Whether the sentence says again the switch `statement` says: both replace the same X (its first
    word). "Redis is no longer used" restates "We switch from Redis to Memcached"."""
    said = {words[0] for words in _replaced_by_rules(sentence)}
    return bool(said) and any(words[0] in said for words in _replaced_by_rules(statement))


def restated(sentence: str, known: Sequence[KnownItem]) -> KnownItem | None:
    """The known decision whose switch the sentence says again (the earliest listed), or None."""
    if replaced(sentence) is None:
        return None
    return next((i for i in known if i.kind is ItemKind.DECISION and restates(sentence, i.statement)), None)


def find(sentence: str, known: Sequence[KnownItem]) -> KnownItem | None:
    """The known decision or constraint the sentence says is replaced, or None: the one whose
    statement holds the most of what is replaced (X, from its first word; articles aside), the
    earliest listed on a tie, never the sentence itself nor an item that says the same switch (the
    sentence restates that one)."""
    own = _words(sentence)
    for words in _replaced_by_rules(sentence):
        best, most = None, 0
        for item in known:
            if item.kind is ItemKind.QUESTION or _words(item.statement) == own or restates(sentence, item.statement):
                continue
            n = _leading(words, item.statement)
            if n > most:
                best, most = item, n
        if best is not None:
            return best
    return None


def fields(sentence: str, known: Sequence[KnownItem]) -> dict[str, Any]:
    """ItemDraft keywords naming the known item the sentence restates as a switch (`same_as`) or
    supersedes (none: an empty dict)."""
    again = restated(sentence, known)
    if again is not None:
        return {"same_as": again.id}
    item = find(sentence, known)
    if item is None:
        return {}
    return {"supersedes": item.id, "supersedes_reason": f"the transcript says: {sentence[:300]}"}
