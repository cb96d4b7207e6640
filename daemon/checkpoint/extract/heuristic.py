"""The offline extractor: deterministic phrase rules, no network. A floor, not the product.

It reads only what the user and the assistant said (extract/said.py: no reasoning, tool output,
hook output or machine notices) and keeps a whole sentence only when its wording leaves little doubt:
a choice announced as such, a rule stated as an instruction, a question the user left open. Fewer,
right items: a sentence that merely contains "never" or "must" (most often a remark about code) is
not a constraint, the agent's narration of its next step is not a decision, and neither is what a parent
agent asks of a sub-agent ("Please provide the FULL content of each file - don't summarize").

Across sessions: a restatement behind a lead-in ("Reminder: we decided ...", extract/restate.py) merges
into the known item it repeats, and an explicit switch that names a known item ("switch from X to Y",
"no longer use X", extract/supersessions.py) is a decision that supersedes it; the switch said again in
the same chunk or later is cited on the item that says it, never made a second one.
"""

from __future__ import annotations

import re
from typing import Any

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.checks.derive import derive_check
from checkpoint.extract import supersessions
from checkpoint.extract.restate import Lead, lead_in, repeated
from checkpoint.extract.said import sentences
from checkpoint.model import ChunkInput, ItemKind, KnownItem, Role, TurnSlice

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
    r"^(?:i|we) should (?:use|remove|replace|switch|move|put|keep|make|store|rename|drop)\b",
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
# The agent's next step with a tool or a command ("Let me use find instead of ls"): never an item.
_NEXT_STEP = re.compile(
    r"^(?:(?:ok(?:ay)?|now|first|next|so|great|good|perfect|alright|right)[,!.:]?\s+)*let me (?:now |first |just )?"
    r"(?:use|run|try|check|see|look|read|search|find|grep|list|verify|test|start|do)\b",
    re.IGNORECASE,
)
# What one agent asks of another (a sub-agent's prompt, written as its user turn): a request for this
# task's output, not a lasting rule ("Please provide the FULL content of each file - don't summarize").
_TASK_REQUEST = re.compile(
    r"^(?:please\s+)?(?:provide|report(?: back)?|return|give me|show me|list|summari[sz]e|explore|search|look"
    r" (?:at|for|into)|find)\b",
    re.IGNORECASE,
)

# A rule given as an instruction: "Never ...", "Don't ...", "... — don't fix in this task".
_RULE_START = re.compile(r"^(?:never|don't|do not|must not|mustn't|always|avoid)\b", re.IGNORECASE)
# "Keep SessionStart hooks fast since they run on every session": a standing rule ("keep defaults" is
# a choice, taken above).
_KEEP = re.compile(r"^keep (?!(?:the )?defaults\b|it as-is\b|going\b)\w+", re.IGNORECASE)
_RULE_AFTER_DASH = re.compile(r"\s[—–-]\s+(?:just \w+, )?(?:don't|do not|never)\s+\w+", re.IGNORECASE)
_SCOPE_LIMIT = re.compile(r"^no (?!(?:new |more |other )?(?:issues?|errors?|warnings?|failures?|action|changes?)\b)\w+",
                          re.IGNORECASE)
_YOU_MUST = re.compile(r"\b(?:(?:you|we) must|must (?:never|not|always))\b", re.IGNORECASE)

# The same, said in other languages. Japanese: written on the Japanese prompts of tests/data/heuristic
# (split tuning: "…を守るようにしてほしい", "…にしたい", "…が理想だな"; a bare "…して" is a task, "…して
# おいて" too). Chinese and Russian: from the languages' usual wording only, no labelled sentence yet.
# Said by the person (or quoted from a spec): an agent's sentence in these words is not covered.
_WANTED_SO = re.compile(
    r"ようにして(?:ほしい|ください|くれ)?|ようにしたい|ように(?:指示を)?(?:変えて|して)|にしたい|が理想"
    r"|(?:は|が)欲しい"
    r"|决定(?:使用|采用|用)|我们(?:用|使用|采用)|改用|统一(?:使用|用)|不再使用|就用"
    r"|(?:давайте|будем) использовать|\bрешили\b|\bиспользуем\b|\bпереходим на\b",
    re.IGNORECASE,
)
_RULE_WORDS = re.compile(
    r"しないで|してはいけない|ないように|禁止|必ず|絶対に|ように(?:[.。]|$)"
    r"|不要|禁止|必须|一定要|不能|永远不要|始终"
    r"|^(?:никогда|всегда|нельзя|обязательно|не используй)",
    re.IGNORECASE,
)

