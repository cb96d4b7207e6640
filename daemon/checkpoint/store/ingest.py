"""Files and turns: a batch of turns read from a file and the cursor after them, stored together."""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson

from checkpoint import chunker
from checkpoint.model import FileCursor, LineProblem, ScannedTurn, SessionInfo
from checkpoint.repository import workspace_key
from checkpoint.store.chunks import chunk_turns, turn_text
from checkpoint.store.connection import StoreBase
from checkpoint.store.items import folder_of
from checkpoint.store.rows import CursorMoved, FileRow, Ingested

PROBLEMS_PER_FILE = 200  # keep the table bounded when a file is garbage from end to end
OVERSIZED_PROBLEM = "skipped: %(policy oversized_line)"  # a line skipped as too long (pipeline's wording), for LIKE

_INSERT_TURN = (
    "INSERT INTO turns (id, session_id, seq, role, text, files, ts, message_id, source_path, line_no, tokens,"
    " header_tokens, chunked) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING"
)

_INSERT_EDIT = "INSERT OR IGNORE INTO turn_edits (turn_id, n, session_id, path, text) VALUES (?,?,?,?,?)"


def _turn_rows(
    turns: Sequence[ScannedTurn], session_id: str, seq: int, path: str, chunked: int
) -> list[tuple[Any, ...]]:
    """Rows of the turns table, numbered on from `seq`."""
    dumps = orjson.dumps
    # `_value_`, not `.value`: the enum's property costs a Python call per turn (a 100 MB session
    # has 71,000 of them); orjson writes a tuple as the same JSON array as a list.
    return [
        (draft.id, session_id, seq, draft.role._value_, draft.text,
         dumps(draft.files).decode() if draft.files else "[]", draft.timestamp, draft.message_id,
         path, line_no, tokens, header_tokens, chunked)
        for seq, (draft, line_no, tokens, header_tokens) in enumerate(turns, start=seq + 1)
    ]


def _costs(rows: Sequence[tuple[Any, ...]]) -> list[chunker.TurnCost]:
    """Each row's (seq, tokens, header_tokens) as the chunker reads them. Built with tuple.__new__:
    a NamedTuple's own constructor is a Python call per turn, and the plan reads every turn."""
    new, cost = tuple.__new__, chunker.TurnCost
    return [new(cost, (r[2], r[10], r[11])) for r in rows]


_FILE_COLUMNS = (
    "path, dev, inode, size, mtime_ns, offset, line_no, head_hash, head_len,"
    " agent, session_id, subagent, reader_state, missing, longest_skipped"
)


def _file_row(row: Sequence[Any]) -> FileRow:
    return FileRow(
        cursor=FileCursor(*row[:9]),
        agent=row[9],
        session_id=row[10],
        subagent=bool(row[11]),
        state_json=row[12],
        missing=bool(row[13]),
        longest_skipped=row[14],
    )


