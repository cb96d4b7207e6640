"""The offline extractor: deterministic phrase rules, no network. A floor, not the product.

It reads what the user and the assistant said (never tool output or private reasoning) and keeps
sentences that announce a decision, state a constraint, or leave a question open.
"""

from __future__ import annotations

import re

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.extract import supersede
from checkpoint.model import ChunkInput, ItemKind, Role, TurnSlice

_DECISION = re.compile(
    r"\b(we'll use|we will use|we'll go with|let's go with|let's use|going with|decided|decision:"
    r"|we chose|we choose|settled on|opted for|we'll keep|switch(?:ed|ing)? to)\b",
    re.IGNORECASE,
)
_CONSTRAINT = re.compile(
    r"\b(must|never|always|don't|do not|shouldn't|should not|is required|are required|mustn't)\b", re.IGNORECASE
)
_QUESTION = re.compile(
    r"\b(tbd|to be decided|open question|should we|do we want|not sure (?:whether|if)|undecided)\b", re.IGNORECASE
)
# Questions that ask the user for permission are conversation, not open questions of the project.
_CHATTER = re.compile(
    r"^(would you like|want me|shall i|should i|do you want|can you|could you|did you|is that|does that)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])|\n+")
_MARKUP = re.compile(r"^[\s>*#\-+\d.)]+|[*`]+")  # not `_`: it joins words (max_tokens)
MIN_LEN, MAX_LEN = 15, 300


def _sentences(text: str) -> list[str]:
    out = []
    for raw in _SENTENCE_END.split(text):
        line = raw.strip()
        if line.startswith(("```", "    ", "\t", "|", "<", "{", "[", "(thinking)", "(reasoning)")):
            continue
        clean = " ".join(_MARKUP.sub("", line).split())
        if MIN_LEN <= len(clean) <= MAX_LEN:
            out.append(clean)
    return out


def classify(sentence: str) -> ItemKind | None:
    if _DECISION.search(sentence):
        return ItemKind.DECISION
    if sentence.endswith("?"):
        return None if _CHATTER.search(sentence) else ItemKind.QUESTION
    if _QUESTION.search(sentence):
        return ItemKind.QUESTION
    if _CONSTRAINT.search(sentence):
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
            for sentence in _sentences(turn.text):
                kind = classify(sentence)
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
