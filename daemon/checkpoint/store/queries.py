"""Reads: what status, the daemon and the CLI show. Nothing here writes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

import orjson

from checkpoint.ledger import TURN_BY_RANK, TURN_RANK, TurnState
from checkpoint.model import (
    ChunkState,
    Citation,
    FileEdit,
    ItemKind,
    ItemRecord,
    ItemSource,
    ItemState,
    Role,
    SessionCounts,
    StoredProblem,
    Totals,
    Usage,
)
from checkpoint.store.leases import LeasesMixin
from checkpoint.store.rows import ItemSummary, WindowTurn
from checkpoint.store.scope import ScopeMixin

# The ledger's rank of each chunk state for the turns it holds, as SQL: a turn takes its chunks' worst.
_TURN_RANK = "CASE state " + " ".join(f"WHEN '{s}' THEN {r}" for s, r in TURN_RANK.items()) + " END"


# An item's columns as `_item` reads them, in this order (`i` the item, `s` its session); every read of
# whole items selects these first.
ITEM_COLUMNS = (
    "i.id, i.session_id, i.kind, i.statement, i.rationale, i.confidence, i.turn_ids, i.files, i.state,"
    " i.extractor, i.created_at, s.title, s.cwd, i.cited, s.agent,"
    # the newest item that replaced it, and the items it replaced
    " (SELECT new_id FROM supersessions WHERE old_id = i.id ORDER BY created_at DESC, new_id LIMIT 1),"
    " (SELECT json_group_array(old_id) FROM supersessions WHERE new_id = i.id),"
    " i.origin, i.record, i.held, i.accepted_here, i.record_by, i.lasting, i.file_sources, i.answered_by,"
    " i.answered_turn"
)
_AFTER_ITEM = 26  # the number of ITEM_COLUMNS


def _item(row: tuple[Any, ...], sources: list[ItemSource]) -> ItemRecord:
    return ItemRecord(
        id=row[0], session_id=row[1], kind=ItemKind(row[2]), statement=row[3], rationale=row[4],
        confidence=row[5], turn_ids=tuple(orjson.loads(row[6])), files=tuple(orjson.loads(row[7])),
        state=ItemState(row[8]), extractor=row[9], created_at=row[10], session_title=row[11], cwd=row[12],
        sources=tuple(sources), cited=Citation(row[13]), agent=row[14], superseded_by=row[15],
        supersedes=tuple(orjson.loads(row[16])), origin=row[17], record=row[18], held=bool(row[19]),
        accepted_here=bool(row[20]), record_by=row[21],
        lasting=bool(row[22]), file_sources=orjson.loads(row[23]), answered_by=row[24], answered_turn=row[25],
    )


# Per turn, the worst state of the chunks holding it (ledger.turn_state, done in SQL: a status of a
# large history must not read every chunk), as rows (session_id, r: the rank, n: turns); a turn in one
# whole chunk counts through its chunk's range, a turn cut into parts once, at its parts' worst.
# tests/properties/test_ledger.py checks that session_counts agrees with the ledger.
_TURNS_BY_RANK = (
    f"SELECT session_id, {_TURN_RANK} AS r, last_seq - first_seq + 1 AS n FROM chunks WHERE parts = 1"
    " UNION ALL"
    f" SELECT session_id, max({_TURN_RANK}) AS r, 1 AS n FROM chunks WHERE parts > 1 GROUP BY session_id, first_seq"
)


class QueriesMixin(ScopeMixin, LeasesMixin):
    def watermark(self, session_id: str) -> int:
        row = self.conn.execute("SELECT watermark FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return int(row[0]) if row else 0

    def totals(self) -> tuple[int, Totals]:
        """Sessions, and their turns captured / pending / failed summed (Totals.of
        session_counts()), in two aggregate queries: what `checkpoint scan` prints after it, without
        building every session's counts (their drops, usage, problems, holds...)."""
        sessions, turns = self.conn.execute("SELECT count(*), coalesce(sum(turns), 0) FROM sessions").fetchone()
        by_state: Counter[TurnState] = Counter()
        # Chunks of no stored session are left out, as session_counts leaves them out.
        for worst, n in self.conn.execute(
            f"SELECT r, sum(n) FROM ({_TURNS_BY_RANK}) WHERE session_id IN (SELECT id FROM sessions) GROUP BY r"
        ):
            by_state[TURN_BY_RANK[worst]] += n
        captured, failed = by_state[TurnState.CAPTURED], by_state[TurnState.FAILED]
        return sessions, Totals(turns=turns, captured=captured, pending=turns - captured - failed, failed=failed)

    def session_counts(self, session_ids: Sequence[str] | None = None) -> list[SessionCounts]:
        """Turns captured / pending / failed per session. A turn is captured only when every chunk
        holding it is captured; failed when one of them failed; pending otherwise. Given ids, every
        table is read for those sessions only (by index: the daemon re-reads the few that changed)."""
        where, only, args = "", "", []
        if session_ids is not None:
            marks = ",".join("?" * len(session_ids))
            where, only, args = f" WHERE id IN ({marks})", f" AND session_id IN ({marks})", list(session_ids)
        sessions = {
            r[0]: SessionCounts(id=r[0], agent=r[1], title=r[2], cwd=r[3], turns=r[4], watermark=r[5], last_ts=r[6])
            for r in self.conn.execute(
                "SELECT id, agent, title, cwd, turns, watermark, last_ts FROM sessions" + where
                + " ORDER BY coalesce(last_ts, '') DESC, id",
                args,
            )
        }
        if not sessions:
            return []
        by_rank = (
            f"SELECT session_id, {_TURN_RANK} AS r, last_seq - first_seq + 1 AS n FROM chunks WHERE parts = 1{only}"
            " UNION ALL"
            f" SELECT session_id, max({_TURN_RANK}) AS r, 1 AS n FROM chunks WHERE parts > 1{only}"
            " GROUP BY session_id, first_seq"
        )
        for session_id, worst, n in self.conn.execute(
            f"SELECT session_id, r, sum(n) FROM ({by_rank}) GROUP BY session_id, r", [*args, *args]
        ):
            s = sessions.get(session_id)
            if s is None:
                continue
            state = TURN_BY_RANK[worst]
            if state is TurnState.CAPTURED:
                s.captured += n
            elif state is TurnState.FAILED:
                s.failed += n
        for s in sessions.values():
            s.pending = s.turns - s.captured - s.failed
        for session_id, cause in self.conn.execute(
            f"SELECT session_id, cause FROM chunks WHERE state = '{ChunkState.FAILED}' AND cause IS NOT NULL{only}"
            " GROUP BY session_id, cause", args
        ):
            if session_id in sessions:
                sessions[session_id].causes.append(cause)
        for session_id, policy, records, chars in self.conn.execute(
            f"SELECT session_id, policy, records, chars FROM drops WHERE 1{only}", args
        ):
            if session_id in sessions:
                sessions[session_id].dropped[policy] = {"records": records, "chars": chars}
        for row in self.conn.execute(
            "SELECT session_id, requests, input_tokens, output_tokens, cache_creation_input_tokens,"
            f" cache_read_input_tokens, cost_usd FROM session_usage WHERE 1{only}", args
        ):
            if row[0] in sessions:
                sessions[row[0]].usage = Usage(
                    requests=row[1], input_tokens=row[2], output_tokens=row[3], cache_creation_input_tokens=row[4],
                    cache_read_input_tokens=row[5], cost_usd=row[6],
                )
        for session_id, n in self.conn.execute(
            f"SELECT session_id, count(*) FROM problems WHERE session_id IS NOT NULL{only} GROUP BY session_id", args
        ):
            if session_id in sessions:
                sessions[session_id].problems = n
        for session_id, kind, n in self.conn.execute(
            f"SELECT session_id, kind, count FROM redactions WHERE 1{only} ORDER BY kind", args
        ):
            if session_id in sessions:
                sessions[session_id].redacted[kind] = n
        for hold in self.holds(session_ids):
            if hold.session_id in sessions:
                sessions[hold.session_id].held.append(hold)
        for session_id, mtime_ns in self.conn.execute(
            "SELECT session_id, max(mtime_ns) FROM files WHERE missing = 0"
            f" AND session_id IS NOT NULL{only} GROUP BY session_id", args
        ):
            if session_id in sessions:
                sessions[session_id].newest_file_mtime = mtime_ns / 1e9
        return list(sessions.values())

    def transcript_files(self, session_id: str) -> list[str] | None:
        """The session's transcript files still on disk, the latest written first; None: no such session."""
        if self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            return None
        return [r[0] for r in self.conn.execute(
            "SELECT path FROM files WHERE session_id = ? AND missing = 0 ORDER BY mtime_ns DESC, path", (session_id,))]

    def session_changes(self, after: int) -> tuple[int, list[str]]:
        """The change feed (migration "session changes"): the sessions whose counts may have changed
        since number `after`, and the newest number (read first: counts read after it are as new)."""
        last = int(self.conn.execute("SELECT coalesce(max(seq), 0) FROM session_changes").fetchone()[0])
        if last <= after:
            return last, []
        return last, [str(r[0]) for r in self.conn.execute(
            "SELECT session_id FROM session_changes WHERE seq > ? AND seq <= ?", (after, last))]

    def sessions_older_than(self, mtime: float, agents: Collection[str]) -> list[str]:
        """Sessions whose newest transcript of these agents still on disk was last written before
        `mtime` (the caller names the agents: those whose CLI deletes old transcripts)."""
        if not agents:
            return []
        return [
            r[0] for r in self.conn.execute(
                f"SELECT session_id FROM files WHERE agent IN ({','.join('?' * len(agents))}) AND missing = 0"
                " AND session_id IS NOT NULL GROUP BY session_id HAVING max(mtime_ns) < ?",
                (*agents, int(mtime * 1e9)),
            )
        ]

    def problems(self, limit: int = 50) -> list[StoredProblem]:
        """The newest problems scans recorded."""
        return [
            StoredProblem(path=p, line=line, message=m, session_id=s)
            for p, line, m, s in self.conn.execute(
                "SELECT path, line_no, message, session_id FROM problems ORDER BY seen_at DESC, path, line_no"
                " LIMIT ?",
                (limit,),
            )
        ]

    def items(
        self, session_id: str | None = None, kind: str | None = None, include_dismissed: bool = False,
        created_after: float | None = None, ids: Sequence[str] | None = None, include_superseded: bool = True,
        workspaces: Sequence[str] | None = None, state: ItemState | str | None = None,
    ) -> list[ItemRecord]:
        """Items, oldest first. `workspaces`: only those of sessions that belong to these folders
        (scope.py's rule); `state`: only those in this state (dismissed ones too, when it says so)."""
        clauses: list[str] = []
        args: list[Any] = []
        if workspaces is not None:
            clause, more = self._scope_clause(workspaces)
            clauses.append(clause)
            args.extend(more)
        if state is not None:
            clauses.append("i.state = ?")
            args.append(str(state))
        if ids is not None:
            if not ids:
                return []
            clauses.append(f"i.id IN ({','.join('?' * len(ids))})")
            args.extend(ids)
        if created_after is not None:
            clauses.append("i.created_at >= ?")
            args.append(created_after)
        if session_id:
            clauses.append("i.session_id = ?")
            args.append(session_id)
        if kind:
            clauses.append("i.kind = ?")
            args.append(kind)
        if not include_dismissed and state is None:
            clauses.append("i.state != 'dismissed'")
        if not include_superseded:
            clauses.append("NOT EXISTS (SELECT 1 FROM supersessions WHERE old_id = i.id)")
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        # One query: each item's row once per turn it cites (json_each over its turn ids), in the
        # order of the items, then of the turns in the session; a cited turn no longer stored is left out.
        out: list[ItemRecord] = []
        current: tuple[Any, ...] | None = None
        sources: list[ItemSource] = []
        for row in self.conn.execute(
            f"SELECT {ITEM_COLUMNS}, t.id, t.source_path, t.line_no, t.ts, t.role"
            " FROM items i JOIN sessions s ON s.id = i.session_id"
            " LEFT JOIN json_each(i.turn_ids) j LEFT JOIN turns t ON t.id = j.value"
            + where + " ORDER BY i.created_at, i.id, t.seq",
            args,
        ):
            if current is None or current[0] != row[0]:
                if current is not None:
                    out.append(_item(current, sources))
                current, sources = row, []
            turn_id, path, line, ts, role = row[_AFTER_ITEM:]
            if turn_id is not None:
                sources.append(ItemSource(turn_id=turn_id, path=path, line=line, timestamp=ts, role=role))
        if current is not None:
            out.append(_item(current, sources))
        return out

    def item_counts(self) -> dict[str, Counter[str]]:
        """Items not dismissed, per session and kind."""
        out: dict[str, Counter[str]] = {}
        for session_id, kind, n in self.conn.execute(
            "SELECT session_id, kind, count(*) FROM items WHERE state != 'dismissed' GROUP BY session_id, kind"
        ):
            out.setdefault(session_id, Counter())[kind] = n
        return out

    def item_kinds_since(self, created_after: float) -> Counter[str]:
        """Items created since a moment (a run's start), by kind: counted, not read."""
        return Counter(dict(self.conn.execute(
            "SELECT kind, count(*) FROM items WHERE created_at >= ? AND state != 'dismissed' GROUP BY kind",
            (created_after,),
        )))

    def chunk_states(self, session_id: str | None = None) -> Counter[str]:
        where, args = (" WHERE session_id = ?", (session_id,)) if session_id else ("", ())
        return Counter(dict(self.conn.execute(f"SELECT state, count(*) FROM chunks{where} GROUP BY state", args)))

    # -- reads for the daemon -------------------------------------------------------------------

    def session_activity(self) -> dict[str, float]:
        """When each session's transcript files last changed (epoch seconds): how long it has been idle."""
        return {
            sid: mtime_ns / 1e9
            for sid, mtime_ns in self.conn.execute(
                "SELECT session_id, max(mtime_ns) FROM files WHERE session_id IS NOT NULL GROUP BY session_id"
            )
        }

    def turn_window(self, session_id: str, turn_ids: Sequence[str], limit: int = 200) -> list[WindowTurn]:
        """The exchange around the given turns, in order: from the user prompt at or before the first
        of them up to the next user prompt after the last (the tool calls that carried out what they
        say), at most `limit` turns either side."""
        window = self._window(session_id, turn_ids, limit)
        if window is None:
            return []
        return [
            WindowTurn(id=tid, seq=seq, role=Role(role), text=text, files=tuple(orjson.loads(files)))
            for tid, seq, role, text, files in self.conn.execute(
                "SELECT id, seq, role, text, files FROM turns WHERE session_id = ? AND seq BETWEEN ? AND ?"
                " ORDER BY seq",
                (session_id, *window),
            )
        ]

    def edits_in_window(self, session_id: str, turn_ids: Sequence[str], limit: int = 200) -> list[FileEdit]:
        """What the turns of `turn_window` wrote to files, in order."""
        window = self._window(session_id, turn_ids, limit)
        if window is None:
            return []
        return [
            FileEdit(path, text)
            for path, text in self.conn.execute(
                "SELECT e.path, e.text FROM turns t JOIN turn_edits e ON e.turn_id = t.id"
                " WHERE t.session_id = ? AND t.seq BETWEEN ? AND ? ORDER BY t.seq, e.n",
                (session_id, *window),
            )
        ]

    def _window(self, session_id: str, turn_ids: Sequence[str], limit: int) -> tuple[int, int] | None:
        """The first and last seq of `turn_window`; None: none of the turns is stored."""
        if not turn_ids:
            return None
        first, last = self.conn.execute(
            f"SELECT min(seq), max(seq) FROM turns WHERE session_id = ? AND id IN ({','.join('?' * len(turn_ids))})",
            [session_id, *turn_ids],
        ).fetchone()
        if first is None:
            return None
        roles = self.conn.execute(
            "SELECT seq, role FROM turns WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (session_id, first - limit, last + limit),
        ).fetchall()
        start = max((seq for seq, role in roles if seq <= first and role == Role.USER), default=first - limit)
        end = min((seq - 1 for seq, role in roles if seq > last and role == Role.USER), default=last + limit)
        return start, end

    def item_summary(self, session_ids: Sequence[str] | None = None) -> ItemSummary:
        """Item counts by kind (dismissed left out) and by state, and when an item last changed."""
        where, args = "", list(session_ids or ())
        if session_ids is not None:
            where = f" WHERE session_id IN ({','.join('?' * len(session_ids))})"
        by_kind: dict[str, int] = {}
        by_state: dict[str, int] = {}
        for kind, state, n in self.conn.execute(
            "SELECT kind, state, count(*) FROM items" + where + " GROUP BY kind, state", args
        ):
            by_state[state] = by_state.get(state, 0) + n
            if state != ItemState.DISMISSED:
                by_kind[kind] = by_kind.get(kind, 0) + n
        changed = self.conn.execute("SELECT max(updated_at) FROM items" + where, args).fetchone()[0]
        held = self.conn.execute(
            "SELECT count(*) FROM items" + (where + " AND" if where else " WHERE") + " held = 1 AND state = 'new'", args
        ).fetchone()[0]
        return ItemSummary(by_kind=by_kind, by_state=by_state, changed_at=changed, held=held)

