"""Chunks: formed from turns within a token budget, leased to a run, then captured, failed,
released or re-split. The rules they follow are checkpoint.ledger's; this is their SQL."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from checkpoint import chunker, ledger
from checkpoint.config import LEASE_SECONDS
from checkpoint.ledger import Move
from checkpoint.model import ChunkInput, ChunkState, Role, TurnSlice, Usage
from checkpoint.store.items import store_items
from checkpoint.store.leases import LeasesMixin
from checkpoint.store.rows import LeaseLost
from checkpoint.store.runs import add_usage

if TYPE_CHECKING:
    from checkpoint.answer import Extraction


# The states as SQL literals, from the enum: no state is spelled out by hand in a statement.
PENDING, SENT, CAPTURED, FAILED = (f"'{s.value}'" for s in (ChunkState.PENDING, ChunkState.SENT,
                                                           ChunkState.CAPTURED, ChunkState.FAILED))


def turn_text(c: sqlite3.Connection, session_id: str, seq: int) -> str:
    row = c.execute("SELECT text FROM turns WHERE session_id = ? AND seq = ?", (session_id, seq)).fetchone()
    return str(row[0]) if row else ""


def chunk_turns(
    c: sqlite3.Connection, session_id: str, turns: Sequence[chunker.TurnCost], budget: int, now: float
) -> int:
    """Plan chunks for a session's turns that are in none yet (in seq order, after every chunked
    one): they may join the session's open tail. Inserts the new chunks; returns how many."""
    # `+state`: look the session's chunks up by session (its few), not every pending chunk of every
    # session by state, which the planner otherwise picks: after a cold scan of 2,000 sessions every
    # chunk is pending, and this lookup took 470 us instead of 7 (the scan as a whole went quadratic).
    tail_row = c.execute(
        "SELECT id, first_seq, last_seq, tokens FROM chunks WHERE session_id = ? AND parts = 1"
        f" AND +state = {PENDING} AND attempts = 0 AND last_seq = ("
        "   SELECT max(last_seq) FROM chunks WHERE session_id = ?)",
        (session_id, session_id),
    ).fetchone()
    open_tail = chunker.PlannedChunk(tail_row[1], tail_row[2], tail_row[3]) if tail_row else None
    grown, new = chunker.plan(turns, budget, partial(turn_text, c, session_id), open_tail)
    if grown is not None and tail_row is not None:
        c.execute(
            "UPDATE chunks SET last_seq = ?, tokens = ?, updated_at = ? WHERE id = ?",
            (grown.last_seq, grown.tokens, now, tail_row[0]),
        )
    c.executemany(
        "INSERT INTO chunks (session_id, first_seq, last_seq, char_start, char_end, part, parts,"
        " tokens, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
        [(session_id, ch.first_seq, ch.last_seq, ch.char_start, ch.char_end, ch.part, ch.parts, ch.tokens, now)
         for ch in new],
    )
    return len(new)



