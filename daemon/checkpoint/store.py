"""The SQLite store: schema, migrations, and every write. No other module writes SQL.

Markers move only inside `commit_extraction`: a chunk's items, its state and the session's
watermark change in one transaction, and the watermark is recomputed there from chunk states
(the end of the contiguous captured prefix), never from what was sent.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from checkpoint import chunker
from checkpoint.model import (
    ChunkInput,
    ChunkState,
    ItemKind,
    ItemState,
    KnownItem,
    Role,
    SessionInfo,
    TurnSlice,
    Usage,
)
from checkpoint.sources.base import TurnDraft
from checkpoint.sources.tailer import FileCursor

if TYPE_CHECKING:
    from checkpoint.answer import Extraction

MIGRATIONS: list[str] = [
    # 1: the initial schema
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        title TEXT,
        cwd TEXT,
        turns INTEGER NOT NULL DEFAULT 0,       -- highest seq given out
        watermark INTEGER NOT NULL DEFAULT 0,   -- every turn with seq <= watermark is captured
        first_ts TEXT,
        last_ts TEXT,
        updated_at REAL
    );
    CREATE TABLE files (
        path TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        session_id TEXT,
        subagent INTEGER NOT NULL DEFAULT 0,
        dev INTEGER NOT NULL DEFAULT 0,
        inode INTEGER NOT NULL DEFAULT 0,
        size INTEGER NOT NULL DEFAULT 0,
        mtime_ns INTEGER NOT NULL DEFAULT 0,
        offset INTEGER NOT NULL DEFAULT 0,
        line_no INTEGER NOT NULL DEFAULT 0,
        head_hash TEXT NOT NULL DEFAULT '',
        head_len INTEGER NOT NULL DEFAULT 0,
        reader_state TEXT NOT NULL DEFAULT '{}',
        missing INTEGER NOT NULL DEFAULT 0,
        last_error TEXT
    );
    CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        files TEXT NOT NULL DEFAULT '[]',
        ts TEXT,
        message_id TEXT,
        source_path TEXT NOT NULL,
        line_no INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        header_tokens INTEGER NOT NULL,
        chunked INTEGER NOT NULL DEFAULT 0,
        UNIQUE (session_id, seq)
    );
    CREATE INDEX turns_unchunked ON turns (session_id, seq) WHERE chunked = 0;
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        first_seq INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        char_start INTEGER NOT NULL DEFAULT 0,
        char_end INTEGER,                        -- NULL: to the end of the turn
        part INTEGER NOT NULL DEFAULT 1,
        parts INTEGER NOT NULL DEFAULT 1,
        tokens INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        cause TEXT,
        lease_owner TEXT,
        lease_until REAL,
        next_try REAL NOT NULL DEFAULT 0,
        updated_at REAL,
        UNIQUE (session_id, first_seq, char_start)
    );
    CREATE INDEX chunks_state ON chunks (state, next_try);
    CREATE TABLE items (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        fingerprint TEXT NOT NULL,
        kind TEXT NOT NULL,
        statement TEXT NOT NULL,
        rationale TEXT,
        confidence REAL NOT NULL,
        turn_ids TEXT NOT NULL,
        files TEXT NOT NULL DEFAULT '[]',
        state TEXT NOT NULL DEFAULT 'new',
        extractor TEXT NOT NULL,
        first_chunk INTEGER NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        UNIQUE (session_id, fingerprint)
    );
    CREATE TABLE drops (
        session_id TEXT NOT NULL,
        policy TEXT NOT NULL,
        records INTEGER NOT NULL DEFAULT 0,
        chars INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, policy)
    );
    CREATE TABLE problems (
        path TEXT NOT NULL,
        line_no INTEGER NOT NULL,
        message TEXT NOT NULL,
        session_id TEXT,
        seen_at REAL NOT NULL,
        PRIMARY KEY (path, line_no, message)
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        started_at REAL NOT NULL,
        finished_at REAL,
        extractor TEXT NOT NULL,
        chunks_tried INTEGER NOT NULL DEFAULT 0,
        chunks_captured INTEGER NOT NULL DEFAULT 0,
        chunks_failed INTEGER NOT NULL DEFAULT 0,
        items_added INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_input_tokens INTEGER NOT NULL DEFAULT 0,
        requests INTEGER NOT NULL DEFAULT 0,
        note TEXT
    );
    """,
    # 2: what extraction costs, per session and per run; restatements merged into an existing item
    """
    CREATE TABLE session_usage (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        requests INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_input_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0,
        updated_at REAL
    );
    ALTER TABLE runs ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN chunks_resplit INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE item_aliases (
        session_id TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        item_id TEXT NOT NULL REFERENCES items(id),
        PRIMARY KEY (session_id, fingerprint)
    );
    """,
    # 3: secrets redacted before storing, per session and kind; sessions forgotten on request (their
    # transcripts are not read into the database again until `checkpoint forget --undo`)
    """
    CREATE TABLE redactions (
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, kind)
    );
    CREATE TABLE forgotten (
        session_id TEXT PRIMARY KEY,
        forgotten_at REAL NOT NULL,
        turns INTEGER NOT NULL DEFAULT 0
    );
    """,
    # 4: chunks a run tried but lost to another runner before it could record their answers
    """
    ALTER TABLE runs ADD COLUMN chunks_lost INTEGER NOT NULL DEFAULT 0;
    """,
    # 5: each file's share of its session's drop counts ({policy: [records, chars]}), taken back
    # when the file is read again from the start, so that a re-read does not count its drops twice
    """
    ALTER TABLE files ADD COLUMN drops TEXT NOT NULL DEFAULT '{}';
    """,
]

