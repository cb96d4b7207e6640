"""Lead-ins: the words before a statement that say how it stands to what was said before ("Reminder:",
"As agreed,": said again; "Change of plan:": a change; "Done:": a report). The offline extractor keeps
the statement without its lead-in, and merges a restatement into the known item it repeats instead of
making a second one. Phrase rules, deterministic."""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum

from checkpoint.model import KnownItem


class Lead(Enum):
    RESTATED = "restated"  # "Reminder:", "As agreed,": an item said before
    CHANGED = "changed"  # "Change of plan:": a decision that replaces one
    REPORTED = "reported"  # "Done:": work reported as done (a switch it names restates the switch)


_LEADS = (
    (Lead.RESTATED, re.compile(
        r"^(?:(?:just )?(?:a |as a )?(?:quick |friendly )?reminder|recap|to recap|again"
        r"|as (?:we )?(?:agreed|decided|discussed|planned|settled)(?: (?:before|earlier|yesterday|last time))?)"
        r"\s*[:,—–-]\s*", re.IGNORECASE)),
    (Lead.CHANGED, re.compile(
        r"^(?:(?:a )?change of plans?|(?:a )?change in plans?|plan change|new plan|we changed our minds?)"
        r"\s*[:,—–-]\s*", re.IGNORECASE)),
    (Lead.REPORTED, re.compile(r"^(?:done|fixed|finished|all done)\s*[:—–-]\s*", re.IGNORECASE)),
)
_WORD = re.compile(r"[^\W_]+")
MATCH_SHARE = 0.6  # a restatement shares at least this much of its words with the item, both ways


def lead_in(sentence: str) -> tuple[Lead | None, str]:
    """The sentence's lead-in, and the statement after it (its first letter capitalised); (None,
    sentence) when it has none or nothing worth keeping follows it."""
    for lead, rule in _LEADS:
        match = rule.match(sentence)
        if match is None:
            continue
        rest = sentence[match.end():]
        if len(_WORD.findall(rest)) < 3:
            return None, sentence
        return lead, rest[:1].upper() + rest[1:]
    return None, sentence


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def repeated(statement: str, known: Sequence[KnownItem]) -> KnownItem | None:
    """The known item a restatement repeats: the one sharing the most words with it, when those are at
    least MATCH_SHARE of the statement's words and of the item's (the earliest listed on a tie)."""
    own = _words(statement)
    best, most = None, 0.0
    for item in known:
        theirs = _words(item.statement)
        shared = len(own & theirs)
        if not own or not theirs or shared < MATCH_SHARE * len(own) or shared < MATCH_SHARE * len(theirs):
            continue
        if shared > most:
            best, most = item, shared
    return best
