"""The chunk ledger: the rules every chunk of every session follows. Pure: no SQL, no I/O. The store
(checkpoint.store.chunks) carries them out in SQL, checks its moves against `MOVES`, builds its state
literals from `ChunkState`, and derives the watermark with `watermark()` below; where SQL applies a
rule itself for speed (what is due, the state of a turn in session counts), a property test
(tests/properties/test_ledger.py) checks it agrees with the functions here on random chunk sets.

States (checkpoint.model.ChunkState):
    pending   formed from turns, never answered
    sent      leased to one run until `lease_until`; the run renews the lease while it waits
    captured  the answer's items committed, with the state, in one transaction; final
    failed    the last attempt failed; its cause is recorded and it is tried again

Moves (`MOVES`: from which states, to which):
    form      (new)    -> pending   turns put into chunks; the open tail (pending, never tried) may
                                    grow over later turns, staying pending
    claim     pending  -> sent      leased to a run
              failed   -> sent      a retry
              sent     -> sent      a lease that expired, or whose owner is known dead, taken over
    renew     sent     -> sent      the run holding it is alive
    capture   sent     -> captured  only by the run holding the lease (commit_extraction)
    fail      sent     -> failed    only by the run holding the lease; attempts + 1, backoff starts
    release   sent     -> pending   leased but never attempted (a budget ran out, a run stopped)
              sent     -> failed    released after an earlier failed attempt (attempts > 0)
    resplit   sent     -> (gone)    replaced, by the run holding the lease, by smaller pending chunks
                                    covering exactly the same turns (or characters of one turn)
A captured chunk never moves again: it is never due, never sent twice, never committed twice.

Due (what a run may claim): every pending chunk; a failed chunk once its backoff ended, or at once in
an explicit run (`respect_backoff=False`); a sent chunk whose lease expired (its run died or stalled),
or at once when its owner is known dead: a process on this machine that is gone (checkpoint.liveness:
pid and start time). A live owner's lease is never taken over before it expires, and an owner whose life
cannot be told (another machine, another pid namespace) keeps the lease's time bound.

Watermark: chunks in (first_seq, char_start) order; the watermark is the end of their contiguous
captured prefix: the last turn of the last captured chunk before the first chunk not captured (or
the first gap in turns). A part of a split turn that is not the last part captures none of its turn:
the mark stays before that turn until every part is captured. It is derived from chunk states only,
never from what was formed or sent.

Turns: a turn is captured when every chunk holding it is captured (a split turn is held by each of
its parts); failed when one of them failed; pending otherwise (also when no chunk holds it yet).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from enum import StrEnum
from typing import NamedTuple

from checkpoint.model import ChunkState

PENDING, SENT, CAPTURED, FAILED = ChunkState.PENDING, ChunkState.SENT, ChunkState.CAPTURED, ChunkState.FAILED


class Move(StrEnum):
    FORM = "form"
    CLAIM = "claim"
    RENEW = "renew"
    CAPTURE = "capture"
    FAIL = "fail"
    RELEASE = "release"
    RESPLIT = "resplit"


# move -> (states it starts from, states it may end in; an empty end: the chunk is replaced)
MOVES: dict[Move, tuple[frozenset[ChunkState | None], frozenset[ChunkState]]] = {
    Move.FORM: (frozenset({None, PENDING}), frozenset({PENDING})),
    Move.CLAIM: (frozenset({PENDING, FAILED, SENT}), frozenset({SENT})),
    Move.RENEW: (frozenset({SENT}), frozenset({SENT})),
    Move.CAPTURE: (frozenset({SENT}), frozenset({CAPTURED})),
    Move.FAIL: (frozenset({SENT}), frozenset({FAILED})),
    Move.RELEASE: (frozenset({SENT}), frozenset({PENDING, FAILED})),
    Move.RESPLIT: (frozenset({SENT}), frozenset()),
}


def allows(move: Move, state: ChunkState | str | None) -> bool:
    """Whether a chunk in `state` (None: not formed yet) may make `move`."""
    return (None if state is None else ChunkState(state)) in MOVES[move][0]


def released(attempts: int) -> ChunkState:
    """Where a released chunk goes: back to pending, or to failed if an earlier attempt failed."""
    return FAILED if attempts > 0 else PENDING


def is_due(
    state: ChunkState | str, next_try: float, lease_until: float | None, now: float, respect_backoff: bool,
    owner_dead: bool = False,
) -> bool:
    """Whether a run may claim the chunk now. `owner_dead`: the run that leased it is known to be gone."""
    state = ChunkState(state)
    if state is PENDING:
        return True
    if state is FAILED:
        return not respect_backoff or next_try <= now
    if state is SENT:
        return owner_dead or (lease_until is not None and lease_until < now)
    return False


class ChunkSpan(NamedTuple):
    """Which turns (or which part of one turn) a chunk holds, and its state: a row as SQL returns it."""

    first_seq: int
    last_seq: int
    part: int
    parts: int
    state: ChunkState | str


def watermark(chunks: Iterable[tuple[int, int, int, int, str]]) -> int:
    """End of the contiguous captured prefix; `chunks` in (first_seq, char_start) order."""
    mark = 0
    for first, last, part, parts, state in chunks:
        if state != CAPTURED or first > mark + 1:
            break
        mark = last if part == parts else first - 1
    return mark


class TurnState(StrEnum):
    CAPTURED = "captured"
    PENDING = "pending"
    FAILED = "failed"


# How bad each chunk state is for the turns it holds: a turn takes the worst of its chunks'.
TURN_RANK: dict[ChunkState, int] = {CAPTURED: 0, PENDING: 1, SENT: 1, FAILED: 2}
TURN_BY_RANK = {0: TurnState.CAPTURED, 1: TurnState.PENDING, 2: TurnState.FAILED}


def turn_state(states: Iterable[ChunkState | str]) -> TurnState:
    """The state of a turn from the states of the chunks holding it (none: pending)."""
    ranks = [TURN_RANK[ChunkState(s)] for s in states]
    return TURN_BY_RANK[max(ranks)] if ranks else TurnState.PENDING


def turn_counts(turns: int, chunks: Iterable[ChunkSpan]) -> Counter[TurnState]:
    """Turns 1..`turns` of a session by state, from the chunks that hold them."""
    holding: dict[int, list[ChunkState | str]] = {}
    for chunk in chunks:
        for seq in range(chunk.first_seq, chunk.last_seq + 1):
            holding.setdefault(seq, []).append(chunk.state)
    return Counter(turn_state(holding.get(seq, ())) for seq in range(1, turns + 1))
