"""Forgetting a session on request: everything stored for it removed, the bytes compacted away, and
its transcripts not read in again until it is unforgotten."""

from __future__ import annotations

import sqlite3

import orjson

from checkpoint.model import ForgottenSession
from checkpoint.store.connection import StoreBase


def _keep_items_other_sessions_said(c: sqlite3.Connection, session_id: str) -> int:
    """An item restated in several sessions of a workspace is one item citing the turns of each.
    Forgetting one of them takes its turns out of every item; an item the forgotten session created
    that other sessions said too passes to the earliest of those (it is theirs as well), and only an
    item no other session said goes with the session. Returns the items handed over."""
    handed = 0
    rows = c.execute(
        "SELECT i.id, i.session_id, i.turn_ids FROM items i WHERE i.session_id = ? OR EXISTS ("
        " SELECT 1 FROM json_each(i.turn_ids) j JOIN turns t ON t.id = j.value WHERE t.session_id = ?)",
        (session_id, session_id),
    ).fetchall()
    for item_id, owner, turn_ids in rows:
        kept = [t for t, in c.execute(
            "SELECT j.value FROM json_each(?) j LEFT JOIN turns t ON t.id = j.value"
            " WHERE t.session_id IS NULL OR t.session_id != ? ORDER BY j.key",
            (turn_ids, session_id),
        )]
        heir = c.execute(
            f"SELECT session_id FROM turns WHERE id IN ({','.join('?' * len(kept))}) ORDER BY ts, seq LIMIT 1", kept
        ).fetchone() if kept else None
        if heir is None:
            if owner != session_id:  # only the forgotten session's turns backed it: it goes with them
                c.execute("DELETE FROM items WHERE id = ?", (item_id,))
            continue
        c.execute("UPDATE items SET turn_ids = ? WHERE id = ?", (orjson.dumps(kept).decode(), item_id))
        if owner == session_id:
            c.execute("UPDATE items SET session_id = ? WHERE id = ?", (heir[0], item_id))
            handed += 1
    return handed


class ForgettingMixin(StoreBase):
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
            removed["items kept for other sessions"] = _keep_items_other_sessions_said(c, session_id)
            for table, column in (
                ("item_aliases", "session_id"), ("items", "session_id"), ("chunks", "session_id"),
                ("turn_edits", "session_id"), ("turns", "session_id"), ("drops", "session_id"),
                ("problems", "session_id"),
                ("session_usage", "session_id"), ("redactions", "session_id"), ("files", "session_id"),
                ("session_cwds", "session_id"),
                ("sessions", "id"),
            ):
                n = c.execute(f"DELETE FROM {table} WHERE {column} = ?", (session_id,)).rowcount
                removed[table] = removed.get(table, 0) + n
            c.execute(
                "INSERT INTO forgotten (session_id, forgotten_at, turns) VALUES (?, ?, ?)"
                " ON CONFLICT(session_id) DO UPDATE SET forgotten_at = excluded.forgotten_at, turns = excluded.turns",
                (session_id, self.clock(), row[0]),
            )
            # The search index keeps a deleted row's words in its segments until they are merged:
            # merge them now, so that compacting takes the forgotten items' words out of the file.
            c.execute("INSERT INTO item_search (item_search) VALUES ('optimize')")
        self.compact()
        return removed

    def unforget(self, session_id: str) -> bool:
        """Read a forgotten session's transcripts in again at the next scan (from their start)."""
        with self.transaction() as c:
            if not c.execute("DELETE FROM forgotten WHERE session_id = ?", (session_id,)).rowcount:
                return False
            c.execute("DELETE FROM files WHERE session_id = ?", (session_id,))
        return True

    def forgotten(self) -> list[ForgottenSession]:
        """Sessions forgotten on request, the latest first."""
        return [
            ForgottenSession(session_id=sid, forgotten_at=at, turns=turns)
            for sid, at, turns in self.conn.execute(
                "SELECT session_id, forgotten_at, turns FROM forgotten ORDER BY forgotten_at DESC, session_id"
            )
        ]