LEASE_SECONDS = 300.0
PROBLEMS_PER_FILE = 200  # keep the table bounded when a file is garbage from end to end


class CursorMoved(RuntimeError):
    """A file's stored cursor moved since a batch was read from it: another process stored those
    lines already. The batch is dropped whole (see Store.ingest)."""


class LeaseLost(RuntimeError):
    """The chunk is no longer leased to this runner (expired and taken by another); its answer is
    discarded so that nothing is committed twice."""


@dataclass(frozen=True)
class FileRow:
    cursor: FileCursor
    agent: str
    session_id: str | None
    subagent: bool
    state_json: str  # the reader's state, decoded only for a file that is read again
    missing: bool

    @property
    def reader_state(self) -> dict[str, Any]:
        state: dict[str, Any] = orjson.loads(self.state_json)
        return state


_INSERT_TURN = (
    "INSERT INTO turns (id, session_id, seq, role, text, files, ts, message_id, source_path, line_no, tokens,"
    " header_tokens, chunked) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING"
)


def _turn_rows(
    turns: Sequence[tuple[TurnDraft, int, int, int]], session_id: str, seq: int, path: str, chunked: int
) -> list[tuple[Any, ...]]:
    """Rows of the turns table, numbered on from `seq`."""
    return [
        (draft.id, session_id, seq, draft.role.value, draft.text,
         orjson.dumps(list(draft.files)).decode() if draft.files else "[]", draft.timestamp, draft.message_id,
         path, line_no, tokens, header_tokens, chunked)
        for seq, (draft, line_no, tokens, header_tokens) in enumerate(turns, start=seq + 1)
    ]


class Ingested(NamedTuple):
    turns: int  # turns added
    chunks: int  # chunks created for them
    redacted: Mapping[str, int] = MappingProxyType({})  # secrets replaced in the turns added, by kind


_FILE_COLUMNS = (
    "path, dev, inode, size, mtime_ns, offset, line_no, head_hash, head_len,"
    " agent, session_id, subagent, reader_state, missing"
)


def _file_row(row: Sequence[Any]) -> FileRow:
    return FileRow(
        cursor=FileCursor(*row[:9]),
        agent=row[9],
        session_id=row[10],
        subagent=bool(row[11]),
        state_json=row[12],
        missing=bool(row[13]),
    )


@dataclass
class SessionCounts:
    id: str
    agent: str
    title: str | None
    cwd: str | None
    turns: int = 0
    captured: int = 0
    pending: int = 0
    failed: int = 0
    watermark: int = 0
    last_ts: str | None = None
    causes: list[str] = field(default_factory=list)
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    problems: int = 0
    usage: Usage = field(default_factory=Usage)
    redacted: dict[str, int] = field(default_factory=dict)  # secrets replaced before storing, by kind
    # Claude Code deletes a transcript once it is cleanupPeriodDays old (by mtime): the newest of the
    # session's Claude transcripts still on disk, and (set by pipeline.flag_at_risk) whether it goes
    # soon while turns are not captured yet.
    newest_file_mtime: float | None = None
    at_risk: bool = False
    deletes_in_days: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agent": self.agent,
            "title": self.title,
            "cwd": self.cwd,
            "turns": self.turns,
            "captured": self.captured,
            "pending": self.pending,
            "failed": self.failed,
            "watermark": self.watermark,
            "last_ts": self.last_ts,
            "causes": self.causes,
            "dropped": self.dropped,
            "problems": self.problems,
            "usage": self.usage.as_dict(),
            "redacted": self.redacted,
            "at_risk": self.at_risk,
            "deletes_in_days": self.deletes_in_days,
        }


def fingerprint(kind: ItemKind, statement: str) -> str:
    """Same kind and same words (case, spacing and punctuation aside) are the same item."""
    norm = re.sub(r"[^\w]+", " ", statement.lower()).strip()
    return hashlib.blake2b(f"{kind}|{norm}".encode(), digest_size=10).hexdigest()