class ChunksMixin(LeasesMixin):
    """The chunk ledger's writes, and what is due."""

    def form_chunks(self, budget: int) -> int:
        """Put every turn that is in no chunk yet into one. Returns chunks created."""
        created = 0
        sessions = [
            r[0] for r in self.conn.execute("SELECT DISTINCT session_id FROM turns WHERE chunked = 0")
        ]
        for session_id in sessions:
            with self.transaction() as c:
                turns = [
                    chunker.TurnCost(*r)
                    for r in c.execute(
                        "SELECT seq, tokens, header_tokens FROM turns WHERE session_id = ? AND chunked = 0"
                        " ORDER BY seq",
                        (session_id,),
                    )
                ]
                created += chunk_turns(c, session_id, turns, budget, self.clock())
                c.execute("UPDATE turns SET chunked = 1 WHERE session_id = ? AND chunked = 0", (session_id,))
        return created

    def _due_clause(self, respect_backoff: bool, c: sqlite3.Connection | None = None) -> tuple[str, list[Any]]:
        """ledger.is_due in SQL; a sent chunk whose owner is known dead is due (owner_dead)."""
        now = self.clock()
        backoff = "next_try <= ?" if respect_backoff else "1"
        dead = self.dead_owners(c)
        dead_clause = f" OR lease_owner IN ({','.join('?' * len(dead))})" if dead else ""
        return (
            f"((state = {PENDING}) OR (state = {FAILED} AND {backoff})"
            f" OR (state = {SENT} AND (lease_until < ?{dead_clause})))",
            ([now] if respect_backoff else []) + [now, *dead],
        )

    def due_count(self, sessions: str | Sequence[str] | None = None) -> int:
        """Chunks due in one session, in several (one query, however many), or in all (None)."""
        return self.due_summary(sessions)[0]

    def due_by_session(self, respect_backoff: bool = True) -> dict[str, int]:
        """Due chunks per session; with respect_backoff, failed chunks count once their backoff ended."""
        clause, args = self._due_clause(respect_backoff)
        return {
            sid: int(n)
            for sid, n in self.conn.execute(
                f"SELECT session_id, count(*) FROM chunks WHERE {clause} GROUP BY session_id", args
            )
        }

    def claim_chunks(
        self,
        limit: int,
        owner: str,
        lease_seconds: float = LEASE_SECONDS,
        session_id: str | None = None,
        exclude: Collection[int] = (),
        respect_backoff: bool = True,
        first: Collection[str] = (),
    ) -> list[ChunkInput]:
        """Lease up to `limit` due chunks (pending, failed, or sent with an expired lease), in turn
        order, so that no other runner, in this process or another, extracts them meanwhile. The
        sessions in `first` (transcripts about to be deleted) come before all others."""
        now = self.clock()
        with self.transaction() as c:
            # liveness told inside the transaction: no other run claims a dead owner's chunks meanwhile
            clause, args = self._due_clause(respect_backoff, c)
            if session_id:
                clause += " AND session_id = ?"
                args.append(session_id)
            order = "session_id, first_seq, char_start"
            if first and not session_id:
                order = f"session_id NOT IN ({','.join('?' * len(first))}), {order}"
                args += list(first)
            self._register_owner(c, owner)
            rows = c.execute(
                f"SELECT id FROM chunks WHERE {clause} ORDER BY {order} LIMIT ?",
                [*args, limit + len(exclude)],
            ).fetchall()
            ids = [r[0] for r in rows if r[0] not in exclude][:limit]
            for chunk_id in ids:
                c.execute(
                    f"UPDATE chunks SET state = {SENT}, lease_owner = ?, lease_until = ?, updated_at = ?"
                    " WHERE id = ?",
                    (owner, now + lease_seconds, now, chunk_id),
                )
        return [self.chunk_input(i) for i in ids]

    def chunk_input(self, chunk_id: int) -> ChunkInput:
        row = self.conn.execute(
            "SELECT c.session_id, c.first_seq, c.last_seq, c.char_start, c.char_end, c.part, c.parts,"
            " c.tokens, s.agent, s.cwd FROM chunks c JOIN sessions s ON s.id = c.session_id WHERE c.id = ?",
            (chunk_id,),
        ).fetchone()
        session_id, first, last, start, end, part, parts, tokens, agent, cwd = row
        slices = []
        for tid, seq, role, text, files, ts in self.conn.execute(
            "SELECT id, seq, role, text, files, ts FROM turns WHERE session_id = ? AND seq BETWEEN ? AND ?"
            " ORDER BY seq",
            (session_id, first, last),
        ):
            if parts > 1:
                text = text[start:end]
            slices.append(
                TurnSlice(turn_id=tid, seq=seq, role=Role(role), text=text, files=tuple(orjson.loads(files)),
                          timestamp=ts, part=part, parts=parts, char_start=start if parts > 1 else 0)
            )
        return ChunkInput(chunk_id=chunk_id, session_id=session_id, agent=agent, cwd=cwd, turns=slices,
                          token_estimate=tokens)

    def commit_extraction(self, extraction: Extraction, owner: str) -> int:
        """The one place a marker moves: items, chunk state, watermark and the chunk's usage in one
        transaction. Returns items added: a restated item (same fingerprint, or `same_as` naming an
        item of the session) updates the existing one instead."""
        now = self.clock()
        with self.transaction() as c:
            row = c.execute(
                "SELECT session_id, state, lease_owner FROM chunks WHERE id = ?", (extraction.chunk_id,)
            ).fetchone()
            if row is None or not ledger.allows(Move.CAPTURE, row[1]) or row[2] != owner:
                raise LeaseLost(f"chunk {extraction.chunk_id} is not leased to this run")
            session_id = row[0]
            added = store_items(c, session_id, extraction, now)
            c.execute(
                f"UPDATE chunks SET state = {CAPTURED}, cause = NULL, lease_owner = NULL, lease_until = NULL,"
                " updated_at = ? WHERE id = ?",
                (now, extraction.chunk_id),
            )
            c.execute(
                "UPDATE sessions SET watermark = ? WHERE id = ?", (self._watermark(c, session_id), session_id)
            )
            add_usage(c, session_id, extraction.usage, now)
        return added


    def fail_chunk(
        self, chunk_id: int, owner: str, cause: str, backoff: Callable[[int], float], usage: Usage | None = None
    ) -> bool:
        """Record why a chunk failed. It stays due: background runs wait backoff(attempts) first.
        False: the chunk is no longer leased to `owner` (another runner took it over); nothing recorded."""
        with self.transaction() as c:
            row = c.execute(
                "SELECT attempts, session_id FROM chunks WHERE id = ? AND lease_owner = ?", (chunk_id, owner)
            ).fetchone()
            if row is None:
                return False
            now = self.clock()
            c.execute(
                f"UPDATE chunks SET state = {FAILED}, cause = ?, attempts = attempts + 1, lease_owner = NULL,"
                " lease_until = NULL, next_try = ?, updated_at = ? WHERE id = ?",
                (cause[:2000], now + backoff(row[0] + 1), now, chunk_id),
            )
            if usage is not None:
                add_usage(c, row[1], usage, now)
        return True

    def resplit_chunk(
        self, chunk_id: int, owner: str, target_tokens: int | None, cause: str, usage: Usage | None = None
    ) -> int:
        """Replace one leased chunk by smaller chunks covering exactly the same turns (for a part of a
        split turn: exactly the same characters), in one transaction; they are due at once. The
        watermark orders chunks by (first_seq, char_start), so the pieces keep their place.

        `target_tokens` is the size that would fit (chunker estimate); without it, halves. Returns the
        number of pieces, or 0 when the chunk cannot get smaller (the caller records a failure)."""
        now = self.clock()
        with self.transaction() as c:
            row = c.execute(
                "SELECT session_id, first_seq, last_seq, char_start, char_end, tokens, state, lease_owner"
                " FROM chunks WHERE id = ?",
                (chunk_id,),
            ).fetchone()
            if row is None or not ledger.allows(Move.RESPLIT, row[6]) or row[7] != owner:
                raise LeaseLost(f"chunk {chunk_id} is not leased to this run")
            session_id, first, last, start, end, tokens = row[:6]
            budget = tokens // 2 if target_tokens is None or target_tokens >= tokens else target_tokens
            budget = max(budget, chunker.MIN_CHUNK_TOKENS)
            if first == last:
                pieces = self._split_one_turn(c, session_id, first, start, end, budget)
            else:
                costs = [
                    chunker.TurnCost(seq, t, h)
                    for seq, t, h in c.execute(
                        "SELECT seq, tokens, header_tokens FROM turns WHERE session_id = ? AND seq BETWEEN ? AND ?"
                        " ORDER BY seq",
                        (session_id, first, last),
                    )
                ]
                _, pieces = chunker.plan(costs, budget, partial(turn_text, c, session_id))
            if len(pieces) < 2:
                if usage is not None:
                    add_usage(c, session_id, usage, now)
                return 0
            c.execute("DELETE FROM chunks WHERE id = ?", (chunk_id,))
            note = f"re-split from a chunk of {tokens} estimated tokens: {cause}"[:2000]
            for piece in pieces:
                c.execute(
                    "INSERT INTO chunks (session_id, first_seq, last_seq, char_start, char_end, part, parts,"
                    " tokens, cause, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (session_id, piece.first_seq, piece.last_seq, piece.char_start, piece.char_end, piece.part,
                     piece.parts, piece.tokens, note, now),
                )
            if first == last:
                self._renumber_parts(c, session_id, first)
            c.execute(
                "UPDATE sessions SET watermark = ? WHERE id = ?", (self._watermark(c, session_id), session_id)
            )
            if usage is not None:
                add_usage(c, session_id, usage, now)
        return len(pieces)

    def _split_one_turn(
        self, c: sqlite3.Connection, session_id: str, seq: int, start: int, end: int | None, budget: int
    ) -> list[chunker.PlannedChunk]:
        text, header = c.execute(
            "SELECT text, header_tokens FROM turns WHERE session_id = ? AND seq = ?", (session_id, seq)
        ).fetchone()
        stop = len(text) if end is None else end
        room = max(budget - header, chunker.MIN_CHUNK_TOKENS // 2)
        bounds = chunker.split_text(text, room, start, stop)
        # part numbers are placeholders: _renumber_parts numbers every part of the turn afterwards
        return [
            chunker.PlannedChunk(seq, seq, header + chunker.estimate_tokens(text[a:b]), a, b, 1, 2)
            for a, b in bounds
        ]

    @staticmethod
    def _renumber_parts(c: sqlite3.Connection, session_id: str, seq: int) -> None:
        """Parts of one turn numbered 1..n in character order (labels only: states are untouched)."""
        ids = [
            r[0] for r in c.execute(
                "SELECT id FROM chunks WHERE session_id = ? AND first_seq = ? AND last_seq = ?"
                " ORDER BY char_start",
                (session_id, seq, seq),
            )
        ]
        for number, part_id in enumerate(ids, start=1):
            c.execute("UPDATE chunks SET part = ?, parts = ? WHERE id = ?", (number, len(ids), part_id))

    def due_summary(self, sessions: str | Sequence[str] | None = None) -> tuple[int, int]:
        """(chunks, estimated tokens) still due in one session, several, or all (None): what a run
        left for the next."""
        clause, args = self._due_clause(respect_backoff=False)
        if isinstance(sessions, str):
            sessions = [sessions]
        if sessions is not None:
            clause += f" AND session_id IN ({','.join('?' * len(sessions))})"
            args.extend(sessions)
        row = self.conn.execute(f"SELECT count(*), coalesce(sum(tokens), 0) FROM chunks WHERE {clause}", args)
        n, tokens = row.fetchone()
        return int(n), int(tokens)

    def renew_leases(self, owner: str, lease_seconds: float = LEASE_SECONDS) -> int:
        """Extend the leases this runner still holds (it is alive, its answers are on the way), so
        that a slow answer is not taken over and sent twice. Returns how many were renewed."""
        with self.transaction() as c:
            return c.execute(
                f"UPDATE chunks SET lease_until = ? WHERE state = {SENT} AND lease_owner = ?",
                (self.clock() + lease_seconds, owner),
            ).rowcount

    def release_chunks(self, owner: str) -> None:
        """Give back chunks leased but not attempted (a budget ran out): they stay pending, unharmed."""
        with self.transaction() as c:
            c.execute(
                f"UPDATE chunks SET state = CASE WHEN attempts > 0 THEN '{ledger.released(1)}'"
                f" ELSE '{ledger.released(0)}' END, lease_owner = NULL, lease_until = NULL"
                f" WHERE state = {SENT} AND lease_owner = ?",
                (owner,),
            )
            self._forget_owner(c, owner)
            self._forget_dead_owners(c)

    @staticmethod
    def _watermark(c: sqlite3.Connection, session_id: str) -> int:
        """The session's watermark, as the ledger derives it from its chunks in turn order."""
        return ledger.watermark(c.execute(
            "SELECT first_seq, last_seq, part, parts, state FROM chunks WHERE session_id = ?"
            " ORDER BY first_seq, char_start",
            (session_id,),
        ))
