"""Turns into chunks that fit a token budget. Splits, never trims.

Every turn lands in exactly one chunk; a turn larger than the budget is cut into parts, each in its
own chunk, that together cover its text exactly. Sizes are a conservative estimate (UTF-8 bytes per
token, rounded down) until a model's own count is known; a caller that learns the true count can
re-plan a chunk smaller with `split_slice`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

# Claude's newer tokenizer averages ~2.7 characters per English token; 2.5 bytes per token
# over-counts ASCII and counts multi-byte scripts at >1 token per character.
BYTES_PER_TOKEN = 2.5
MIN_CHUNK_TOKENS = 256


def estimate_tokens(text: str) -> int:
    if text.isascii():
        return math.ceil(len(text) / BYTES_PER_TOKEN)
    return math.ceil(len(text.encode("utf-8", errors="replace")) / BYTES_PER_TOKEN)


class TurnCost(NamedTuple):
    seq: int
    tokens: int  # header + text, estimated
    header_tokens: int


@dataclass(frozen=True)
class PlannedChunk:
    first_seq: int
    last_seq: int
    tokens: int
    char_start: int = 0
    char_end: int | None = None  # None: to the end of the turn (whole turns)
    part: int = 1
    parts: int = 1

    @property
    def is_part(self) -> bool:
        return self.parts > 1


def plan(
    turns: Sequence[TurnCost],
    budget: int,
    text_of: Callable[[int], str],
    open_tail: PlannedChunk | None = None,
) -> tuple[PlannedChunk | None, list[PlannedChunk]]:
    """Plan chunks for turns not yet in any chunk, in seq order.

    `open_tail` is the session's last chunk if it is still pending and has never been sent: new
    turns may join it while they fit. Returns the (possibly extended) tail and the new chunks.
    """
    budget = max(budget, MIN_CHUNK_TOKENS)
    new: list[PlannedChunk] = []
    tail = open_tail if open_tail is not None and not open_tail.is_part else None
    grown_tail: PlannedChunk | None = None
    # The chunk being filled lives in locals (first, last, tokens) and becomes a PlannedChunk only
    # when it closes: one object per chunk, not one per turn.
    filling = on_tail = grew = tail is not None
    first = last = tokens = 0
    if tail is not None:
        first, last, tokens, grew = tail.first_seq, tail.last_seq, tail.tokens, False
    for turn in turns:
        seq, cost = turn.seq, turn.tokens
        if filling and cost <= budget and tokens + cost <= budget:
            last = seq
            tokens += cost
            grew = grew or on_tail
            continue
        if filling:
            if not on_tail:
                new.append(PlannedChunk(first, last, tokens))
            elif grew and tail is not None:
                grown_tail = replace(tail, last_seq=last, tokens=tokens)
        on_tail = False
        if cost > budget:
            new.extend(_split_turn(turn, budget, text_of(seq)))
            filling = False  # a chunk covers a contiguous run of turns: the next one starts afresh
            continue
        first = last = seq
        tokens = cost
        filling = True
    if filling:
        if not on_tail:
            new.append(PlannedChunk(first, last, tokens))
        elif grew and tail is not None:
            grown_tail = replace(tail, last_seq=last, tokens=tokens)
    return grown_tail, new


def _split_turn(turn: TurnCost, budget: int, text: str) -> list[PlannedChunk]:
    room = max(budget - turn.header_tokens, MIN_CHUNK_TOKENS // 2)
    bounds = split_text(text, room)
    return [
        PlannedChunk(turn.seq, turn.seq, turn.header_tokens + estimate_tokens(text[a:b]), a, b, i + 1, len(bounds))
        for i, (a, b) in enumerate(bounds)
    ]


def split_text(text: str, max_tokens: int, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Cut text[start:end] into consecutive (start, end) ranges of at most max_tokens each,
    preferring a line break in the last fifth of a range. The ranges cover the text exactly."""
    end = len(text) if end is None else end
    bounds: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        size = max(1, int(max_tokens * BYTES_PER_TOKEN))
        stop = min(end, pos + size)
        while stop > pos + 1 and estimate_tokens(text[pos:stop]) > max_tokens:
            stop = pos + max(1, (stop - pos) * 3 // 4)
        if stop < end:
            newline = text.rfind("\n", pos + (stop - pos) * 4 // 5, stop)
            if newline > pos:
                stop = newline + 1
        bounds.append((pos, stop))
        pos = stop
    return bounds or [(start, start)]
