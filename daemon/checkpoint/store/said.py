"""Recall without a model: full-text search over what the user and the assistant said in every session
(not tool output, not reasoning), in any script. `checkpoint search --said` and the MCP tool
`search_said` answer from it, with the session, its agent, the turn's time and its transcript line.

The index (`said_search`, migrations.py's "said search" migration) is FTS5 with the trigram tokenizer:
any three characters of a word or of a sentence without spaces (Chinese, Japanese) find it, case
aside. It is contentless (the text is stored once, in `turns`, redacted as stored) and keyed by
`said_rows.row`, not by the turns' rowids, which VACUUM (run by `forget`) may renumber. Forgetting a
session takes its rows out by trigger.

Off the scan's hot path: nothing is indexed when turns are stored. Each search first indexes what
was stored since the last one, per session from the last seq indexed (`said_progress`), in one
write transaction; `index_said` can be called after a scan too. A database opened read-only is
searched as far as it was indexed, and the rest by a plain scan of the new turns.

A query is words, never FTS5 syntax: each word (or run of characters) of three characters or more is
a quoted trigram string, all of them required; shorter ones (two Chinese characters) are matched
with instr() over the turns the others found, or over every said turn when nothing else narrows.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from checkpoint.store.queries import QueriesMixin

SAID_ROLES = ("user", "assistant")
SNIPPET_CHARS = 240
_TERM = re.compile(r"[^\s\"'`]+")
_EDGE = re.compile(r"^[^\w]+|[^\w]+$")
MAX_TERMS = 16


@dataclass(frozen=True)
class SaidHit:
    session_id: str
    agent: str
    cwd: str | None
    role: str
    timestamp: str | None
    path: str  # the transcript
    line: int  # its line (1-based)
    turn_id: str
    snippet: str  # the text around the first match, as stored (redacted)
    score: float

    def as_json(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "agent": self.agent, "cwd": self.cwd, "role": self.role,
                "timestamp": self.timestamp, "transcript": self.path, "line": self.line, "turn_id": self.turn_id,
                "snippet": self.snippet}


@dataclass(frozen=True)
class SaidResult:
    terms: tuple[str, ...]
    hits: tuple[SaidHit, ...]
    indexed: int  # turns added to the index by this search

    def as_json(self) -> dict[str, Any]:
        return {"terms": list(self.terms), "hits": [h.as_json() for h in self.hits]}


def said_terms(text: str) -> list[str]:
    """The words of a query, in order, each once, punctuation at their edges aside (a sentence of CJK
    characters is one term: trigram matching finds it inside a longer one)."""
    seen: dict[str, str] = {}
    for raw in _TERM.findall(unicodedata.normalize("NFKC", text)):
        word = _EDGE.sub("", raw)
        if word:
            seen.setdefault(word.casefold(), word[:128])
        if len(seen) == MAX_TERMS:
            break
    return list(seen.values())


def snippet(text: str, terms: Sequence[str], chars: int = SNIPPET_CHARS) -> str:
    """The text around the first term found, on one line, cut to about `chars` characters."""
    low = text.casefold()
    at = min((i for i in (low.find(t.casefold()) for t in terms) if i >= 0), default=0)
    start = max(0, at - chars // 3)
    piece = " ".join(text[start:start + chars].split())
    return ("…" if start else "") + piece + ("…" if start + chars < len(text) else "")


class SaidMixin(QueriesMixin):
    def index_said(self) -> int:
        """Index the user's and assistant's turns stored since the last call; returns how many."""
        with self.transaction() as c:
            return _index(c)

    def search_said(self, text: str, *, workspaces: Sequence[str] | None = None, limit: int = 20) -> SaidResult:
        """What was said matching every word of `text`, best first (bm25; the newest first among equals)."""
        terms = said_terms(text)
        if not terms or limit <= 0:
            return SaidResult(tuple(terms), (), 0)
        try:
            indexed = self.index_said()
            pending = False
        except sqlite3.OperationalError:  # a read-only database: what is not indexed is scanned
            indexed, pending = 0, True
        long_terms = [t for t in terms if len(t) >= 3]
        short = [t for t in terms if len(t) < 3]
        clauses, args = ["t.role IN ('user', 'assistant')"], []
        for term in short:
            clauses.append("instr(lower(t.text), ?) > 0")
            args.append(term.casefold())
        if workspaces is not None:
            if not workspaces:
                return SaidResult(tuple(terms), (), indexed)
            clause, more = self._scope_clause(workspaces)
            clauses.append(clause)
            args += more
        columns = ("t.session_id, s.agent, s.cwd, t.role, t.ts, t.source_path, t.line_no, t.id, t.text")
        rows: list[tuple[Any, ...]] = []
        if long_terms:
            expression = " ".join('"' + t.replace('"', '""') + '"' for t in long_terms)
            rows = self.conn.execute(
                f"SELECT {columns}, bm25(said_search) AS score FROM said_search"
                " JOIN said_rows r ON r.row = said_search.rowid JOIN turns t ON t.id = r.turn_id"
                " JOIN sessions s ON s.id = t.session_id"
                f" WHERE said_search MATCH ? AND {' AND '.join(clauses)} ORDER BY score, t.ts DESC LIMIT ?",
                [expression, *args, limit]).fetchall()
        if not long_terms or pending:
            like = [*clauses, *("instr(lower(t.text), ?) > 0" for _ in long_terms)]
            more_args = [*args, *(t.casefold() for t in long_terms)]
            if pending and long_terms:
                like.append("NOT EXISTS (SELECT 1 FROM said_rows r WHERE r.turn_id = t.id)")
            rows += self.conn.execute(
                f"SELECT {columns}, 0.0 FROM turns t JOIN sessions s ON s.id = t.session_id"
                f" WHERE {' AND '.join(like)} ORDER BY t.ts DESC LIMIT ?", [*more_args, limit]).fetchall()
        hits = tuple(SaidHit(session_id=r[0], agent=r[1], cwd=r[2], role=r[3], timestamp=r[4], path=r[5],
                             line=int(r[6]), turn_id=r[7], snippet=snippet(r[8], terms), score=float(r[9]))
                     for r in rows[:limit])
        return SaidResult(tuple(terms), hits, indexed)


def _index(c: sqlite3.Connection) -> int:
    """Index, per session, the said turns after the last seq indexed."""
    added = 0
    due = c.execute(
        "SELECT s.id, coalesce(p.seq, 0) FROM sessions s LEFT JOIN said_progress p ON p.session_id = s.id"
        " WHERE (SELECT max(seq) FROM turns t WHERE t.session_id = s.id) > coalesce(p.seq, 0)").fetchall()
    for session_id, after in due:
        top = c.execute("SELECT max(seq) FROM turns WHERE session_id = ?", (session_id,)).fetchone()[0]
        c.execute("INSERT INTO said_rows (turn_id) SELECT id FROM turns WHERE session_id = ? AND seq > ? AND seq <= ?"
                  " AND role IN ('user', 'assistant') AND text != '' ORDER BY seq", (session_id, after, top))
        added += c.execute(
            "INSERT INTO said_search (rowid, text) SELECT r.row, t.text FROM said_rows r JOIN turns t"
            " ON t.id = r.turn_id WHERE t.session_id = ? AND t.seq > ? AND t.seq <= ?",
            (session_id, after, top)).rowcount
        c.execute("INSERT INTO said_progress (session_id, seq) VALUES (?, ?)"
                  " ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq", (session_id, top))
    return added
