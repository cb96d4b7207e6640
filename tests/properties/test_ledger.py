"""The chunk ledger's rules, and the store's SQL held to them: where SQL applies a rule itself for
speed (what is due; a turn's state in session counts), it must agree with checkpoint.ledger on any
set of chunks."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkpoint import ledger
from checkpoint.ledger import ChunkSpan, Move, TurnState
from checkpoint.liveness import Process
from checkpoint.model import ChunkState, Totals
from checkpoint.store import Store

NOW = 1_000.0
STATES = st.sampled_from(list(ChunkState))
Layout = tuple[int, list[tuple[ChunkSpan, int]]]  # turns, [(chunk, char_start)]


@st.composite
def sessions(draw: st.DrawFn) -> Layout:
    """A session's turns covered as the chunker covers them: runs of whole turns, or one turn cut
    into parts, each with any state; the last turns perhaps in no chunk yet. (turns, [(chunk, char_start)])."""
    turns = draw(st.integers(0, 30))
    chunked = draw(st.integers(0, turns))
    chunks: list[tuple[ChunkSpan, int]] = []
    seq = 1
    while seq <= chunked:
        if draw(st.booleans()):
            last = min(chunked, seq + draw(st.integers(0, 3)))
            chunks.append((ChunkSpan(seq, last, 1, 1, draw(STATES)), 0))
            seq = last + 1
        else:
            parts = draw(st.integers(2, 4))
            chunks += [(ChunkSpan(seq, seq, part, parts, draw(STATES)), 100 * (part - 1))
                       for part in range(1, parts + 1)]
            seq += 1
    return turns, chunks


@contextmanager
def _store() -> Iterator[Store]:
    with TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "db", clock=lambda: NOW)
        try:
            yield store
        finally:
            store.close()


def _insert(store: Store, session_id: str, turns: int, chunks: list[tuple[ChunkSpan, int]],
            times: list[tuple[float, float | None]] | None = None) -> None:
    with store.transaction() as c:
        c.execute("INSERT INTO sessions (id, agent, turns) VALUES (?, 'claude', ?)", (session_id, turns))
        for i, (chunk, start) in enumerate(chunks):
            next_try, lease_until = times[i] if times else (0.0, None)
            c.execute(
                "INSERT INTO chunks (session_id, first_seq, last_seq, char_start, part, parts, tokens, state,"
                " next_try, lease_until) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (session_id, chunk.first_seq, chunk.last_seq, start, chunk.part, chunk.parts, 10,
                 str(chunk.state), next_try, lease_until),
            )


@settings(max_examples=150, deadline=None)
@given(st.lists(sessions(), min_size=1, max_size=4))
def test_session_counts_sql_agrees_with_the_ledgers_turn_states(layouts: list[Layout]) -> None:
    with _store() as store:
        for n, (turns, chunks) in enumerate(layouts):
            _insert(store, f"s{n}", turns, chunks)
        counts = {s.id: s for s in store.session_counts()}
        for n, (turns, chunks) in enumerate(layouts):
            expected = ledger.turn_counts(turns, [c for c, _ in chunks])
            s = counts[f"s{n}"]
            assert (s.captured, s.failed, s.pending) == (
                expected[TurnState.CAPTURED], expected[TurnState.FAILED], expected[TurnState.PENDING])
        # the totals `checkpoint scan` prints, in two aggregate queries, are those counts summed
        assert store.totals() == (len(layouts), Totals.of(list(counts.values())))


@settings(max_examples=150, deadline=None)
@given(sessions())
def test_the_watermark_is_the_last_turn_of_the_captured_prefix_of_turns(layout: Layout) -> None:
    """Two rules of the ledger agree: the chunk-order prefix rule, and "every turn up to the mark is
    captured (each chunk holding it is), the next one is not". The store's `_watermark` is the
    ledger's over the rows SQL returns."""
    turns, chunks = layout
    states = [ledger.turn_state(c.state for c, _ in chunks if c.first_seq <= seq <= c.last_seq)
              for seq in range(1, turns + 1)]
    prefix = sum(1 for _ in itertools.takewhile(lambda s: s is TurnState.CAPTURED, states))
    assert ledger.watermark(c for c, _ in chunks) == prefix
    with _store() as store:
        _insert(store, "s", turns, chunks)
        assert Store._watermark(store.conn, "s") == prefix


