"""Decision records shared through a repository (checkpoint.team), as items of its workspace.

What the repository says wins: `sync_shared` makes the items of a workspace's records say what the
records say (statement, rationale, kind, files, state from the status, supersession links), whether
the item was captured here (its origin becomes `shared`) or is known only from the record (an item of
the workspace's team session). A record gone from the repository retires its item: an item known only
from it is dismissed, an item captured here is local again. A record that cannot be read is one
problem of the team session (its file and line), replaced at every sync.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import NamedTuple

import orjson

from checkpoint.model import (
    ORIGIN_LOCAL,
    ORIGIN_SHARED,
    TEAM_AGENT,
    TEAM_SESSION_PREFIX,
    ItemState,
    SharedDecision,
)
from checkpoint.store.connection import StoreBase
from checkpoint.store.items import fingerprint
from checkpoint.store.supersessions import SupersessionRefused, link

TEAM_EXTRACTOR = "shared"
Judge = Callable[[str, str | None], bool]  # the extractor named by an item known only from a record


class SharedProblem(NamedTuple):
    path: str  # the record's file, absolute
    line: int
    message: str


class SyncReport(NamedTuple):
    changed: int  # items added, changed or retired, links made or removed, and 1 when the problems changed
    records: int
    problems: int


def team_session(workspace: str) -> str:
    return TEAM_SESSION_PREFIX + workspace


def _epoch(date: str) -> float:
    return datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()


def scoped_id(workspace: str, record_id: str) -> str:
    """The id a record's item is stored under in `workspace` when its own id is another
    repository's item: ids are scoped by repository, so a record in one clone reusing another's id
    makes an item of its own and rewrites nothing of the other's."""
    digest = hashlib.blake2b(f"{workspace}\0{record_id}".encode(), digest_size=8).hexdigest()
    return digest[: max(12, min(len(record_id), 16))]


