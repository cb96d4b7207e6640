"""Checks on items (checkpoint.checks): what code breaks a decision or constraint. A check is stored
with its item, proposed or accepted, and acts by the item's fate (checks/active.py says when): this
module only reads and writes the rows."""

from __future__ import annotations

import sqlite3
from typing import Any, Literal, NamedTuple

from checkpoint.checks.model import Check, check_id
from checkpoint.store.connection import StoreBase

CheckState = Literal["proposed", "accepted", "dismissed"]
CHECK_STATES: tuple[CheckState, ...] = ("proposed", "accepted", "dismissed")
CheckSaidBy = Literal["model", "heuristic", "user"]


class CheckRow(NamedTuple):  # not a dataclass: see checkpoint.store.records
    id: str
    item_id: str
    text: str  # the check as JSON (checks.model.read_check reads it)
    state: CheckState
    said_by: CheckSaidBy
    created_at: float
    statement: str  # the item's
    kind: str
    item_state: str  # new, accepted, dismissed
    held: bool  # held for review (or not judged yet) and not accepted by this user: acts never
    superseded: bool
    record: str | None  # the item's decision record, when it is shared

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "item": self.item_id, "check": self.text, "state": self.state,
                "said_by": self.said_by, "statement": self.statement, "item_state": self.item_state}


_SELECT = (
    "SELECT k.id, k.item_id, k.rule, k.state, k.said_by, k.created_at, i.statement, i.kind, i.state,"
    " i.held != 0 AND i.accepted_here = 0,"
    " EXISTS (SELECT 1 FROM supersessions s WHERE s.old_id = i.id), i.record"
    " FROM checks k JOIN items i ON i.id = k.item_id"
)


def _row(r: sqlite3.Row | tuple[Any, ...]) -> CheckRow:
    return CheckRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], bool(r[9]), bool(r[10]), r[11])


def store_check(c: sqlite3.Connection, item_id: str, check: Check, said_by: CheckSaidBy, state: CheckState,
                now: float) -> str:
    """Inside the caller's transaction; the same check said again is the one already stored."""
    cid = check_id(item_id, check)
    c.execute("INSERT INTO checks (id, item_id, rule, state, said_by, created_at) VALUES (?,?,?,?,?,?)"
              " ON CONFLICT (id) DO NOTHING", (cid, item_id, check.text(), state, said_by, now))
    return cid


class ChecksMixin(StoreBase):
    def add_check(self, item_id: str, check: Check, said_by: CheckSaidBy, state: CheckState) -> str | None:
        """The check's id; None when there is no such item. Given again, the check takes the new state."""
        with self.transaction() as c:
            if c.execute("SELECT 1 FROM items WHERE id = ?", (item_id,)).fetchone() is None:
                return None
            cid = store_check(c, item_id, check, said_by, state, self.clock())
            c.execute("UPDATE checks SET state = ? WHERE id = ?", (state, cid))
            return cid

    def set_check_state(self, cid: str, state: CheckState) -> bool:
        with self.transaction() as c:
            return bool(c.execute("UPDATE checks SET state = ? WHERE id = ?", (state, cid)).rowcount)

    def checks_in(self, workspace: str | None) -> list[CheckRow]:
        """Every check on the items of a workspace (checkpoint.repository.workspace_key); None: all."""
        if workspace is None:
            return [_row(r) for r in self.conn.execute(_SELECT + " ORDER BY k.created_at, k.id")]
        return [_row(r) for r in self.conn.execute(_SELECT + " WHERE i.workspace = ? ORDER BY k.created_at, k.id",
                                                   (workspace,))]

    def checks_of_item(self, item_id: str) -> list[CheckRow]:
        return [_row(r) for r in self.conn.execute(_SELECT + " WHERE k.item_id = ? ORDER BY k.created_at, k.id",
                                                   (item_id,))]

    def checks_named(self, prefix: str) -> list[str]:
        """The ids of the checks a prefix names (several: ambiguous)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [r[0] for r in self.conn.execute("SELECT id FROM checks WHERE id LIKE ? ESCAPE '\\' LIMIT 10",
                                                (escaped + "%",))]
