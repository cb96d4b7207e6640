"""The offline extractor: deterministic phrase rules, no network. A floor, not the product.

It reads only what the user and the assistant said (extract/said.py: no reasoning, tool output,
hook output or machine notices) and keeps a whole sentence only when its wording leaves little doubt:
a choice announced as such, a rule stated as an instruction, a question the user left open. Fewer,
right items: a sentence that merely contains "never" or "must" (most often a remark about code) is
not a constraint, and the agent's narration of its next step is not a decision.
"""

from __future__ import annotations

import re

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.extract import supersede
from checkpoint.extract.said import sentences
from checkpoint.model import ChunkInput, ItemKind, Role, TurnSlice

# A choice announced in words that say it is one.
_DECIDED = re.compile(
    r"\b(?:we(?:'ve| have)? decided|i(?:'ve| have)? decided|decision:|decided:|we chose|we've chosen"
    r"|settled on|opted for"
    r"|we'll go with|let's go with|i'll go with|going with|we(?:'ll| will) use|let's use|architecture:)",
    re.IGNORECASE,
)
# A choice made against an alternative: "use X instead", "put it in Y instead since ...".
_INSTEAD = re.compile(
    r"\b(?:use|using|put|keep|configur\w*|switch\w*|replac\w*|mov\w*)\b[^;]{0,80}?\binstead\b", re.IGNORECASE
)
# A design choice with its reason or its alternative: "I'll make X public so both callers can use it",
# "I'll add spans for join and input without creating per-line spans". Without one, "I'll add ..." is
# most often the next step of the work.
_WILL_BECAUSE = re.compile(
    r"^(?:i|we)(?:'ll| will) (?:make|keep|store|use|add|put|move|switch|replace)\b.+"
    r"\b(?:so (?:that )?\w+|because|since|without|rather than)\b",
    re.IGNORECASE,
)
# The agent concluding what it ought to do: "I should remove my manual one and use the generated one".
_SHOULD = re.compile(
    r"^(?:i|we) should (?:use|remove|replace|switch|move|put|keep|make|store|rename|drop|do the same)\b",
    re.IGNORECASE,
)
# A change to the design reported as made, its verb first: "Merged X into Y", "Removed silent
# truncation, added a default". Additions ("Added tests") are mostly work done, not a choice.
_CHANGED = re.compile(r"^(?:removed|replaced|merged|switched|renamed|configured|migrated|dropped)\b", re.IGNORECASE)
# A plan's choices as the agent sums them up ("Plan uses HMAC-SHA256 with a server secret"), a choice a
# person states as theirs ("I want to use a hook to inject ..."), a tool picked for a reason ("..., so
# I can just use a try/rescue wrapper").
_CHOSEN = re.compile(
    r"^(?:the )?plan (?:uses|implements|accepts|keeps|adopts)\b|^(?:i|we) want to use\b"
    r"|\bso (?:i|we) can (?:just )?use\b",
    re.IGNORECASE,
)
# A statement of what exists is a fact, even with "instead" in it ("No X field exists - use Y instead").
_FACT = re.compile(r"\bexists?\b|\bdoes(?: not|n't) exist\b", re.IGNORECASE)
# In a spec or a user's words: "keep defaults, tune later", "fall back to manual entry".
_SPEC_CHOICE = re.compile(r"\b(?:keep (?:the )?defaults|fall back to)\b", re.IGNORECASE)
# The agent narrating its own next step or trying things out: never a decision by itself.
_TRYING = re.compile(r"\b(?:try(?!/)|trying|tried|let me check|let me see|maybe|might|could)\b", re.IGNORECASE)

# A rule given as an instruction: "Never ...", "Don't ...", "... — don't fix in this task".
_RULE_START = re.compile(r"^(?:never|don't|do not|must not|mustn't|always|avoid)\b", re.IGNORECASE)
# "Keep SessionStart hooks fast since they run on every session": a standing rule ("keep defaults" is
# a choice, taken above).
_KEEP = re.compile(r"^keep (?!(?:the )?defaults\b|it as-is\b|going\b)\w+", re.IGNORECASE)
_RULE_AFTER_DASH = re.compile(r"\s[—–-]\s+(?:just \w+, )?(?:don't|do not|never)\s+\w+", re.IGNORECASE)
_SCOPE_LIMIT = re.compile(r"^no (?!(?:new |more |other )?(?:issues?|errors?|warnings?|failures?|action|changes?)\b)\w+",
                          re.IGNORECASE)
_YOU_MUST = re.compile(r"\b(?:(?:you|we) must|must (?:never|not|always))\b", re.IGNORECASE)

_OPEN_QUESTION = re.compile(
    r"\b(?:tbd|to be decided|open question|undecided|still unclear whether)\b|^(?:should we|do we want)\b",
    re.IGNORECASE,
)


def classify(sentence: str, role: Role, quoted: bool = False) -> ItemKind | None:
    """The kind of item a sentence states, or None. `quoted`: it was in a quoted block (a spec)."""
    if _DECIDED.search(sentence) or (
        not _TRYING.search(sentence)
        and not _FACT.search(sentence)
        and any(rule.search(sentence) for rule in (_INSTEAD, _WILL_BECAUSE, _SHOULD, _CHANGED, _CHOSEN))
    ):
        return ItemKind.DECISION
    instruction = role is Role.USER or quoted
    if instruction and _SPEC_CHOICE.search(sentence):
        return ItemKind.DECISION
    # (Supersession rules, "X replaces Y", would be consulted here, from a module of their own.)
    # Only a question said to be open: a user's plain question ("What fields does the hook get?") is
    # most often asked of the agent and answered in the next turn.
    if _OPEN_QUESTION.search(sentence):
        return ItemKind.QUESTION
    if sentence.endswith("?"):
        return None
    if any(rule.search(sentence) for rule in (_RULE_START, _RULE_AFTER_DASH, _YOU_MUST, _KEEP)):
        return ItemKind.CONSTRAINT
    if instruction and _SCOPE_LIMIT.search(sentence):
        return ItemKind.CONSTRAINT
    return None


def _files_after(turns: list[TurnSlice], index: int) -> list[str]:
    """Files touched by the turn and by the work that follows it, up to the next user prompt."""
    files: dict[str, None] = dict.fromkeys(turns[index].files)
    for turn in turns[index + 1 :]:
        if turn.role is Role.USER:
            break
        files.update(dict.fromkeys(turn.files))
    return list(files)


class HeuristicExtractor:
    name = "heuristic"
    description = "the offline heuristic extractor (phrase rules, no network)"

    def extract(self, chunk: ChunkInput) -> Extraction:
        items: list[ItemDraft] = []
        seen: set[tuple[ItemKind, str]] = set()
        for index, turn in enumerate(chunk.turns):
            if turn.role not in (Role.USER, Role.ASSISTANT):
                continue
            for sentence, quoted in sentences(turn.text):
                kind = classify(sentence, turn.role, quoted)
                if kind is None or (kind, sentence.lower()) in seen:
                    continue
                seen.add((kind, sentence.lower()))
                statement, _, rationale = sentence.partition(" because ")
                items.append(
                    ItemDraft(
                        kind=kind,
                        statement=statement if rationale else sentence,
                        rationale=f"because {rationale}" if rationale else None,
                        confidence=0.6 if turn.role is Role.USER else 0.4,
                        turn_ids=[turn.turn_id],
                        files=_files_after(chunk.turns, index),
                        **supersede.fields(sentence, chunk.known_items),
                    )
                )
        return Extraction(chunk_id=chunk.chunk_id, items=items, extractor=self.name)