def _private(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        p = Path(str(path) + suffix)
        if p.exists():
            os.chmod(p, 0o600)


def _enable_wal(conn: sqlite3.Connection, wait_seconds: float = 30.0) -> None:
    """Two processes opening the same new database at once: the switch to WAL answers SQLITE_BUSY
    without going through the busy handler, so wait for the other one here instead of failing."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Store:
    """One SQLite database. Safe to open from several processes (WAL, busy timeout, leases)."""

    def __init__(self, path: Path | str, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        old_umask = os.umask(0o077)
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        finally:
            os.umask(old_umask)
        # Takes effect only when the database is created. Rows hold turn text (a few hundred bytes to
        # many KB): 16 KB pages store them with less B-tree overhead than 4 KB ones (a cold scan of a
        # 100 MB session: 10% less CPU, a 10% smaller file).
        conn.execute("PRAGMA page_size=16384")
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # The turn-id index takes random inserts: past a few hundred MB of transcript it outgrows the
        # default 2 MB cache, and every insert reads pages back (a 400 MB cold scan: 8.1 s with the
        # default, 7.5 s with 16 MB, no faster with 48 MB). Allocated as used: small databases pay nothing.
        conn.execute("PRAGMA cache_size=-16384")
        self.conn = conn
        self._migrate()
        _private(self.path)

    def close(self) -> None:
        self.conn.close()

    # -- plumbing ---------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE: take the write lock up front so concurrent writers queue, not deadlock."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _migrate(self) -> None:
        with self.transaction() as c:
            version = c.execute("PRAGMA user_version").fetchone()[0]
            for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in script.split(";"):
                    if statement.strip():
                        c.execute(statement)
                c.execute(f"PRAGMA user_version={number}")

    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    # -- files and turns --------------------------------------------------------------------------

    def get_file(self, path: str) -> FileRow | None:
        row = self.conn.execute(f"SELECT {_FILE_COLUMNS} FROM files WHERE path = ?", (path,)).fetchone()
        return None if row is None else _file_row(row)

    def file_cursors(self) -> dict[str, FileRow]:
        """Every known file, in one query (a rescan looks each one up: no query per file)."""
        return {row[0]: _file_row(row) for row in self.conn.execute(f"SELECT {_FILE_COLUMNS} FROM files")}

    def ingest(
        self,
        cursor: FileCursor,
        agent: str,
        session_id: str,
        subagent: bool,
        reader_state: dict[str, Any],
        turns: Sequence[tuple[TurnDraft, int, int, int]],
        session: SessionInfo | None,
        dropped: Counter[str],
        drop_records: Counter[str],
        problems: Sequence[tuple[int, str]],
        chunk_tokens: int | None = None,
        since: FileCursor | None = None,
        restart: bool = False,
    ) -> Ingested:
        """Store a batch of turns (draft, line_no, tokens, header_tokens) and the file cursor that
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
        short). Its turns are deduplicated by id; its drops replace the file's earlier share."""
        now = self.clock()
        with self.transaction() as c:
            if since is not None:
                stored = c.execute(
                    "SELECT dev, inode, offset, line_no FROM files WHERE path = ?", (cursor.path,)
                ).fetchone()
                if tuple(stored or (0, 0, 0, 0)) != (since.dev, since.inode, since.offset, since.line_no):
                    raise CursorMoved(f"{cursor.path}: read on by another process meanwhile")
            shares = self._drop_shares(c, cursor.path, restart)
            if c.execute("SELECT 1 FROM forgotten WHERE session_id = ?", (session_id,)).fetchone():
                # Forgotten on request: only the file's cursor moves on, so it is not read again.
                self._upsert_file(c, cursor, agent, session_id, subagent, reader_state, shares)
                return Ingested(0, 0)
            c.execute(
                "INSERT INTO sessions (id, agent, updated_at) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING",
                (session_id, agent, now),
            )
            if session is not None:
                if session.cwd:
                    c.execute("UPDATE sessions SET cwd = coalesce(cwd, ?) WHERE id = ?", (session.cwd, session_id))
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
            redacted: Counter[str] = Counter()
            for draft, *_ in added:
                if draft.redacted:
                    redacted.update(draft.redacted)
            c.executemany(
                "INSERT INTO redactions (session_id, kind, count) VALUES (?, ?, ?)"
                " ON CONFLICT(session_id, kind) DO UPDATE SET count = count + excluded.count",
                [(session_id, kind, n) for kind, n in redacted.items()],
            )
            seq += len(rows)
            costs = [chunker.TurnCost(r[2], r[10], r[11]) for r in rows]
            stamps = [r[6] for r in rows if r[6]]
            first_ts = stamps[0] if stamps else None
            last_ts = stamps[-1] if stamps else None
            chunks = 0
            if chunk_tokens is not None and rows:
                # turns of the session stored earlier without chunks come first (usually none)
                older = [chunker.TurnCost(*r) for r in c.execute(
                    "SELECT seq, tokens, header_tokens FROM turns WHERE session_id = ? AND chunked = 0 ORDER BY seq",
                    (session_id,),
                )]
                chunks = self._chunk_turns(c, session_id, older + costs, chunk_tokens, now)
                if older:
                    c.execute("UPDATE turns SET chunked = 1 WHERE session_id = ? AND chunked = 0", (session_id,))
            c.execute(
                "UPDATE sessions SET turns = ?, updated_at = ?, first_ts = coalesce(first_ts, ?),"
                " last_ts = CASE WHEN ? > coalesce(last_ts, '') THEN ? ELSE last_ts END WHERE id = ?",
                (seq, now, first_ts, last_ts or "", last_ts, session_id),
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
            self._upsert_file(c, cursor, agent, session_id, subagent, reader_state, shares)
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
        reader_state: dict[str, Any], drops: dict[str, list[int]],
    ) -> None:
        c.execute(
            "INSERT INTO files (path, agent, session_id, subagent, dev, inode, size, mtime_ns, offset,"
            " line_no, head_hash, head_len, reader_state, drops, missing, last_error)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,NULL) ON CONFLICT(path) DO UPDATE SET"
            " agent=excluded.agent, session_id=excluded.session_id, subagent=excluded.subagent,"
            " dev=excluded.dev, inode=excluded.inode, size=excluded.size, mtime_ns=excluded.mtime_ns,"
            " offset=excluded.offset, line_no=excluded.line_no, head_hash=excluded.head_hash,"
            " head_len=excluded.head_len, reader_state=excluded.reader_state, drops=excluded.drops, missing=0,"
            " last_error=NULL",
            (
                cursor.path, agent, session_id, int(subagent), cursor.dev, cursor.inode, cursor.size,
                cursor.mtime_ns, cursor.offset, cursor.line_no, cursor.head_hash, cursor.head_len,
                orjson.dumps(reader_state).decode(), orjson.dumps(drops).decode(),
            ),
        )

    @staticmethod
    def _unseen(
        c: sqlite3.Connection, turns: Sequence[tuple[TurnDraft, int, int, int]]
    ) -> list[tuple[TurnDraft, int, int, int]]:
        """The turns whose id is not stored yet, each id once (its first occurrence), in order."""
        ids = [t[0].id for t in turns]
        stored: set[str] = set()
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            stored.update(r[0] for r in c.execute(
                f"SELECT id FROM turns WHERE id IN ({','.join('?' * len(part))})", part
            ))
        fresh = []
        for turn in turns:
            if turn[0].id not in stored:
                stored.add(turn[0].id)
                fresh.append(turn)
        return fresh

    def _record_problems(
        self, c: sqlite3.Connection, path: str, session_id: str | None,
        problems: Sequence[tuple[int, str]], now: float,
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
            self._record_problems(c, path, session[0] if session else None, [(line_no, message)], self.clock())

    def turn_text(self, session_id: str, seq: int) -> str:
        row = self.conn.execute(
            "SELECT text FROM turns WHERE session_id = ? AND seq = ?", (session_id, seq)
        ).fetchone()
        return str(row[0]) if row else ""

    # -- chunks -----------------------------------------------------------------------------------

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
                created += self._chunk_turns(c, session_id, turns, budget, self.clock())
                c.execute("UPDATE turns SET chunked = 1 WHERE session_id = ? AND chunked = 0", (session_id,))
        return created

    def _chunk_turns(
        self, c: sqlite3.Connection, session_id: str, turns: Sequence[chunker.TurnCost], budget: int, now: float
    ) -> int:
        """Plan chunks for a session's turns that are in none yet (in seq order, after every chunked
        one): they may join the session's open tail. Inserts the new chunks; returns how many."""
        tail_row = c.execute(
            "SELECT id, first_seq, last_seq, tokens FROM chunks WHERE session_id = ? AND parts = 1"
            " AND state = 'pending' AND attempts = 0 AND last_seq = ("
            "   SELECT max(last_seq) FROM chunks WHERE session_id = ?)",
            (session_id, session_id),
        ).fetchone()
        open_tail = chunker.PlannedChunk(tail_row[1], tail_row[2], tail_row[3]) if tail_row else None
        grown, new = chunker.plan(turns, budget, partial(self.turn_text, session_id), open_tail)
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

    def _due_clause(self, respect_backoff: bool) -> tuple[str, list[Any]]:
        now = self.clock()
        backoff = "next_try <= ?" if respect_backoff else "1"
        return (
            f"((state = 'pending') OR (state = 'failed' AND {backoff}) OR (state = 'sent' AND lease_until < ?))",
            ([now] if respect_backoff else []) + [now],
        )

    def due_count(self, session_id: str | None = None) -> int:
        clause, args = self._due_clause(respect_backoff=False)
        if session_id:
            clause += " AND session_id = ?"
            args.append(session_id)
        return int(self.conn.execute(f"SELECT count(*) FROM chunks WHERE {clause}", args).fetchone()[0])

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
        clause, args = self._due_clause(respect_backoff)
        if session_id:
            clause += " AND session_id = ?"
            args.append(session_id)
        order = "session_id, first_seq, char_start"
        if first and not session_id:
            order = f"session_id NOT IN ({','.join('?' * len(first))}), {order}"
            args += list(first)
        now = self.clock()
        with self.transaction() as c:
            rows = c.execute(
                f"SELECT id FROM chunks WHERE {clause} ORDER BY {order} LIMIT ?",
                [*args, limit + len(exclude)],
            ).fetchall()
            ids = [r[0] for r in rows if r[0] not in exclude][:limit]
            for chunk_id in ids:
                c.execute(
                    "UPDATE chunks SET state = 'sent', lease_owner = ?, lease_until = ?, updated_at = ?"
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
        added = 0
        with self.transaction() as c:
            row = c.execute(
                "SELECT session_id, state, lease_owner FROM chunks WHERE id = ?", (extraction.chunk_id,)
            ).fetchone()
            if row is None or row[1] != ChunkState.SENT or row[2] != owner:
                raise LeaseLost(f"chunk {extraction.chunk_id} is not leased to this run")
            session_id = row[0]
            for draft in extraction.items:
                fp = fingerprint(draft.kind, draft.statement)
                existing = self._same_item(c, session_id, fp, draft.kind, draft.same_as)
                if existing:
                    turn_ids = _union(orjson.loads(existing[1]), draft.turn_ids)
                    files = _union(orjson.loads(existing[2]), draft.files)
                    c.execute(
                        "UPDATE items SET turn_ids = ?, files = ?, rationale = coalesce(rationale, ?),"
                        " confidence = max(confidence, ?), updated_at = ? WHERE id = ?",
                        (orjson.dumps(turn_ids).decode(), orjson.dumps(files).decode(), draft.rationale,
                         draft.confidence, now, existing[0]),
                    )
                    # Worded differently: the wording now leads to the same item, with or without same_as.
                    c.execute(
                        "INSERT INTO item_aliases (session_id, fingerprint, item_id) VALUES (?,?,?)"
                        " ON CONFLICT DO NOTHING",
                        (session_id, fp, existing[0]),
                    )
                    continue
                item_id = hashlib.blake2b(f"{session_id}|{fp}".encode(), digest_size=6).hexdigest()
                c.execute(
                    "INSERT INTO items (id, session_id, fingerprint, kind, statement, rationale, confidence,"
                    " turn_ids, files, extractor, first_chunk, created_at, updated_at)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (item_id, session_id, fp, draft.kind.value, draft.statement, draft.rationale,
                     draft.confidence, orjson.dumps(_union([], draft.turn_ids)).decode(),
                     orjson.dumps(_union([], draft.files)).decode(), extraction.extractor,
                     extraction.chunk_id, now, now),
                )
                added += 1
            c.execute(
                "UPDATE chunks SET state = 'captured', cause = NULL, lease_owner = NULL, lease_until = NULL,"
                " updated_at = ? WHERE id = ?",
                (now, extraction.chunk_id),
            )
            c.execute(
                "UPDATE sessions SET watermark = ? WHERE id = ?", (self._watermark(c, session_id), session_id)
            )
            self._add_usage(c, session_id, extraction.usage, now)
        return added

    @staticmethod
    def _same_item(
        c: sqlite3.Connection, session_id: str, fp: str, kind: ItemKind, same_as: str | None
    ) -> tuple[str, str, str] | None:
        """The item a draft restates: the one it names (same session and kind), else the one with its
        fingerprint or a wording already merged into it. (id, turn_ids, files) or None."""
        if same_as:
            row = c.execute(
                "SELECT id, turn_ids, files FROM items WHERE id = ? AND session_id = ? AND kind = ?",
                (same_as, session_id, kind.value),
            ).fetchone()
            if row:
                return row  # type: ignore[no-any-return]
        row = c.execute(
            "SELECT id, turn_ids, files FROM items WHERE session_id = ? AND fingerprint = ?", (session_id, fp)
        ).fetchone()
        if row is None:
            row = c.execute(
                "SELECT i.id, i.turn_ids, i.files FROM item_aliases a JOIN items i ON i.id = a.item_id"
                " WHERE a.session_id = ? AND a.fingerprint = ?",
                (session_id, fp),
            ).fetchone()
        return row  # type: ignore[no-any-return]

    @staticmethod
    def _add_usage(c: sqlite3.Connection, session_id: str, usage: Usage, now: float) -> None:
        if not usage.requests and not usage.tokens:
            return
        c.execute(
            "INSERT INTO session_usage (session_id, requests, input_tokens, output_tokens,"
            " cache_creation_input_tokens, cache_read_input_tokens, cost_usd, updated_at)"
            " VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(session_id) DO UPDATE SET"
            " requests = requests + excluded.requests, input_tokens = input_tokens + excluded.input_tokens,"
            " output_tokens = output_tokens + excluded.output_tokens,"
            " cache_creation_input_tokens = cache_creation_input_tokens + excluded.cache_creation_input_tokens,"
            " cache_read_input_tokens = cache_read_input_tokens + excluded.cache_read_input_tokens,"
            " cost_usd = cost_usd + excluded.cost_usd, updated_at = excluded.updated_at",
            (session_id, usage.requests, usage.input_tokens, usage.output_tokens,
             usage.cache_creation_input_tokens, usage.cache_read_input_tokens, usage.cost_usd, now),
        )

    def record_usage(self, session_id: str, usage: Usage) -> None:
        """Usage of an answer that could not be committed (its lease was lost): it was still billed."""
        with self.transaction() as c:
            self._add_usage(c, session_id, usage, self.clock())

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
                "UPDATE chunks SET state = 'failed', cause = ?, attempts = attempts + 1, lease_owner = NULL,"
                " lease_until = NULL, next_try = ?, updated_at = ? WHERE id = ?",
                (cause[:2000], now + backoff(row[0] + 1), now, chunk_id),
            )
            if usage is not None:
                self._add_usage(c, row[1], usage, now)
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
            if row is None or row[6] != ChunkState.SENT or row[7] != owner:
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
                _, pieces = chunker.plan(costs, budget, partial(self.turn_text, session_id))
            if len(pieces) < 2:
                if usage is not None:
                    self._add_usage(c, session_id, usage, now)
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
                self._add_usage(c, session_id, usage, now)
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

    def known_items(self, session_id: str, limit: int) -> list[KnownItem]:
        """The session's most recently touched items, for a model to point restatements at."""
        if limit <= 0:
            return []
        return [
            KnownItem(id=i, kind=ItemKind(k), statement=st[:200])
            for i, k, st in self.conn.execute(
                "SELECT id, kind, statement FROM items WHERE session_id = ? AND state != 'dismissed'"
                " ORDER BY updated_at DESC, id LIMIT ?",
                (session_id, limit),
            )
        ]

    def due_summary(self, session_id: str | None = None) -> tuple[int, int]:
        """(chunks, estimated tokens) still due: what a run left for the next."""
        clause, args = self._due_clause(respect_backoff=False)
        if session_id:
            clause += " AND session_id = ?"
            args.append(session_id)
        row = self.conn.execute(f"SELECT count(*), coalesce(sum(tokens), 0) FROM chunks WHERE {clause}", args)
        n, tokens = row.fetchone()
        return int(n), int(tokens)

    def renew_leases(self, owner: str, lease_seconds: float = LEASE_SECONDS) -> int:
        """Extend the leases this runner still holds (it is alive, its answers are on the way), so
        that a slow answer is not taken over and sent twice. Returns how many were renewed."""
        with self.transaction() as c:
            return c.execute(
                "UPDATE chunks SET lease_until = ? WHERE state = 'sent' AND lease_owner = ?",
                (self.clock() + lease_seconds, owner),
            ).rowcount

    def release_chunks(self, owner: str) -> None:
        """Give back chunks leased but not attempted (a budget ran out): they stay pending, unharmed."""
        with self.transaction() as c:
            c.execute(
                "UPDATE chunks SET state = CASE WHEN attempts > 0 THEN 'failed' ELSE 'pending' END,"
                " lease_owner = NULL, lease_until = NULL WHERE state = 'sent' AND lease_owner = ?",
                (owner,),
            )

    @staticmethod
    def _watermark(c: sqlite3.Connection, session_id: str) -> int:
        """End of the contiguous captured prefix of chunks, in turn order."""
        mark = 0
        for first, last, part, parts, state in c.execute(
            "SELECT first_seq, last_seq, part, parts, state FROM chunks WHERE session_id = ?"
            " ORDER BY first_seq, char_start",
            (session_id,),
        ):
            if state != ChunkState.CAPTURED or first > mark + 1:
                break
            mark = last if part == parts else first - 1
        return mark

    # -- reading ----------------------------------------------------------------------------------

    def watermark(self, session_id: str) -> int:
        row = self.conn.execute("SELECT watermark FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return int(row[0]) if row else 0

    def session_counts(self, session_ids: Sequence[str] | None = None) -> list[SessionCounts]:
        """Turns captured / pending / failed per session. A turn is captured only when every chunk
        holding it is captured; failed when one of them failed; pending otherwise."""
        where = ""
        args: list[Any] = []
        if session_ids is not None:
            where = f" WHERE id IN ({','.join('?' * len(session_ids))})"
            args = list(session_ids)
        sessions = {
            r[0]: SessionCounts(id=r[0], agent=r[1], title=r[2], cwd=r[3], turns=r[4], watermark=r[5], last_ts=r[6])
            for r in self.conn.execute(
                "SELECT id, agent, title, cwd, turns, watermark, last_ts FROM sessions" + where
                + " ORDER BY coalesce(last_ts, '') DESC, id",
                args,
            )
        }
        # Per turn, the "worst" state of the chunks holding it: failed > pending/sent > captured.
        rank = "CASE state WHEN 'captured' THEN 0 WHEN 'failed' THEN 2 ELSE 1 END"
        for session_id, worst, n in self.conn.execute(
            f"SELECT session_id, r, sum(n) FROM ("
            f"  SELECT session_id, {rank} AS r, last_seq - first_seq + 1 AS n FROM chunks WHERE parts = 1"
            f"  UNION ALL"
            f"  SELECT session_id, max({rank}) AS r, 1 AS n FROM chunks WHERE parts > 1"
            f"  GROUP BY session_id, first_seq"
            f") GROUP BY session_id, r"
        ):
            s = sessions.get(session_id)
            if s is None:
                continue
            if worst == 0:
                s.captured += n
            elif worst == 2:
                s.failed += n
        for s in sessions.values():
            s.pending = s.turns - s.captured - s.failed
        for session_id, cause in self.conn.execute(
            "SELECT session_id, cause FROM chunks WHERE state = 'failed' AND cause IS NOT NULL"
            " GROUP BY session_id, cause"
        ):
            if session_id in sessions:
                sessions[session_id].causes.append(cause)
        for session_id, policy, records, chars in self.conn.execute(
            "SELECT session_id, policy, records, chars FROM drops"
        ):
            if session_id in sessions:
                sessions[session_id].dropped[policy] = {"records": records, "chars": chars}
        for row in self.conn.execute(
            "SELECT session_id, requests, input_tokens, output_tokens, cache_creation_input_tokens,"
            " cache_read_input_tokens, cost_usd FROM session_usage"
        ):
            if row[0] in sessions:
                sessions[row[0]].usage = Usage(
                    requests=row[1], input_tokens=row[2], output_tokens=row[3], cache_creation_input_tokens=row[4],
                    cache_read_input_tokens=row[5], cost_usd=row[6],
                )
        for session_id, n in self.conn.execute(
            "SELECT session_id, count(*) FROM problems GROUP BY session_id"
        ):
            if session_id in sessions:
                sessions[session_id].problems = n
        for session_id, kind, n in self.conn.execute("SELECT session_id, kind, count FROM redactions ORDER BY kind"):
            if session_id in sessions:
                sessions[session_id].redacted[kind] = n
        for session_id, mtime_ns in self.conn.execute(
            "SELECT session_id, max(mtime_ns) FROM files WHERE agent = 'claude' AND missing = 0"
            " AND session_id IS NOT NULL GROUP BY session_id"
        ):
            if session_id in sessions:
                sessions[session_id].newest_file_mtime = mtime_ns / 1e9
        return list(sessions.values())

    def claude_sessions_older_than(self, mtime: float) -> list[str]:
        """Sessions whose newest Claude transcript still on disk was last written before `mtime`."""
        return [
            r[0] for r in self.conn.execute(
                "SELECT session_id FROM files WHERE agent = 'claude' AND missing = 0 AND session_id IS NOT NULL"
                " GROUP BY session_id HAVING max(mtime_ns) < ?",
                (int(mtime * 1e9),),
            )
        ]

    def problems(self, limit: int = 50) -> list[dict[str, Any]]:
        return [
            {"path": p, "line": line, "message": m, "session_id": s}
            for p, line, m, s in self.conn.execute(
                "SELECT path, line_no, message, session_id FROM problems ORDER BY seen_at DESC, path, line_no"
                " LIMIT ?",
                (limit,),
            )
        ]

    def items(
        self, session_id: str | None = None, kind: str | None = None, include_dismissed: bool = False,
        created_after: float | None = None,
    ) -> list[dict[str, Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if created_after is not None:
            clauses.append("i.created_at >= ?")
            args.append(created_after)
        if session_id:
            clauses.append("i.session_id = ?")
            args.append(session_id)
        if kind:
            clauses.append("i.kind = ?")
            args.append(kind)
        if not include_dismissed:
            clauses.append("i.state != 'dismissed'")
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        out = []
        for row in self.conn.execute(
            "SELECT i.id, i.session_id, i.kind, i.statement, i.rationale, i.confidence, i.turn_ids, i.files,"
            " i.state, i.extractor, i.created_at, s.title, s.cwd FROM items i JOIN sessions s"
            " ON s.id = i.session_id" + where + " ORDER BY i.created_at, i.id",
            args,
        ):
            turn_ids = orjson.loads(row[6])
            sources = [
                {"turn_id": t, "path": p, "line": n, "timestamp": ts}
                for t, p, n, ts in self.conn.execute(
                    f"SELECT id, source_path, line_no, ts FROM turns WHERE id IN ({','.join('?' * len(turn_ids))})"
                    " ORDER BY seq",
                    turn_ids,
                )
            ]
            out.append({
                "id": row[0], "session_id": row[1], "kind": row[2], "statement": row[3], "rationale": row[4],
                "confidence": row[5], "turn_ids": turn_ids, "files": orjson.loads(row[7]), "state": row[8],
                "extractor": row[9], "created_at": row[10], "session_title": row[11], "cwd": row[12],
                "sources": sources,
            })
        return out

    def item_counts(self) -> dict[str, Counter[str]]:
        """Items not dismissed, per session and kind."""
        out: dict[str, Counter[str]] = {}
        for session_id, kind, n in self.conn.execute(
            "SELECT session_id, kind, count(*) FROM items WHERE state != 'dismissed' GROUP BY session_id, kind"
        ):
            out.setdefault(session_id, Counter())[kind] = n
        return out

    def set_item_state(self, item_id: str, state: ItemState) -> bool:
        with self.transaction() as c:
            return bool(c.execute("UPDATE items SET state = ? WHERE id = ?", (state.value, item_id)).rowcount)

    # -- forgetting -------------------------------------------------------------------------------

    def session_ids(self, prefix: str, forgotten: bool = False) -> list[str]:
        """Stored (or forgotten) sessions whose id is `prefix` or starts with it; the exact one alone."""
        table, column = ("forgotten", "session_id") if forgotten else ("sessions", "id")
        exact = self.conn.execute(f"SELECT {column} FROM {table} WHERE {column} = ?", (prefix,)).fetchone()
        if exact:
            return [exact[0]]
        return [r[0] for r in self.conn.execute(
            f"SELECT {column} FROM {table} WHERE substr({column}, 1, ?) = ? ORDER BY {column}", (len(prefix), prefix)
        )]

    def forget_session(self, session_id: str) -> dict[str, int] | None:
        """Remove everything stored for a session: its turns, chunks, items, drops, problems, usage,
        redaction counts and its files' cursors, and remember it as forgotten, so that a scan does not
        read its transcripts back in (`unforget` undoes that). Then the database is compacted so the
        bytes are gone from its files. Returns the rows removed per table; None: no such session."""
        with self.transaction() as c:
            row = c.execute("SELECT turns FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                return None
            removed: dict[str, int] = {}
            paths = [r[0] for r in c.execute("SELECT path FROM files WHERE session_id = ?", (session_id,))]
            for i in range(0, len(paths), 500):
                part = paths[i:i + 500]
                removed["problems"] = removed.get("problems", 0) + c.execute(
                    f"DELETE FROM problems WHERE path IN ({','.join('?' * len(part))})", part
                ).rowcount
            for table, column in (
                ("item_aliases", "session_id"), ("items", "session_id"), ("chunks", "session_id"),
                ("turns", "session_id"), ("drops", "session_id"), ("problems", "session_id"),
                ("session_usage", "session_id"), ("redactions", "session_id"), ("files", "session_id"),
                ("sessions", "id"),
            ):
                n = c.execute(f"DELETE FROM {table} WHERE {column} = ?", (session_id,)).rowcount
                removed[table] = removed.get(table, 0) + n
            c.execute(
                "INSERT INTO forgotten (session_id, forgotten_at, turns) VALUES (?, ?, ?)"
                " ON CONFLICT(session_id) DO UPDATE SET forgotten_at = excluded.forgotten_at, turns = excluded.turns",
                (session_id, self.clock(), row[0]),
            )
        self.compact()
        return removed

    def unforget(self, session_id: str) -> bool:
        """Read a forgotten session's transcripts in again at the next scan (from their start)."""
        with self.transaction() as c:
            if not c.execute("DELETE FROM forgotten WHERE session_id = ?", (session_id,)).rowcount:
                return False
            c.execute("DELETE FROM files WHERE session_id = ?", (session_id,))
        return True

    def forgotten(self) -> list[dict[str, Any]]:
        return [
            {"session_id": sid, "forgotten_at": at, "turns": turns}
            for sid, at, turns in self.conn.execute(
                "SELECT session_id, forgotten_at, turns FROM forgotten ORDER BY forgotten_at DESC, session_id"
            )
        ]

    def compact(self) -> bool:
        """VACUUM (the file is rewritten without the deleted rows' pages), then truncate the WAL (whose
        old frames hold what was written before). False when a reader in another process kept the WAL
        from being truncated: its old frames go at a later checkpoint."""
        self.conn.execute("VACUUM")
        busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        _private(self.path)
        return not busy

    def chunk_states(self, session_id: str | None = None) -> Counter[str]:
        where, args = (" WHERE session_id = ?", (session_id,)) if session_id else ("", ())
        return Counter(dict(self.conn.execute(f"SELECT state, count(*) FROM chunks{where} GROUP BY state", args)))

    # -- reads for the daemon -------------------------------------------------------------------

    def due_by_session(self, respect_backoff: bool = True) -> dict[str, int]:
        """Due chunks per session; with respect_backoff, failed chunks count once their backoff ended."""
        clause, args = self._due_clause(respect_backoff)
        return {
            sid: int(n)
            for sid, n in self.conn.execute(
                f"SELECT session_id, count(*) FROM chunks WHERE {clause} GROUP BY session_id", args
            )
        }

    def session_activity(self) -> dict[str, float]:
        """When each session's transcript files last changed (epoch seconds): how long it has been idle."""
        return {
            sid: mtime_ns / 1e9
            for sid, mtime_ns in self.conn.execute(
                "SELECT session_id, max(mtime_ns) FROM files WHERE session_id IS NOT NULL GROUP BY session_id"
            )
        }

    def turn_window(self, session_id: str, turn_ids: Sequence[str], limit: int = 200) -> list[dict[str, Any]]:
        """The exchange around the given turns, in order: from the user prompt at or before the first
        of them up to the next user prompt after the last (the tool calls that carried out what they
        say), at most `limit` turns either side."""
        if not turn_ids:
            return []
        first, last = self.conn.execute(
            f"SELECT min(seq), max(seq) FROM turns WHERE session_id = ? AND id IN ({','.join('?' * len(turn_ids))})",
            [session_id, *turn_ids],
        ).fetchone()
        if first is None:
            return []
        roles = self.conn.execute(
            "SELECT seq, role FROM turns WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (session_id, first - limit, last + limit),
        ).fetchall()
        start = max((seq for seq, role in roles if seq <= first and role == Role.USER), default=first - limit)
        end = min((seq - 1 for seq, role in roles if seq > last and role == Role.USER), default=last + limit)
        return [
            {"id": tid, "seq": seq, "role": role, "text": text, "files": orjson.loads(files)}
            for tid, seq, role, text, files in self.conn.execute(
                "SELECT id, seq, role, text, files FROM turns WHERE session_id = ? AND seq BETWEEN ? AND ?"
                " ORDER BY seq",
                (session_id, start, end),
            )
        ]

    def data_version(self) -> int:
        """Changes whenever another connection (another thread or process) committed: a cheap way
        to notice what another window's daemon did."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def item_summary(self, session_ids: Sequence[str] | None = None) -> dict[str, Any]:
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
        return {"by_kind": by_kind, "by_state": by_state, "changed_at": changed}

    # -- runs -------------------------------------------------------------------------------------

    def start_run(self, extractor: str) -> int:
        with self.transaction() as c:
            cur = c.execute("INSERT INTO runs (started_at, extractor) VALUES (?, ?)", (self.clock(), extractor))
            return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, tried: int, captured: int, failed: int, items: int, usage: Usage,
                   note: str | None = None, resplit: int = 0, lost: int = 0) -> None:
        with self.transaction() as c:
            c.execute(
                "UPDATE runs SET finished_at = ?, chunks_tried = ?, chunks_captured = ?, chunks_failed = ?,"
                " items_added = ?, input_tokens = ?, output_tokens = ?, cache_creation_input_tokens = ?,"
                " cache_read_input_tokens = ?, requests = ?, note = ?, cost_usd = ?, chunks_resplit = ?,"
                " chunks_lost = ? WHERE id = ?",
                (self.clock(), tried, captured, failed, items, usage.input_tokens, usage.output_tokens,
                 usage.cache_creation_input_tokens, usage.cache_read_input_tokens, usage.requests, note,
                 usage.cost_usd, resplit, lost, run_id),
            )

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The latest runs, newest first, with what each cost."""
        cur = self.conn.execute(
            "SELECT id, started_at, finished_at, extractor, chunks_tried, chunks_captured, chunks_failed,"
            " chunks_lost, chunks_resplit, items_added, requests, input_tokens, output_tokens,"
            " cache_creation_input_tokens, cache_read_input_tokens, cost_usd, note FROM runs ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur]


def _union(existing: list[str], more: Sequence[str]) -> list[str]:
    seen = dict.fromkeys(existing)
    seen.update(dict.fromkeys(more))
    return list(seen)
