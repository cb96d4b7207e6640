"""Reads for the agent front ends (the MCP server, the Claude Code hooks): a workspace's items, a
search over items, one item with the turns it came from, a workspace's capture counts. Each query is
bounded in SQL (LIMIT, and a count of what the limit left out): an agent's context and a tool's
answer have a size cap, and a hook has well under a second on a database of thousands of sessions.

A workspace is a folder: the sessions that belong to it by the store's one rule (scope.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checkpoint.model import ItemKind, ItemRecord, ItemSource, Role, SessionCounts
from checkpoint.store.connection import StoreBase
from checkpoint.store.items import ITEM_HOLDS
from checkpoint.store.queries import ITEM_COLUMNS, QueriesMixin, _item
from checkpoint.store.rows import ItemPage, SourceExcerpt
from checkpoint.store.search import LASTING, RELEASED, SearchMixin, file_clause

# Accepted first, then new; newest first within each (items of one answer share a time: the later
# inserted, from later in the chunk, first).
_ORDER = " ORDER BY (i.state = 'accepted') DESC, i.created_at DESC, i.rowid DESC"


def _names_path(column: str, paths: Sequence[str]) -> tuple[str, list[Any]]:
    """SQL: `column` is one of these absolute paths, or a relative path one of them ends with."""
    marks = ",".join("?" * len(paths))
    tails = " OR ".join(f"substr(?, -length({column}) - 1) = '/' || {column}" for _ in paths)
    return f"({column} IN ({marks}) OR (substr({column}, 1, 1) != '/' AND ({tails})))", [*paths, *paths]


def concerns_clause(paths: Sequence[str], named: str | None = None) -> tuple[str, list[Any]]:
    """SQL over items `i` about one file (`paths`: its absolute spellings, as given and resolved): a
    file the item names is that file, or a relative path it ends with (resolved against the item's
    session by the caller); an item that names no file, one its cited turns wrote (turn_edits); or the
    statement holds `named` (the file's name, for the caller to check as a word). The file's name is
    looked for in the item's files as text first: json_each runs only on the few that hold it."""
    files, files_args = _names_path("f.value", paths)
    edits, edits_args = _names_path("e.path", paths)
    name = paths[0].rstrip("/").rsplit("/", 1)[-1]
    sql = (f"((instr(i.files, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(i.files) f WHERE {files}))"
           " OR (i.files = '[]' AND EXISTS (SELECT 1 FROM json_each(i.turn_ids) j"
           f" JOIN turn_edits e ON e.turn_id = j.value WHERE {edits}))")
    args = [name if '"' not in name and "\\" not in name else "", *files_args, *edits_args]
    if named:
        sql += " OR instr(i.statement, ?) > 0"
        args.append(named)
    return sql + ")", args


class AgentReadsMixin(SearchMixin, QueriesMixin, StoreBase):
    def _item_page(self, clauses: list[str], args: list[Any], limit: int, counted: bool = True,
                   released_only: bool = False) -> ItemPage:
        """The page; `counted` False: its total is only the items on it (a caller that shows no count
        saves the second pass)."""
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        base = " FROM items i JOIN sessions s ON s.id = i.session_id" + where
        rows = self.conn.execute(f"SELECT {ITEM_COLUMNS}" + base + _ORDER + " LIMIT ?", [*args, max(0, limit)])
        items = self._with_sources(rows.fetchall())
        total = int(self.conn.execute("SELECT count(*)" + base, args).fetchone()[0]) if counted else len(items)
        return self._released(ItemPage(items=tuple(items), total=total), released_only)

    def _released(self, page: ItemPage, released_only: bool) -> ItemPage:
        """With `released_only`, the page without the items the store's SQL could not yet know to hold:
        those `_with_sources` judged (the holds back-fill still due)."""
        if not released_only:
            return page
        kept = tuple(i for i in page.items if not i.held_back)
        return page if len(kept) == len(page.items) else ItemPage(kept, page.total - (len(page.items) - len(kept)))

    def _with_sources(self, rows: Sequence[tuple[Any, ...]]) -> list[ItemRecord]:
        """The rows as items, each with the transcript lines of the turns it cites (still stored)."""
        if not rows:
            return []
        ids = [r[0] for r in rows]
        sources: dict[str, list[ItemSource]] = {i: [] for i in ids}
        for item_id, turn_id, path, line, ts in self.conn.execute(
            "SELECT i.id, t.id, t.source_path, t.line_no, t.ts FROM items i, json_each(i.turn_ids) j"
            " JOIN turns t ON t.id = j.value"
            f" WHERE i.id IN ({','.join('?' * len(ids))}) ORDER BY i.id, t.seq",
            ids,
        ):
            sources[item_id].append(ItemSource(turn_id=turn_id, path=path, line=line, timestamp=ts))
        return self._judged([_item(r, sources[r[0]]) for r in rows])

    def _judged(self, items: list[ItemRecord]) -> list[ItemRecord]:
        """Items stored before items could be held, while their back-fill (checkpoint.backfills,
        "item_holds") has not run, as on a database no writable open has back-filled since the upgrade:
        each judged here by the same rule, so that no read for an agent hands out a planted
        instruction stored earlier."""
        if not items or ITEM_HOLDS not in self.backfills_due():
            return items
        from checkpoint.extract.held import held_for_review  # its patterns compile on import: rare

        return [i._replace(held=True) if not i.held and held_for_review(i.statement, i.rationale)
                else i for i in items]

    def workspace_items(
        self, workspaces: Sequence[str], *, kinds: Sequence[ItemKind] = (), file: str | None = None,
        concerning: Sequence[str] = (), named: str | None = None,
        include_dismissed: bool = False, include_superseded: bool = False, limit: int = 50, counted: bool = True,
        released_only: bool = False, lasting_only: bool = False,
    ) -> ItemPage:
        """The items of sessions run in these folders (or below), accepted first, newest first; those a
        later item superseded are left out unless asked for. `concerning`: only the items about one
        file, given as its absolute spellings (concerns_clause), or whose statement holds `named`.
        `released_only`: only what an agent may be shown (held items once accepted). `lasting_only`: no
        order about one task (what a later session is given)."""
        clause, args = self._scope_clause(workspaces)
        clauses = [clause]
        if kinds:
            clauses.append(f"i.kind IN ({','.join('?' * len(kinds))})")
            args += [k.value for k in kinds]
        if file:
            more, more_args = file_clause(file)
            clauses.append(more)
            args += more_args
        if concerning:
            more, more_args = concerns_clause(concerning, named)
            clauses.append(more)
            args += more_args
        if not include_dismissed:
            clauses.append("i.state != 'dismissed'")
        if not include_superseded:
            clauses.append("NOT EXISTS (SELECT 1 FROM supersessions WHERE old_id = i.id)")
        if released_only:
            clauses.append(RELEASED)
        if lasting_only:
            clauses.append(LASTING)
        return self._item_page(clauses, args, limit, counted, released_only)

    def search_items(
        self, query: str, *, workspaces: Sequence[str] = (), kind: ItemKind | None = None, file: str | None = None,
        limit: int = 20, released_only: bool = False, lasting_only: bool = False,
    ) -> ItemPage:
        """The full-text search (Store.search: bm25, FTS syntax read as words) of current items, dismissed
        and superseded ones left out, with how many matched in all. No workspace: every workspace."""
        found = self.search(query, kind=kind, workspaces=list(workspaces) or None, file=file, limit=limit,
                            include_superseded=False, count=True, released_only=released_only,
                            lasting_only=lasting_only)
        ids = [item.id for item, _ in found.hits]
        by_id = {item.id: item for item in self._with_sources(self.conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM items i JOIN sessions s ON s.id = i.session_id"
            f" WHERE i.id IN ({','.join('?' * len(ids))})", ids).fetchall())} if ids else {}
        page = ItemPage(items=tuple(by_id[i] for i in ids if i in by_id), total=found.total)
        return self._released(page, released_only)

    def item(self, item_id: str) -> ItemRecord | None:
        rows = self.conn.execute(
            f"SELECT {ITEM_COLUMNS} FROM items i JOIN sessions s ON s.id = i.session_id WHERE i.id = ?", (item_id,)
        ).fetchall()
        found = self._with_sources(rows)
        return found[0] if found else None

    def item_excerpts(self, item_id: str, chars: int) -> list[SourceExcerpt]:
        """The turns an item cites, in session order, each cut to its first `chars` characters (in
        SQL: a turn may be megabytes) with its full length."""
        return [
            SourceExcerpt(turn_id=tid, seq=seq, role=Role(role), path=path, line=line, timestamp=ts,
                          text=text, length=length)
            for tid, seq, role, path, line, ts, text, length in self.conn.execute(
                "SELECT t.id, t.seq, t.role, t.source_path, t.line_no, t.ts, substr(t.text, 1, ?), length(t.text)"
                " FROM items i, json_each(i.turn_ids) j JOIN turns t ON t.id = j.value WHERE i.id = ?"
                " ORDER BY t.seq",
                (max(0, chars), item_id),
            )
        ]

    def workspace_sessions(self, workspaces: Sequence[str]) -> list[SessionCounts]:
        """Captured / pending / failed turns of the sessions run in these folders (or below)."""
        ids = list(self.folder_sessions(workspaces))
        return self.session_counts(ids) if ids else []
