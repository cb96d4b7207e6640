"""Supersession: a later item replaces an earlier one. The link is stored (both directions are
indexed), with who said so (the model, the offline heuristic, or the user by hand), why, and which
turn; the old item is never deleted, only marked. A chain never loops: a link that would close a
cycle is refused."""

from __future__ import annotations

import sqlite3
from typing import Any, Literal, NamedTuple

from checkpoint.store.connection import StoreBase

SaidBy = Literal["model", "heuristic", "user", "team"]  # team: a decision record in the repository says so
MAX_REASON = 1000


class SupersessionRefused(ValueError):
    """The link cannot be made: an unknown item, an item superseding itself, or a loop. The message
    says which, in words a user can act on."""


class Supersession(NamedTuple):  # not a dataclass: see checkpoint.store.rows
    old_id: str
    new_id: str
    said_by: SaidBy
    reason: str | None
    turn_id: str | None
    created_at: float

    def as_json(self) -> dict[str, Any]:
        return {"old_id": self.old_id, "new_id": self.new_id, "said_by": self.said_by, "reason": self.reason,
                "turn_id": self.turn_id, "created_at": self.created_at}


def _closes_loop(c: sqlite3.Connection, old_id: str, new_id: str) -> bool:
    """Whether `new_id` is already superseded, directly or along a chain, by `old_id`: linking
    old -> new would then make a cycle."""
    row = c.execute(
        "WITH RECURSIVE later(id) AS (SELECT new_id FROM supersessions WHERE old_id = ?"
        " UNION SELECT s.new_id FROM supersessions s JOIN later ON s.old_id = later.id)"
        " SELECT 1 FROM later WHERE id = ? LIMIT 1",
        (new_id, old_id),
    ).fetchone()
    return row is not None


def check_link(c: sqlite3.Connection, old_id: str, new_id: str) -> None:
    """Raise SupersessionRefused when `new_id` may not supersede `old_id`."""
    if old_id == new_id:
        raise SupersessionRefused(f"item {old_id} cannot supersede itself")
    known = {r[0] for r in c.execute("SELECT id FROM items WHERE id IN (?, ?)", (old_id, new_id))}
    for item_id in (old_id, new_id):
        if item_id not in known:
            raise SupersessionRefused(f"no item {item_id}")
    if _closes_loop(c, old_id, new_id):
        raise SupersessionRefused(
            f"item {new_id} is already superseded (directly or along a chain) by item {old_id}: "
            f"{old_id} superseded by {new_id} would make a loop"
        )


def link(c: sqlite3.Connection, old_id: str, new_id: str, said_by: SaidBy, reason: str | None,
         turn_id: str | None, now: float) -> bool:
    """Store the link inside the caller's transaction (checked first). False: it was already there
    (a hand-made link over a model's makes the user its author, and True)."""
    check_link(c, old_id, new_id)
    reason = reason[:MAX_REASON] if reason else None
    row = c.execute("SELECT said_by FROM supersessions WHERE old_id = ? AND new_id = ?", (old_id, new_id)).fetchone()
    if row is not None:
        if said_by != "user" or row[0] == "user":
            return False
        c.execute(  # the user confirms what a model or the heuristic said: the user's word stands
            "UPDATE supersessions SET said_by = ?, reason = coalesce(?, reason) WHERE old_id = ? AND new_id = ?",
            (said_by, reason, old_id, new_id),
        )
        return True
    c.execute(
        "INSERT INTO supersessions (old_id, new_id, said_by, reason, turn_id, created_at) VALUES (?,?,?,?,?,?)",
        (old_id, new_id, said_by, reason, turn_id, now),
    )
    return True


def _same_workspace(c: sqlite3.Connection, old_id: str, new_id: str) -> None:
    """Refuse a replacement from another workspace (its session ran in a folder that neither holds nor
    is inside the old item's): a decision of one project does not overturn another's. An item whose
    session's folder is not known is not refused."""
    cwds = dict(c.execute(
        "SELECT items.id, sessions.cwd FROM items JOIN sessions ON sessions.id = items.session_id"
        " WHERE items.id IN (?, ?)", (old_id, new_id),
    ).fetchall())
    old_cwd, new_cwd = cwds.get(old_id), cwds.get(new_id)
    if not old_cwd or not new_cwd or _inside(old_cwd, new_cwd) or _inside(new_cwd, old_cwd):
        return
    raise SupersessionRefused(f"item {new_id} is of the workspace {new_cwd}, item {old_id} of {old_cwd}: an item "
                              "is superseded by one of its own workspace")


def _inside(folder: str, outer: str) -> bool:
    return folder == outer or folder.startswith(outer.rstrip("/") + "/")


class SupersessionsMixin(StoreBase):
    def supersede(self, old_id: str, new_id: str, reason: str | None = None) -> bool:
        """By hand: `new_id` supersedes `old_id` (a dismissed item may be superseded too). Raises
        SupersessionRefused (unknown item, itself, a loop, an item of another workspace). False: the
        link was already there."""
        with self.transaction() as c:
            _same_workspace(c, old_id, new_id)
            return link(c, old_id, new_id, "user", reason, None, self.clock())

    def unsupersede(self, old_id: str, new_id: str | None = None) -> int:
        """Undo: the links from `old_id` (to `new_id` only, when given), whoever made them. Returns
        how many were removed; the items themselves are untouched."""
        with self.transaction() as c:
            if new_id is None:
                return c.execute("DELETE FROM supersessions WHERE old_id = ?", (old_id,)).rowcount
            return c.execute("DELETE FROM supersessions WHERE old_id = ? AND new_id = ?", (old_id, new_id)).rowcount

    def supersessions(self, item_id: str) -> list[Supersession]:
        """Every link the item is in, either side, oldest first."""
        return [
            Supersession(old_id=r[0], new_id=r[1], said_by=r[2], reason=r[3], turn_id=r[4], created_at=r[5])
            for r in self.conn.execute(
                "SELECT old_id, new_id, said_by, reason, turn_id, created_at FROM supersessions"
                " WHERE old_id = ? OR new_id = ? ORDER BY created_at, old_id, new_id",
                (item_id, item_id),
            )
        ]

    def item_ids(self, prefix: str) -> list[str]:
        """Items whose id is `prefix` or starts with it; the exact one alone."""
        exact = self.conn.execute("SELECT id FROM items WHERE id = ?", (prefix,)).fetchone()
        if exact:
            return [exact[0]]
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM items WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 20", (len(prefix), prefix)
        )]
