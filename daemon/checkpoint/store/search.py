"""Full-text search over items: the FTS5 index `item_search` (schema.py's "item search" migration,
kept in step with `items` by triggers), ranked by bm25 with a statement match above a rationale
match above a file match.

Whatever the user types is read as words, never as FTS5 syntax: `match_expression` keeps the runs
of letters and digits and quotes each as an FTS5 string, so `"`, `*`, `:`, `-`, `NEAR`, `AND`,
parentheses and column names are plain text and no query can raise an SQL error.

What it costs: bm25 is computed for every row a query matches (a lookup of the row's column sizes
each), ~3 µs a row. A word in most of 100,000 items would take hundreds of milliseconds, so a
query matching more than WINDOW items ranks the newest WINDOW of them (FTS5 walks its matches in
rowid order, newest last, without scoring them), widened when filters leave too few.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, Literal

from checkpoint.model import ChunkInput, ItemKind, KnownItem
from checkpoint.store.items import workspace_of
from checkpoint.store.queries import QueriesMixin
from checkpoint.store.rows import SearchResult

# bm25 weights of the index's columns, in their order: statement, rationale, files.
WEIGHTS = (10.0, 4.0, 2.0)
WINDOW = 500  # a query matching more items than this ranks the newest this many (~3 µs each to score)
MAX_TERMS, MAX_TERM_CHARS = 32, 64  # a pasted page is cut to a query SQLite answers at once
_WORD = re.compile(r"[^\W_]+")  # as the index's tokenizer splits: `_` separates, like punctuation


def query_terms(text: str) -> list[str]:
    """The words of a query, in order, each once (case aside): runs of letters and digits (any
    script, composed as NFKC); punctuation and FTS5 operators' symbols separate words and are not
    searched (a word the tokenizer would drop, like `__`, would make an AND query match nothing)."""
    seen: dict[str, str] = {}
    for word in _WORD.findall(unicodedata.normalize("NFKC", text)):
        seen.setdefault(word.casefold(), word[:MAX_TERM_CHARS])
        if len(seen) == MAX_TERMS:
            break
    return list(seen.values())


def match_expression(terms: list[str], any_term: bool = False, prefix_last: bool = False) -> str | None:
    """The FTS5 MATCH expression for these words: each a quoted string (so `NEAR`, `OR`, `AND` and
    `NOT` are words, not operators), all of them required (or any, `any_term`), the last also as a
    prefix (`prefix_last`: a word being typed). None: no word to search for."""
    if not terms:
        return None
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
    if prefix_last:
        quoted[-1] += "*"
    return (" OR " if any_term else " ").join(quoted)


# Words too common in any transcript to say what a chunk is about.
_STOP = frozenset((
    "that", "this", "with", "from", "have", "will", "what", "when", "where", "which", "there", "their", "they",
    "them", "then", "than", "were", "been", "being", "into", "your", "about", "would", "could", "should",
    "just", "like", "also", "only", "some", "more", "most", "make", "made", "does", "done", "dont", "isnt",
    "here", "need", "want", "used", "using", "uses", "true", "false", "none", "null", "file", "files", "line",
    "lines", "code", "tool", "result", "user", "assistant", "thinking", "each", "other", "because", "after",
    "before", "while", "very", "well", "sure", "okay",
))
CHUNK_TERMS = 12  # the chunk's most frequent words searched for among the workspace's items
CHUNK_FILES = 8  # and the files it touches
# Scoring costs rows x words: a chunk's words rank the newest KNOWN_WINDOW items matching any of
# them (what the workspace decided lately), to keep choosing the known items under 5 ms a chunk.
KNOWN_WINDOW = 200


def chunk_terms(texts: Sequence[str], count: int = CHUNK_TERMS) -> list[str]:
    """What a chunk is about, as search words: its most frequent words of four letters or more,
    common words left out."""
    tally: dict[str, int] = {}
    for text in texts:
        for word in _WORD.findall(text[:20_000].casefold()):
            if len(word) >= 4 and word not in _STOP and not word.isdigit():
                tally[word] = tally.get(word, 0) + 1
    return [w for w, _ in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))[:count]]


def file_expression(paths: Sequence[str]) -> str | None:
    """FTS5 phrases over the `files` column for these paths: each path's last two parts, in order
    (`store/items.py` finds an item about `daemon/checkpoint/store/items.py`, however it was spelled)."""
    phrases = []
    for path in paths:
        words = _WORD.findall("/".join(path.replace("\\", "/").split("/")[-2:]))
        if words:
            phrases.append('"' + " ".join(words) + '"')
    return "files : (" + " OR ".join(phrases) + ")" if phrases else None


def file_clause(file: str) -> tuple[str, list[Any]]:
    """SQL over items `i` that name this file: the same path, or a path ending in `/<file>` (a relative name)."""
    tail = "/" + file.lstrip("/")
    return (
        "EXISTS (SELECT 1 FROM json_each(i.files) f WHERE f.value = ? OR substr(f.value, -?) = ?)",
        [file, len(tail), tail],
    )


# Items an agent may be shown: not held for the user's review (checkpoint.extract.held), or accepted.
# Released to agents: not held, or accepted by this user (a record's own "accepted" is its author's claim).
RELEASED = "(i.held = 0 OR i.accepted_here = 1)"
# Items that hold for the project: not an order about one task (checkpoint.extract.one_off).
LASTING = "i.lasting = 1"


class SearchMixin(QueriesMixin):
    def search(
        self, text: str, *, kind: ItemKind | str | None = None, workspaces: Sequence[str] | None = None,
        limit: int = 20, include_dismissed: bool = False, file: str | None = None, include_superseded: bool = True,
        count: bool = False, released_only: bool = False, lasting_only: bool = False,
    ) -> SearchResult:
        """Items matching the words of `text`, best first. Every word must match (the last one also
        as the start of a longer word, when the words as typed find fewer than `limit`); when no
        item has them all, any word may, and the result says so. `workspaces`: only items of
        sessions that belong to one of these folders (scope.py's rule). `released_only`: what an agent
        may be shown (RELEASED). `lasting_only`: no order about one task (LASTING). A query with no word
        in it finds nothing."""
        terms = query_terms(text)
        if not terms or limit <= 0:
            return SearchResult(terms=tuple(terms), matched="all", hits=())
        clauses: list[str] = ["item_search MATCH ?", "item_search.rowid >= ?"]
        args: list[Any] = []
        if not include_dismissed:
            clauses.append("i.state != 'dismissed'")
        if kind:
            clauses.append("i.kind = ?")
            args.append(str(kind))
        if not include_superseded:
            clauses.append("NOT EXISTS (SELECT 1 FROM supersessions WHERE old_id = i.id)")
        if released_only:
            clauses.append(RELEASED)
        if lasting_only:
            clauses.append(LASTING)
        if file:
            clause, more = file_clause(file)
            clauses.append(clause)
            args += more
        if workspaces is not None:
            if not workspaces:
                return SearchResult(terms=tuple(terms), matched="all", hits=())
            clause, more = self._scope_clause(workspaces)
            clauses.append(clause)
            args += more
        sql = (
            f"SELECT r.item_id, bm25(item_search, {', '.join(map(str, WEIGHTS))}) AS score"
            " FROM item_search JOIN item_search_rows r ON r.row = item_search.rowid"
            " JOIN items i ON i.id = r.item_id JOIN sessions s ON s.id = i.session_id"
            " WHERE " + " AND ".join(clauses) + " ORDER BY score, item_search.rowid DESC LIMIT ?"
        )
        matched: Literal["all", "any"] = "all"
        expression = match_expression(terms)
        rows = self._ranked(sql, expression, args, limit)
        if len(rows) < limit:
            typed_expression = match_expression(terms, prefix_last=True)
            typed = self._ranked(sql, typed_expression, args, limit)
            if len(typed) > len(rows):
                rows, expression = typed, typed_expression
        if not rows and len(terms) > 1:
            matched, expression = "any", match_expression(terms, any_term=True)
            rows = self._ranked(sql, expression, args, limit)
        records = {r.id: r for r in self.items(ids=[item_id for item_id, _ in rows], include_dismissed=True)}
        hits = tuple((records[item_id], score) for item_id, score in rows if item_id in records)
        total = len(hits)
        if count and len(rows) == limit:  # there may be more than were ranked: how many, for "left out"
            counted = sql.split(" FROM ", 1)[1].split(" ORDER BY ")[0]
            total = int(self.conn.execute("SELECT count(*) FROM " + counted, [expression, 0, *args]).fetchone()[0])
        return SearchResult(terms=tuple(terms), matched=matched, hits=hits, total=total)

    def _ranked(self, sql: str, expression: str | None, args: list[Any], limit: int) -> list[tuple[str, float]]:
        """The best `limit` rows among the newest `window` matches, the window widened until the
        filters leave `limit` rows or it holds every match."""
        window = WINDOW
        while True:
            row = self.conn.execute(
                "SELECT rowid FROM item_search WHERE item_search MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (expression, window - 1),
            ).fetchone()
            floor = row[0] if row else 0  # 0: fewer matches than the window, score them all
            rows = [(r[0], float(r[1])) for r in self.conn.execute(sql, [expression, floor, *args, limit])]
            if floor == 0 or len(rows) >= limit:
                return rows
            window *= 8

    def known_items_for(self, chunk: ChunkInput, limit: int) -> list[KnownItem]:
        """The items a model is shown with a chunk, so that a restatement (or a reversal) of one
        made in any session of the workspace points at it: first those about the files the chunk
        touches, then those matching its most frequent words (bm25, among the newest KNOWN_WINDOW
        that match), then the workspace's latest. Dismissed and superseded items are left out.
        One statement: it runs before every chunk is sent."""
        if limit <= 0:
            return []
        workspace = workspace_of(chunk.cwd)
        scope, key = ("i.workspace = ?", workspace) if workspace else ("i.session_id = ?", chunk.session_id)
        current = f"{scope} AND i.state != 'dismissed' AND NOT EXISTS (SELECT 1 FROM supersessions WHERE old_id = i.id)"
        files = list(dict.fromkeys(f for t in chunk.turns for f in t.files))[:CHUNK_FILES]
        expressions = [e for e in (file_expression(files),
                                   match_expression(chunk_terms([t.text for t in chunk.turns]), any_term=True)) if e]
        arms, args = [], []
        for tier, expression in enumerate(expressions):
            arms.append(
                f"SELECT * FROM (SELECT i.id, i.kind, i.statement, {tier} AS tier,"
                f" bm25(item_search, {', '.join(map(str, WEIGHTS))}) AS score"
                " FROM item_search JOIN item_search_rows r ON r.row = item_search.rowid"
                " JOIN items i ON i.id = r.item_id"
                " WHERE item_search MATCH ? AND item_search.rowid >= coalesce((SELECT rowid FROM item_search"
                " WHERE item_search MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?), 0)"
                f" AND {current} ORDER BY score LIMIT ?)"
            )
            args += [expression, expression, KNOWN_WINDOW - 1, key, limit]
        arms.append(
            f"SELECT * FROM (SELECT i.id, i.kind, i.statement, {len(expressions)} AS tier, -i.updated_at AS score"
            f" FROM items i WHERE {current} ORDER BY i.updated_at DESC LIMIT ?)"
        )
        args += [key, limit]
        chosen: dict[str, KnownItem] = {}
        for item_id, kind, statement, _, _ in self.conn.execute(
            " UNION ALL ".join(arms) + " ORDER BY tier, score", args
        ):
            if len(chosen) == limit:
                break
            chosen.setdefault(item_id, KnownItem(id=item_id, kind=ItemKind(kind), statement=statement[:200]))
        return list(chosen.values())