class SharedMixin(StoreBase):
    def sync_shared(self, workspace: str, root: str, decisions: Sequence[SharedDecision],
                    problems: Sequence[SharedProblem], judge: Judge | None = None) -> SyncReport:
        """Make the workspace's shared items what its records (read from the worktree at `root`) say,
        in one transaction. Writes nothing when nothing differs. A record acts on its own repository
        only: its item is stored under its id when that id is free or this workspace's, else under
        scoped_id; a link to an item of another workspace is refused, said as a problem. `judge` says
        whether a record's statement and rationale hold it for review (checkpoint.extract.held); it is
        asked only for a record that is new or reworded (None: each decision's own `held`)."""
        session = team_session(workspace)
        if not decisions and not problems and not self.conn.execute(
                "SELECT 1 FROM sessions WHERE id = ?", (session,)).fetchone():
            return SyncReport(changed=0, records=0, problems=0)  # shares nothing, never did: nothing to write
        changed = 0
        with self.transaction() as c:
            now = self.clock()
            if decisions or problems:  # a repository that shares nothing has no session of its own
                c.execute("INSERT INTO sessions (id, agent, title, cwd, workspace, updated_at) VALUES (?,?,?,?,?,?)"
                          " ON CONFLICT(id) DO NOTHING",
                          (session, TEAM_AGENT, "Decisions shared in the repository", root, workspace, now))
                c.execute("INSERT OR IGNORE INTO session_cwds (session_id, cwd, workspace) VALUES (?,?,?)",
                          (session, root, workspace))
            ids = {d.id: self._own_id(c, workspace, d.id) for d in decisions}
            kept: list[SharedDecision] = []
            bad = list(problems)
            for decision in decisions:
                stored = self._upsert_shared(c, session, workspace, decision._replace(id=ids[decision.id]), now, judge)
                if stored is None:
                    bad.append(SharedProblem(f"{root}/{decision.path}", 1, f"item {decision.id} is in another"
                                             " record of this repository too, or says what another says"))
                    continue
                changed += stored
                kept.append(decision)
            changed += self._retire_shared(c, session, workspace, {ids[d.id] for d in kept})
            links, foreign = self._relink_shared(c, workspace, kept, ids, now)
            changed += links
            bad += [SharedProblem(f"{root}/{d.path}", 1, f"{key}: item {other} is not of this repository:"
                                  " a record links only items of its own repository (ignored)")
                    for d, key, other in foreign]
            changed += self._replace_problems(c, session, bad, now)
        return SyncReport(changed=changed, records=len(kept), problems=len(bad))

    @staticmethod
    def _own_id(c: sqlite3.Connection, workspace: str, record_id: str) -> str:
        row = c.execute("SELECT workspace FROM items WHERE id = ?", (record_id,)).fetchone()
        return record_id if row is None or row[0] == workspace else scoped_id(workspace, record_id)

    def _upsert_shared(self, c: sqlite3.Connection, session: str, workspace: str, d: SharedDecision,
                       now: float, judge: Judge | None) -> int | None:
        """1: the item was added or changed; 0: it said this already; None: it cannot be stored. A
        changed statement or rationale is judged again and needs this user's acceptance again."""
        files = orjson.dumps(list(d.files)).decode()
        row = c.execute("SELECT kind, statement, rationale, files, state, origin, record, held, record_by, workspace"
                        " FROM items WHERE id = ?", (d.id,)).fetchone()
        if judge is not None:
            same_text = (row is not None and (row[1], row[2]) == (d.statement, d.rationale) and row[5] == ORIGIN_SHARED
                         and row[7] in (0, 1))  # -1: stored before records were judged
            d = d._replace(held=bool(row[7]) if same_text else judge(d.statement, d.rationale))
        said = (d.kind.value, d.statement, d.rationale, files, d.state.value, ORIGIN_SHARED, d.path, int(d.held),
                d.decision_makers or None)
        if row is not None:
            if row[9] != workspace:
                return None  # scoped ids make this unreachable: another repository's item is never rewritten
            if tuple(row[:9]) == said:
                return 0
            reworded = (row[1], row[2]) != (d.statement, d.rationale)
            c.execute("UPDATE items SET kind = ?, statement = ?, rationale = ?, files = ?, state = ?, origin = ?,"
                      " record = ?, held = ?, record_by = ?, updated_at = ?,"
                      " accepted_here = CASE WHEN ? THEN 0 ELSE accepted_here END WHERE id = ?",
                      (*said, now, int(reworded), d.id))
            return 1
        added = c.execute(
            "INSERT OR IGNORE INTO items (id, session_id, fingerprint, kind, statement, rationale, confidence,"
            " turn_ids, files, state, extractor, first_chunk, created_at, updated_at, workspace, origin, record,"
            " held, record_by) VALUES (?,?,?,?,?,?,1.0,'[]',?,?,?,0,?,?,?,?,?,?,?)",
            (d.id, session, fingerprint(d.kind, d.statement), d.kind.value, d.statement, d.rationale, files,
             d.state.value, TEAM_EXTRACTOR, _epoch(d.date), now, workspace, ORIGIN_SHARED, d.path, int(d.held),
             d.decision_makers or None),
        ).rowcount
        return 1 if added else None

    def _retire_shared(self, c: sqlite3.Connection, session: str, workspace: str, ids: set[str]) -> int:
        gone = [(item_id, owner) for item_id, owner in c.execute(
            "SELECT id, session_id FROM items WHERE workspace = ? AND origin = ? AND record IS NOT NULL",
            (workspace, ORIGIN_SHARED))
            if item_id not in ids]
        for item_id, owner in gone:
            if owner == session:
                c.execute("UPDATE items SET state = ?, record = NULL, updated_at = ? WHERE id = ?",
                          (ItemState.DISMISSED.value, self.clock(), item_id))
            else:
                c.execute("UPDATE items SET origin = ?, record = NULL WHERE id = ?", (ORIGIN_LOCAL, item_id))
        return len(gone)

    def _relink_shared(self, c: sqlite3.Connection, workspace: str, decisions: Sequence[SharedDecision],
                       ids: dict[str, str], now: float) -> tuple[int, list[tuple[SharedDecision, str, str]]]:
        """The links between shared items are the records': either side of a pair may say it. An id a
        record names is one of this repository's records, or an item of this workspace; one of another
        workspace is not linked, and comes back as (record, key, id): a record problem."""
        foreign: list[tuple[SharedDecision, str, str]] = []

        def own(d: SharedDecision, key: str, named: str) -> str | None:
            if named in ids:
                return ids[named]
            row = c.execute("SELECT workspace FROM items WHERE id = ?", (named,)).fetchone()
            if row is not None and row[0] != workspace:
                foreign.append((d, key, named))
                return None
            return named  # this workspace's, or not seen on this machine (yet)

        said: set[tuple[str, str]] = set()
        for d in decisions:
            for old in d.supersedes:
                if (mine := own(d, "supersedes", old)) is not None:
                    said.add((mine, ids[d.id]))
            for new in d.superseded_by:
                if (mine := own(d, "superseded_by", new)) is not None:
                    said.add((ids[d.id], mine))
        shared = {ids[d.id] for d in decisions}
        changed = 0
        for old, new, across in c.execute(
                "SELECT l.old_id, l.new_id, coalesce(o.workspace != n.workspace, 0) FROM supersessions l"
                " LEFT JOIN items o ON o.id = l.old_id LEFT JOIN items n ON n.id = l.new_id").fetchall():
            # the records' own links, and any link between a shared item and another repository's item
            # (one made before links were scoped): what the records do not say goes
            if (old, new) not in said and ((old in shared and new in shared) or
                                           (across and (old in shared or new in shared))):
                c.execute("DELETE FROM supersessions WHERE old_id = ? AND new_id = ?", (old, new))
                changed += 1
        for old, new in sorted(said):
            try:
                changed += link(c, old, new, "team", None, None, now)
            except SupersessionRefused:
                continue  # a record names an item this machine has not seen (yet): nothing to link
        return changed, foreign

    def _replace_problems(self, c: sqlite3.Connection, session: str, problems: Sequence[SharedProblem],
                          now: float) -> int:
        """1: the problems differ from the stored ones (a status shows them: it is told); else 0."""
        stored = set(c.execute("SELECT path, line_no, message FROM problems WHERE session_id = ?", (session,)))
        if stored == {tuple(p) for p in problems}:
            return 0
        c.execute("DELETE FROM problems WHERE session_id = ?", (session,))
        c.executemany("INSERT OR IGNORE INTO problems (path, line_no, message, session_id, seen_at)"
                      " VALUES (?,?,?,?,?)", [(p.path, p.line, p.message, session, now) for p in problems])
        return 1

    def shared_record(self, item_id: str) -> tuple[str, str] | None:
        """(workspace, record path) of a shared item; None: it is not shared."""
        row = self.conn.execute("SELECT workspace, record FROM items WHERE id = ? AND origin = ?"
                                " AND record IS NOT NULL", (item_id, ORIGIN_SHARED)).fetchone()
        return (row[0], row[1]) if row else None

    def mark_shared(self, item_id: str, record: str | None) -> None:
        """After `checkpoint share` wrote (a path) or removed (None) the item's record: its origin."""
        with self.transaction() as c:
            c.execute("UPDATE items SET origin = ?, record = ? WHERE id = ?",
                      (ORIGIN_SHARED if record else ORIGIN_LOCAL, record, item_id))
