"""Items: written with the chunk they came from (`store_items`, inside commit_extraction's
transaction), merged when restated, and triaged (accepted, dismissed) by the user."""

from __future__ import annotations

import contextlib
import hashlib
import re
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import orjson

from checkpoint.model import Citation, ItemKind, ItemState, KnownItem
from checkpoint.repository import workspace_key
from checkpoint.store.answered import mark_answered
from checkpoint.store.connection import StoreBase
from checkpoint.store.supersessions import SaidBy, SupersessionRefused, link

if TYPE_CHECKING:
    from checkpoint.answer import Extraction, ItemDraft


def fingerprint(kind: ItemKind, statement: str) -> str:
    """Same kind and same words (case, spacing and punctuation aside) are the same item."""
    norm = re.sub(r"[^\w]+", " ", statement.lower()).strip()
    return hashlib.blake2b(f"{kind}|{norm}".encode(), digest_size=10).hexdigest()


def _merged_sources(existing: dict[str, str], more: dict[str, str]) -> dict[str, str]:
    """Where an item's files came from, over every session that said it: a file named by one and
    edited by another came from both."""
    merged = dict(existing)
    for path, source in more.items():
        merged[path] = source if merged.get(path) in (None, source) else "statement+edit"
    return merged


def _union(existing: list[str], more: Sequence[str]) -> list[str]:
    seen = dict.fromkeys(existing)
    seen.update(dict.fromkeys(more))
    return list(seen)


def folder_of(cwd: str | None) -> str | None:
    """A folder a session worked in, as recorded: without a trailing separator (None: none known)."""
    if not cwd:
        return None
    return cwd.rstrip("/") or cwd


def workspace_of(cwd: str | None) -> str | None:
    """The workspace of a session that ran in `cwd`: its repository, else the folder
    (checkpoint.repository); None: no cwd known, and its items merge only within the session."""
    folder = folder_of(cwd)
    return workspace_key(folder) if folder else None


def _scope(session_id: str, workspace: str | None) -> tuple[str, str]:
    """SQL over items `i` for "of the same workspace" (of the same session when it has none)."""
    return ("i.workspace = ?", workspace) if workspace else ("i.session_id = ?", session_id)


def _same_item(
    c: sqlite3.Connection, session_id: str, workspace: str | None, fp: str, kind: ItemKind, same_as: str | None
) -> tuple[str, str, str, str, str] | None:
    """The item a draft restates, in its workspace (any of the workspace's sessions): the one it
    names (same kind), else the oldest with its fingerprint or a wording already merged into one.
    (id, turn_ids, files, cited, file_sources) or None."""
    where, key = _scope(session_id, workspace)
    columns = "i.id, i.turn_ids, i.files, i.cited, i.file_sources"
    if same_as:
        row = c.execute(
            f"SELECT {columns} FROM items i WHERE i.id = ? AND i.kind = ? AND {where}",
            (same_as, kind.value, key),
        ).fetchone()
        if row:
            return row  # type: ignore[no-any-return]
    row = c.execute(
        f"SELECT {columns} FROM items i WHERE i.fingerprint = ? AND {where}"
        " ORDER BY i.created_at, i.id LIMIT 1",
        (fp, key),
    ).fetchone()
    if row is None:
        row = c.execute(
            f"SELECT {columns} FROM item_aliases a JOIN items i ON i.id = a.item_id"
            f" WHERE a.fingerprint = ? AND {where} ORDER BY i.created_at, i.id LIMIT 1",
            (fp, key),
        ).fetchone()
    return row  # type: ignore[no-any-return]


def _merged_citation(existing: list[str], cited: Citation, draft: ItemDraft) -> tuple[list[str], Citation]:
    """The citation of an item a draft restates. Cited turns add up; an attribution to a chunk is
    a stand-in for a citation: it never widens an item's cited turns (a model restating a known item
    while citing another chunk's turns says nothing of this chunk's), and the first real citation
    replaces it."""
    if draft.cited is Citation.CHUNK:
        return existing, cited
    if cited is Citation.CHUNK:
        return _union([], draft.turn_ids), Citation.TURNS
    return _union(existing, draft.turn_ids), Citation.TURNS


def _supersede(c: sqlite3.Connection, session_id: str, workspace: str | None, draft: ItemDraft, item_id: str,
               extractor: str, now: float) -> None:
    """The link a draft names (`supersedes`), when it names another item of the workspace and
    makes no loop; a model's bad id is dropped, never the chunk."""
    if not draft.supersedes:
        return
    where, key = _scope(session_id, workspace)
    if c.execute(f"SELECT 1 FROM items i WHERE i.id = ? AND {where}", (draft.supersedes, key)).fetchone() is None:
        return
    said_by: SaidBy = "heuristic" if extractor == "heuristic" else "model"
    with contextlib.suppress(SupersessionRefused):  # itself, or a loop: the item stands, unlinked
        link(c, draft.supersedes, item_id, said_by, draft.supersedes_reason, draft.turn_ids[0], now)


def _check(c: sqlite3.Connection, item_id: str, draft: ItemDraft, extractor: str, now: float) -> None:
    """The check a draft proposes (checkpoint.checks), stored proposed with its item."""
    if draft.check is None:
        return
    from checkpoint.checks.model import CheckProblem, read_check
    from checkpoint.store.checks import store_check

    with contextlib.suppress(CheckProblem):  # validated by ItemDraft already; never the chunk's failure
        store_check(c, item_id, read_check(draft.check), "heuristic" if extractor == "heuristic" else "model",
                    "proposed", now)


