"""Items' statements stored as an agent is shown them (`agent_lines`: redacted, on one line, no
markup; checkpoint.shown_text renders them), one row per item under the key of the redactor that
rendered it. The pre-edit hook's narrow path reads them with the standard library alone; a missing or
stale row sends it down the full path, which renders the statement itself. A statement that changes,
or an item deleted, takes its row with it (triggers of the migration "agent lines")."""

from __future__ import annotations

from collections.abc import Sequence

from checkpoint.store.connection import StoreBase

# (item id, redaction key, source digest, statement as shown, session id as shown, item id as shown)
AgentLine = tuple[str, str, str, str, str, str]


class AgentLinesMixin(StoreBase):
    def items_without_agent_line(self, key: str, limit: int, session_id: str | None = None,
                                 ) -> list[tuple[str, str, str]]:
        """(id, session id, statement) of up to `limit` items (of one session, or all) with no line
        rendered under `key`."""
        where, args = ("i.session_id = ? AND ", [session_id]) if session_id is not None else ("", [])
        return [(str(i), str(s), str(st)) for i, s, st in self.conn.execute(
            "SELECT i.id, i.session_id, i.statement FROM items i LEFT JOIN agent_lines a ON a.item_id = i.id"
            f" WHERE {where}(a.item_id IS NULL OR a.redaction != ?) LIMIT ?", [*args, key, max(0, limit)])]

    def put_agent_lines(self, rows: Sequence[AgentLine]) -> None:
        with self.transaction() as c:
            # Only for items still there (one deleted meanwhile keeps no row).
            c.executemany(
                "INSERT OR REPLACE INTO agent_lines (item_id, redaction, source, statement, session, item)"
                " SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM items WHERE id = ?1)", rows)
