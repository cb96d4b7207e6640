"""What turns wrote to files (`turn_edits`): the back-fill of the turns stored before edits were.

The turns a reader stores carry their edits (ingest writes them beside the turn). A database from
before the migration "turn edits" has turns without them; once, the back-fill "turn_edits"
(checkpoint.backfills, run when the store is opened for writing) has their edits derived from their
stored text (already redacted) by the caller's parser, which knows the agents' formats that the store
does not.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from checkpoint.model import FileEdit
from checkpoint.store.connection import StoreBase

TURN_EDITS = "turn_edits"  # the back-fill's name in `backfills`
_BATCH = 500

# (agent, the turn's stored text, the session's folder) -> what the turn wrote to files
EditsOfTurn = Callable[[str, str, str | None], Sequence[FileEdit]]


class EditsMixin(StoreBase):
    def edits_backfill_due(self) -> bool:
        return self.conn.execute("SELECT 1 FROM backfills WHERE name = ?", (TURN_EDITS,)).fetchone() is not None

    def backfill_edits(self, derive: EditsOfTurn, holding: str) -> int:
        """Store the edits of the turns stored before edits were, from `derive` over each turn whose
        text holds `holding` (the mark of a tool call), once: in one transaction with the end of the
        back-fill. Returns the edits stored."""
        if not self.edits_backfill_due():
            return 0
        stored = 0
        with self.transaction() as c:
            if c.execute("DELETE FROM backfills WHERE name = ?", (TURN_EDITS,)).rowcount == 0:
                return 0  # another process did it meanwhile
            rows: list[tuple[str, int, str, str, str]] = []
            for turn_id, session_id, agent, cwd, text in c.execute(
                "SELECT t.id, t.session_id, s.agent, s.cwd, t.text FROM turns t JOIN sessions s ON s.id = t.session_id"
                " WHERE instr(t.text, ?) > 0",
                (holding,),
            ):
                rows.extend((turn_id, n, session_id, e.path, e.text) for n, e in enumerate(derive(agent, text, cwd)))
                if len(rows) >= _BATCH:
                    stored += _insert(c, rows)
            stored += _insert(c, rows)
        return stored


def _insert(c: sqlite3.Connection, rows: list[tuple[str, int, str, str, str]]) -> int:
    if rows:
        c.executemany(
            "INSERT OR IGNORE INTO turn_edits (turn_id, n, session_id, path, text) VALUES (?,?,?,?,?)", rows)
    count = len(rows)
    rows.clear()
    return count