class IngestMixin(StoreBase):
    """Files, their cursors and problems, and the turns read from them."""

    def get_file(self, path: str) -> FileRow | None:
        row = self.conn.execute(f"SELECT {_FILE_COLUMNS} FROM files WHERE path = ?", (path,)).fetchone()
        return None if row is None else _file_row(row)

    def file_cursors(self, under: Sequence[str] | None = None) -> dict[str, FileRow]:
        """Every known file, or those under these directories, in one query (a rescan looks each one
        up: no query per file; the daemon's scan of one changed directory reads only its rows)."""
        if under is None:
            return {row[0]: _file_row(row) for row in self.conn.execute(f"SELECT {_FILE_COLUMNS} FROM files")}
        found: dict[str, FileRow] = {}
        for directory in dict.fromkeys(under):
            # The paths that start with "<directory>/", as a range of the primary key: "0" follows "/".
            prefix = directory.rstrip(os.sep) + os.sep
            rows = self.conn.execute(f"SELECT {_FILE_COLUMNS} FROM files WHERE path >= ? AND path < ?",
                                     (prefix, prefix[:-1] + chr(ord(os.sep) + 1)))
            found.update((row[0], _file_row(row)) for row in rows)
        return found

    def ingest(
        self,
        cursor: FileCursor,
        agent: str,
        session_id: str,
        subagent: bool,
        reader_state: dict[str, Any],
        turns: Sequence[ScannedTurn],
        session: SessionInfo | None,
        dropped: Counter[str],
        drop_records: Counter[str],
        problems: Sequence[LineProblem],
        chunk_tokens: int | None = None,
        since: FileCursor | None = None,
        restart: bool = False,
        longest_skipped: int = 0,
    ) -> Ingested:
        """Store a batch of turns and the file cursor that
        follows them, in one transaction: a crash leaves both or neither. A turn whose id is stored
        already (a re-read, a copy) is skipped and takes no seq.

        With `chunk_tokens`, the new turns are put into chunks in the same transaction, exactly as
        form_chunks would put them (same plan, same open tail): each row is written once, already
        chunked, instead of being rewritten later to mark it. Returns turns added and chunks created.

        `since` is the cursor the batch was read from (a blank one for a file never stored): when the
        stored cursor is another by now, another process read the same lines meanwhile and stored
        them; nothing is stored (turns, drop counts and problems would be counted twice) and
        CursorMoved is raised, for the caller to read on from where that process stopped.

        `restart`: the first batch of a file read again from the start (replaced, rewritten, cut
        short). Its turns are deduplicated by id; its drops replace the file's earlier share, and its
        problems of lines skipped as too long the earlier ones (the re-read says those it skips again).
        `longest_skipped`: the longest line this batch skipped as too long (FileRow.longest_skipped)."""
        now = self.clock()
        with self.transaction() as c:
            if since is not None:
                stored = c.execute(
                    "SELECT dev, inode, offset, line_no FROM files WHERE path = ?", (cursor.path,)
                ).fetchone()
                if tuple(stored or (0, 0, 0, 0)) != (since.dev, since.inode, since.offset, since.line_no):
                    raise CursorMoved(f"{cursor.path}: read on by another process meanwhile")
            shares = self._drop_shares(c, cursor.path, restart)
            if restart:
                c.execute("DELETE FROM problems WHERE path = ? AND message LIKE ?", (cursor.path, OVERSIZED_PROBLEM))
            if c.execute("SELECT 1 FROM forgotten WHERE session_id = ?", (session_id,)).fetchone():
                # Forgotten on request: only the file's cursor moves on, so it is not read again.
                self._upsert_file(c, cursor, agent, session_id, subagent, reader_state, shares,
                                  longest_skipped, restart)
                return Ingested(0, 0)
            c.execute(
                "INSERT INTO sessions (id, agent, updated_at) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING",
                (session_id, agent, now),
            )
            if session is not None:
                if session.cwd:
                    c.execute("UPDATE sessions SET cwd = coalesce(cwd, ?) WHERE id = ?", (session.cwd, session_id))
                    # set with the first cwd (kept above), so it is that cwd's workspace
                    c.execute("UPDATE sessions SET workspace = coalesce(workspace, ?) WHERE id = ?",
                              (workspace_key(folder_of(session.cwd) or session.cwd), session_id))
                folders = sorted({f for f in map(folder_of, (session.cwd, *session.cwds)) if f})
                c.executemany("INSERT OR IGNORE INTO session_cwds (session_id, cwd, workspace) VALUES (?, ?, ?)",
                              [(session_id, f, workspace_key(f)) for f in folders])
                if session.title and not subagent:
                    c.execute("UPDATE sessions SET title = ? WHERE id = ?", (session.title, session_id))
            seq = c.execute("SELECT turns FROM sessions WHERE id = ?", (session_id,)).fetchone()[0]
            chunked = int(chunk_tokens is not None)
            # Optimistic: number every turn and insert them all at once. If an id was stored already
            # (a re-read, a copy) or repeats in the batch, fewer rows went in than were numbered:
            # undo, and number only the new ones, so that seqs stay gapless.
            rows = _turn_rows(turns, session_id, seq, cursor.path, chunked)
            c.execute("SAVEPOINT new_turns")
            before = c.total_changes
            c.executemany(_INSERT_TURN, rows)
            added = turns
            if c.total_changes - before != len(rows):
                c.execute("ROLLBACK TO new_turns")
                added = self._unseen(c, turns)
                rows = _turn_rows(added, session_id, seq, cursor.path, chunked)
                c.executemany(_INSERT_TURN, rows)
            c.execute("RELEASE new_turns")
            # what the turns' tool calls wrote to files (few turns have any)
            edits = [(turn[0].id, n, session_id, edit.path, edit.text)
                     for turn in added if turn[0].edits for n, edit in enumerate(turn[0].edits)]
            if edits:
                c.executemany(_INSERT_EDIT, edits)
            redacted: Counter[str] = Counter()
            for turn in added:
                if turn[0].redacted:
                    redacted.update(turn[0].redacted)
            c.executemany(
                "INSERT INTO redactions (session_id, kind, count) VALUES (?, ?, ?)"
                " ON CONFLICT(session_id, kind) DO UPDATE SET count = count + excluded.count",
                [(session_id, kind, n) for kind, n in redacted.items()],
            )
            seq += len(rows)
            # The session's span: the earliest and latest stamps, whatever order the records are in
            # and however the file was cut into batches (a cold scan and a daemon's reads agree).
            stamps = [r[6] for r in rows if r[6]]
            first_ts, last_ts = (min(stamps), max(stamps)) if stamps else (None, None)
            chunks = 0
            if chunk_tokens is not None and rows:
                # turns of the session stored earlier without chunks come first (usually none)
                older = [chunker.TurnCost(*r) for r in c.execute(
                    "SELECT seq, tokens, header_tokens FROM turns WHERE session_id = ? AND chunked = 0 ORDER BY seq",
                    (session_id,),
                )]
                chunks = chunk_turns(c, session_id, older + _costs(rows), chunk_tokens, now)
                if older:
                    c.execute("UPDATE turns SET chunked = 1 WHERE session_id = ? AND chunked = 0", (session_id,))
            c.execute(
                "UPDATE sessions SET turns = ?, updated_at = ?,"
                " first_ts = CASE WHEN first_ts IS NULL OR ? < first_ts THEN ? ELSE first_ts END,"
                " last_ts = CASE WHEN ? > coalesce(last_ts, '') THEN ? ELSE last_ts END WHERE id = ?",
                (seq, now, first_ts, first_ts, last_ts or "", last_ts, session_id),
            )
            for policy in (dropped + drop_records):
                records, chars = drop_records.get(policy, 0), dropped.get(policy, 0)
                c.execute(
                    "INSERT INTO drops (session_id, policy, records, chars) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT(session_id, policy) DO UPDATE SET records = records + excluded.records,"
                    " chars = chars + excluded.chars",
                    (session_id, policy, records, chars),
                )
                share = shares.setdefault(policy, [0, 0])
                share[0] += records
                share[1] += chars
            self._record_problems(c, cursor.path, session_id, problems, now)
            self._upsert_file(c, cursor, agent, session_id, subagent, reader_state, shares, longest_skipped, restart)
        return Ingested(len(rows), chunks, redacted)

    @staticmethod
    def _drop_shares(c: sqlite3.Connection, path: str, restart: bool) -> dict[str, list[int]]:
        """The file's share of its session's drop counts; on a restart, taken back from the session
        first (the re-read counts them again) and empty."""
        row = c.execute("SELECT session_id, drops FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            return {}
        shares: dict[str, list[int]] = orjson.loads(row[1])
        if not restart:
            return shares
        for policy, (records, chars) in shares.items():
            c.execute(
                "UPDATE drops SET records = max(0, records - ?), chars = max(0, chars - ?)"
                " WHERE session_id = ? AND policy = ?",
                (records, chars, row[0], policy),
            )
        c.execute("DELETE FROM drops WHERE session_id = ? AND records = 0 AND chars = 0", (row[0],))
        return {}

    @staticmethod
    def _upsert_file(
        c: sqlite3.Connection, cursor: FileCursor, agent: str, session_id: str, subagent: bool,
        reader_state: dict[str, Any], drops: dict[str, list[int]], longest_skipped: int = 0, restart: bool = False,
    ) -> None:
        c.execute(
            "INSERT INTO files (path, agent, session_id, subagent, dev, inode, size, mtime_ns, offset,"
            " line_no, head_hash, head_len, reader_state, drops, longest_skipped, missing, last_error)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,NULL) ON CONFLICT(path) DO UPDATE SET"
            " longest_skipped=CASE WHEN ? THEN excluded.longest_skipped"
            " ELSE max(files.longest_skipped, excluded.longest_skipped) END,"
            " agent=excluded.agent, session_id=excluded.session_id, subagent=excluded.subagent,"
            " dev=excluded.dev, inode=excluded.inode, size=excluded.size, mtime_ns=excluded.mtime_ns,"
            " offset=excluded.offset, line_no=excluded.line_no, head_hash=excluded.head_hash,"
            " head_len=excluded.head_len, reader_state=excluded.reader_state, drops=excluded.drops, missing=0,"
            " last_error=NULL",
            (
                cursor.path, agent, session_id, int(subagent), cursor.dev, cursor.inode, cursor.size,
                cursor.mtime_ns, cursor.offset, cursor.line_no, cursor.head_hash, cursor.head_len,
                orjson.dumps(reader_state).decode(), orjson.dumps(drops).decode(), longest_skipped, int(restart),
            ),
        )

    @staticmethod
    def _unseen(
        c: sqlite3.Connection, turns: Sequence[ScannedTurn]
    ) -> list[ScannedTurn]:
        """The turns whose id is not stored yet, each id once (its first occurrence), in order."""
        ids = [t.draft.id for t in turns]
        stored: set[str] = set()
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            stored.update(r[0] for r in c.execute(
                f"SELECT id FROM turns WHERE id IN ({','.join('?' * len(part))})", part
            ))
        fresh = []
        for turn in turns:
            if turn.draft.id not in stored:
                stored.add(turn.draft.id)
                fresh.append(turn)
        return fresh

    def _record_problems(
        self, c: sqlite3.Connection, path: str, session_id: str | None,
        problems: Sequence[LineProblem], now: float,
    ) -> None:
        if not problems:
            return
        have = c.execute("SELECT count(*) FROM problems WHERE path = ?", (path,)).fetchone()[0]
        for line_no, message in problems[: max(0, PROBLEMS_PER_FILE - have)]:
            c.execute(
                "INSERT INTO problems (path, line_no, message, session_id, seen_at) VALUES (?,?,?,?,?)"
                " ON CONFLICT DO NOTHING",
                (path, line_no, message, session_id, now),
            )

    def file_problem(self, path: str, message: str, missing: bool = False, line_no: int = 0) -> None:
        """A whole-file problem (unreadable, vanished), said at `line_no` (0: the file as a whole).
        Turns already read stay."""
        with self.transaction() as c:
            c.execute(
                "UPDATE files SET last_error = ?, missing = ? WHERE path = ?", (message, int(missing), path)
            )
            session = c.execute("SELECT session_id FROM files WHERE path = ?", (path,)).fetchone()
            problem = LineProblem(line_no, message)
            self._record_problems(c, path, session[0] if session else None, [problem], self.clock())

    def turn_text(self, session_id: str, seq: int) -> str:
        return turn_text(self.conn, session_id, seq)