TIMES = st.one_of(st.just(NOW), st.floats(NOW - 100, NOW + 100))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(STATES, TIMES, st.one_of(st.none(), TIMES)), max_size=25), st.booleans())
def test_the_due_clause_agrees_with_the_ledger(chunks: list[tuple[ChunkState, float, float | None]],
                                               respect_backoff: bool) -> None:
    spans = [(ChunkSpan(i + 1, i + 1, 1, 1, state), 0) for i, (state, _, _) in enumerate(chunks)]
    due = [i for i, (state, next_try, lease) in enumerate(chunks)
           if ledger.is_due(state, next_try, lease, NOW, respect_backoff)]
    with _store() as store:
        _insert(store, "s", len(chunks), spans, [(t, lease) for _, t, lease in chunks])
        assert store.due_by_session(respect_backoff).get("s", 0) == len(due)
        if not respect_backoff:
            assert store.due_count("s") == len(due)
            claimed = store.claim_chunks(100, "me", respect_backoff=False)
            assert sorted(c.chunk_id - 1 for c in claimed) == due  # ids given in insertion order


OWNERS = st.sampled_from(["live", "dead", "remote", None])  # None: the owner was never recorded


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(STATES, TIMES, st.one_of(st.none(), TIMES), OWNERS), max_size=25))
def test_the_due_clause_agrees_with_the_ledger_on_the_owners_life(
    chunks: list[tuple[ChunkState, float, float | None, str | None]],
) -> None:
    """A sent chunk whose owner is known dead is due before its lease ends; a live owner's, a remote
    owner's and an unrecorded owner's only once it ended."""
    here = Process("here", 1, 1)
    life = {"live": True, "dead": False, "remote": None}
    spans = [(ChunkSpan(i + 1, i + 1, 1, 1, state), 0) for i, (state, _, _, _) in enumerate(chunks)]
    due = [i for i, (state, next_try, lease, owner) in enumerate(chunks)
           if ledger.is_due(state, next_try, lease, NOW, True, owner_dead=owner == "dead")]
    with _store() as store:
        store.this_process = lambda: here
        store.process_alive = lambda p, _host: life[str(p.host)]
        _insert(store, "s", len(chunks), spans, [(t, lease) for _, t, lease, _ in chunks])
        with store.transaction() as c:
            for i, (_, _, _, owner) in enumerate(chunks):
                if owner is not None:
                    c.execute("UPDATE chunks SET lease_owner = ? WHERE id = ?", (f"{owner}-{i}", i + 1))
                    c.execute("INSERT INTO lease_owners (owner, host, pid, started, since) VALUES (?,?,2,2,0)",
                              (f"{owner}-{i}", owner))
        assert store.due_by_session(True).get("s", 0) == len(due)
        claimed = store.claim_chunks(100, "me", respect_backoff=True)
        assert sorted(c.chunk_id - 1 for c in claimed) == due


def test_a_captured_chunk_never_moves_again() -> None:
    assert not any(ledger.allows(move, ChunkState.CAPTURED) for move in Move)
    assert not ledger.is_due(ChunkState.CAPTURED, 0.0, None, NOW, respect_backoff=False)


@pytest.mark.parametrize(("move", "state", "allowed"), [
    (Move.CLAIM, ChunkState.PENDING, True), (Move.CLAIM, ChunkState.FAILED, True),
    (Move.CAPTURE, ChunkState.SENT, True), (Move.CAPTURE, ChunkState.PENDING, False),
    (Move.CAPTURE, ChunkState.FAILED, False), (Move.FAIL, ChunkState.PENDING, False),
    (Move.RESPLIT, ChunkState.SENT, True), (Move.RESPLIT, ChunkState.FAILED, False),
    (Move.FORM, None, True), (Move.FORM, ChunkState.SENT, False),
])
def test_moves(move: Move, state: ChunkState | None, allowed: bool) -> None:
    assert ledger.allows(move, state) is allowed


def test_a_released_chunk_is_pending_unless_an_attempt_failed_before() -> None:
    assert ledger.released(0) is ChunkState.PENDING
    assert ledger.released(2) is ChunkState.FAILED