_OPEN_QUESTION = re.compile(
    r"\b(?:tbd|to be decided|open question|undecided|still unclear whether)\b|^(?:should we|do we want)\b",
    re.IGNORECASE,
)


def classify(sentence: str, role: Role, quoted: bool = False) -> ItemKind | None:
    """The kind of item a sentence states, or None. `quoted`: it was in a quoted block (a spec)."""
    if _NEXT_STEP.search(sentence) or _TASK_REQUEST.search(sentence):
        return None
    if _DECIDED.search(sentence) or (
        not _TRYING.search(sentence)
        and not _FACT.search(sentence)
        and any(rule.search(sentence) for rule in (_INSTEAD, _WILL_BECAUSE, _SHOULD, _CHANGED, _CHOSEN))
    ):
        return ItemKind.DECISION
    instruction = role is Role.USER or quoted
    if instruction and _SPEC_CHOICE.search(sentence):
        return ItemKind.DECISION
    bare = sentence.rstrip("。.！!")
    if instruction and _RULE_WORDS.search(bare):
        return ItemKind.CONSTRAINT
    if instruction and _WANTED_SO.search(bare):
        return ItemKind.DECISION
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


def _not_a_choice(sentence: str) -> bool:
    """Said while working, asking or trying, never choosing: even a switch it names is no decision."""
    return sentence.endswith("?") or any(
        rule.search(sentence) for rule in (_NEXT_STEP, _TASK_REQUEST, _TRYING, _FACT))


def _kind_and_links(said: str, lead: Lead | None, kind: ItemKind | None,
                    known: list[KnownItem]) -> tuple[ItemKind | None, dict[str, Any]]:
    """The kind of item a sentence (its lead-in removed) makes and the known item it restates or
    supersedes (ItemDraft keywords). A restatement behind a lead-in takes the kind of the item it
    repeats; a switch that names a known item, or follows "Change of plan:", is a decision whatever
    its wording, unless it is said while working or asking."""
    if _NEXT_STEP.search(said) or _TASK_REQUEST.search(said):
        return None, {}
    links = supersessions.fields(said, known)
    if lead is Lead.RESTATED and "same_as" not in links:
        again = repeated(said, known)
        if again is not None:
            return again.kind, {"same_as": again.id}
    if kind is None and (links or lead is Lead.CHANGED) and not _not_a_choice(said):
        kind = ItemKind.DECISION
    return kind, links if kind is not None else {}


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
                lead, said = lead_in(sentence)
                kind, links = _kind_and_links(said, lead, classify(said, turn.role, quoted), chunk.known_items)
                if kind is None or (kind, said.lower()) in seen:
                    continue
                seen.add((kind, said.lower()))
                files = _files_after(chunk.turns, index)
                # The switch said again in this chunk ("Redis is no longer used", "Done: ... instead of
                # Redis"): cited on the item that says it.
                earlier = next((i for i in items if kind is ItemKind.DECISION and i.kind is ItemKind.DECISION
                                and supersessions.restates(said, i.statement)), None)
                if earlier is not None:
                    earlier.turn_ids = list(dict.fromkeys([*earlier.turn_ids, turn.turn_id]))
                    earlier.files = list(dict.fromkeys([*earlier.files, *files]))
                    continue
                statement, _, rationale = said.partition(" because ")
                items.append(
                    ItemDraft(
                        kind=kind,
                        statement=statement if rationale else said,
                        rationale=f"because {rationale}" if rationale else None,
                        confidence=0.6 if turn.role is Role.USER else 0.4,
                        turn_ids=[turn.turn_id],
                        files=files,
                        check=derive_check(said, kind),
                        **links,
                    )
                )
        return Extraction(chunk_id=chunk.chunk_id, items=items, extractor=self.name)
