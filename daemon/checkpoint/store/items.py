"""Items: written with the chunk they came from (`store_items`, inside commit_extraction's
transaction), merged when restated, and triaged (accepted, dismissed) by the user."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

import orjson

from checkpoint.model import Citation, ItemKind, ItemState, KnownItem
from checkpoint.store.connection import StoreBase

if TYPE_CHECKING:
    from checkpoint.answer import Extraction, ItemDraft


def fingerprint(kind: ItemKind, statement: str) -> str:
    """Same kind and same words (case, spacing and punctuation aside) are the same item."""
    norm = re.sub(r"[^\w]+", " ", statement.lower()).strip()
    return hashlib.blake2b(f"{kind}|{norm}".encode(), digest_size=10).hexdigest()


def _union(existing: list[str], more: Sequence[str]) -> list[str]:
    seen = dict.fromkeys(existing)
    seen.update(dict.fromkeys(more))
    return list(seen)


def _same_item(
    c: sqlite3.Connection, session_id: str, fp: str, kind: ItemKind, same_as: str | None
) -> tuple[str, str, str, str] | None:
    """The item a draft restates: the one it names (same session and kind), else the one with its
    fingerprint or a wording already merged into it. (id, turn_ids, files, cited) or None."""
    if same_as:
        row = c.execute(
            "SELECT id, turn_ids, files, cited FROM items WHERE id = ? AND session_id = ? AND kind = ?",
            (same_as, session_id, kind.value),
        ).fetchone()
        if row:
            return row  # type: ignore[no-any-return]
    row = c.execute(
        "SELECT id, turn_ids, files, cited FROM items WHERE session_id = ? AND fingerprint = ?", (session_id, fp)
    ).fetchone()
    if row is None:
        row = c.execute(
            "SELECT i.id, i.turn_ids, i.files, i.cited FROM item_aliases a JOIN items i ON i.id = a.item_id"
            " WHERE a.session_id = ? AND a.fingerprint = ?",
            (session_id, fp),
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


def store_items(c: sqlite3.Connection, session_id: str, extraction: Extraction, now: float) -> int:
    """Write an answer's items, inside the caller's transaction. Returns items added: a restated item
    (same fingerprint, or `same_as` naming an item of the session) updates the existing one instead."""
    added = 0
    for draft in extraction.items:
        fp = fingerprint(draft.kind, draft.statement)
        existing = _same_item(c, session_id, fp, draft.kind, draft.same_as)
        if existing:
            turn_ids, cited = _merged_citation(orjson.loads(existing[1]), Citation(existing[3]), draft)
            files = _union(orjson.loads(existing[2]), draft.files)
            c.execute(
                "UPDATE items SET turn_ids = ?, cited = ?, files = ?, rationale = coalesce(rationale, ?),"
                " confidence = max(confidence, ?), updated_at = ? WHERE id = ?",
                (orjson.dumps(turn_ids).decode(), cited.value, orjson.dumps(files).decode(), draft.rationale,
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
            " turn_ids, cited, files, extractor, first_chunk, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (item_id, session_id, fp, draft.kind.value, draft.statement, draft.rationale,
             draft.confidence, orjson.dumps(_union([], draft.turn_ids)).decode(), draft.cited.value,
             orjson.dumps(_union([], draft.files)).decode(), extraction.extractor,
             extraction.chunk_id, now, now),
        )
        added += 1
    return added


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
        with self.transaction() as c:
            return bool(c.execute("UPDATE items SET state = ? WHERE id = ?", (state.value, item_id)).rowcount)