def store_items(c: sqlite3.Connection, session_id: str, extraction: Extraction, now: float) -> int:
    """Write an answer's items, inside the caller's transaction. Returns items added: a restated item
    (same fingerprint in the workspace, or `same_as` naming an item of the workspace) updates the
    existing one instead, which then cites the turns of every session that said it."""
    added = 0
    touched: list[str] = []  # the items this answer stored or restated, and the questions they answer
    named: dict[str, str] = {}
    row = c.execute("SELECT workspace, cwd FROM sessions WHERE id = ?", (session_id,)).fetchone()
    workspace = (row[0] or workspace_of(row[1])) if row else None
    for draft in extraction.items:
        fp = fingerprint(draft.kind, draft.statement)
        existing = _same_item(c, session_id, workspace, fp, draft.kind, draft.same_as)
        if existing:
            turn_ids, cited = _merged_citation(orjson.loads(existing[1]), Citation(existing[3]), draft)
            files = _union(orjson.loads(existing[2]), draft.files)
            file_sources = _merged_sources(orjson.loads(existing[4]), draft.file_sources)
            c.execute(
                "UPDATE items SET turn_ids = ?, cited = ?, files = ?, rationale = coalesce(rationale, ?),"
                " confidence = max(confidence, ?), updated_at = ?,"
                # the rationale it may bring is judged with it: a held draft holds the item it fills in
                " held = held OR (? AND rationale IS NULL),"
                # said again as a lasting rule, a one-off order becomes one
                " lasting = max(lasting, ?), file_sources = ? WHERE id = ?",
                (orjson.dumps(turn_ids).decode(), cited.value, orjson.dumps(files).decode(), draft.rationale,
                 draft.confidence, now, int(draft.held), int(draft.lasting), orjson.dumps(file_sources).decode(),
                 existing[0]),
            )
            # Worded differently: the wording now leads to the same item, with or without same_as.
            c.execute(
                "INSERT INTO item_aliases (session_id, fingerprint, item_id) VALUES (?,?,?)"
                " ON CONFLICT DO NOTHING",
                (session_id, fp, existing[0]),
            )
            _supersede(c, session_id, workspace, draft, existing[0], extraction.extractor, now)
            _check(c, existing[0], draft, extraction.extractor, now)
            touched.append(existing[0])
            if draft.answers:
                named[existing[0]] = draft.answers
            continue
        item_id = hashlib.blake2b(f"{session_id}|{fp}".encode(), digest_size=6).hexdigest()
        c.execute(
            "INSERT INTO items (id, session_id, fingerprint, kind, statement, rationale, confidence,"
            " turn_ids, cited, files, extractor, first_chunk, created_at, updated_at, workspace, held, lasting,"
            " file_sources) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (item_id, session_id, fp, draft.kind.value, draft.statement, draft.rationale,
             draft.confidence, orjson.dumps(_union([], draft.turn_ids)).decode(), draft.cited.value,
             orjson.dumps(_union([], draft.files)).decode(), extraction.extractor,
             extraction.chunk_id, now, now, workspace, int(draft.held), int(draft.lasting),
             orjson.dumps(draft.file_sources).decode()),
        )
        _supersede(c, session_id, workspace, draft, item_id, extraction.extractor, now)
        _check(c, item_id, draft, extraction.extractor, now)
        touched.append(item_id)
        if draft.answers:
            named[item_id] = draft.answers
        added += 1
    mark_answered(c, session_id, list(dict.fromkeys(touched)), named)
    return added


ITEM_HOLDS = "item_holds"  # the back-fill's name in `backfills`

# (statement, rationale) -> whether the item is held for the user's review (checkpoint.extract.held)
HeldItem = Callable[[str, str | None], bool]


class ItemsMixin(StoreBase):
    """What the extractor is shown of the items so far, and the user's triage of them."""

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

    def set_item_state(self, item_id: str, state: ItemState) -> bool:
        """Accept, dismiss, or put back to new, as this user. Accepting a held item releases it to agents
        (they read search.RELEASED: not held, or accepted here); the flag stays, so it is held again if
        put back. Only this is acceptance here: a decision record's status is its author's claim."""
        with self.transaction() as c:
            changed = bool(c.execute("UPDATE items SET state = ?, accepted_here = ? WHERE id = ?",
                                     (state.value, int(state is ItemState.ACCEPTED), item_id)).rowcount)
            row = c.execute("SELECT session_id FROM items WHERE id = ?", (item_id,)).fetchone()
            if changed and state is ItemState.ACCEPTED and row:
                mark_answered(c, row[0], [item_id])  # an accepted decision answers the questions it takes up
            return changed

    def holds_backfill_due(self) -> bool:
        return self.conn.execute("SELECT 1 FROM backfills WHERE name = ?", (ITEM_HOLDS,)).fetchone() is not None

    def backfill_holds(self, held: HeldItem) -> int:
        """Judge the items stored before items could be held (`held` decides, from statement and
        rationale), once: in one transaction with the end of the back-fill. Returns the items held."""
        if not self.holds_backfill_due():
            return 0
        with self.transaction() as c:
            if c.execute("DELETE FROM backfills WHERE name = ?", (ITEM_HOLDS,)).rowcount == 0:
                return 0  # another process did it meanwhile
            ids = [(i,) for i, st, why in c.execute("SELECT id, statement, rationale FROM items") if held(st, why)]
            c.executemany("UPDATE items SET held = 1 WHERE id = ?", ids)
        return len(ids)
