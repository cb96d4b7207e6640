"""What extraction costs (per session and per run) and the record of each run."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from checkpoint.model import Usage
from checkpoint.store.connection import StoreBase
from checkpoint.store.rows import RunRecord


def add_usage(c: sqlite3.Connection, session_id: str, usage: Usage, now: float) -> None:
    """Add to the session's usage, inside the caller's transaction."""
    if not usage.requests and not usage.tokens:
        return
    c.execute(
        "INSERT INTO session_usage (session_id, requests, input_tokens, output_tokens,"
        " cache_creation_input_tokens, cache_read_input_tokens, cost_usd, updated_at)"
        " VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(session_id) DO UPDATE SET"
        " requests = requests + excluded.requests, input_tokens = input_tokens + excluded.input_tokens,"
        " output_tokens = output_tokens + excluded.output_tokens,"
        " cache_creation_input_tokens = cache_creation_input_tokens + excluded.cache_creation_input_tokens,"
        " cache_read_input_tokens = cache_read_input_tokens + excluded.cache_read_input_tokens,"
        " cost_usd = cost_usd + excluded.cost_usd, updated_at = excluded.updated_at",
        (session_id, usage.requests, usage.input_tokens, usage.output_tokens,
         usage.cache_creation_input_tokens, usage.cache_read_input_tokens, usage.cost_usd, now),
    )



class RunsMixin(StoreBase):
    """Usage recorded outside a commit, and runs."""

    def record_usage(self, session_id: str, usage: Usage) -> None:
        """Usage of an answer that could not be committed (its lease was lost): it was still billed."""
        with self.transaction() as c:
            add_usage(c, session_id, usage, self.clock())

    def start_run(self, extractor: str) -> int:
        with self.transaction() as c:
            cur = c.execute("INSERT INTO runs (started_at, extractor) VALUES (?, ?)", (self.clock(), extractor))
            return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, tried: int, captured: int, failed: int, items: int, usage: Usage,
                   note: str | None = None, resplit: int = 0, lost: int = 0, attributed: int = 0,
                   dropped: Mapping[str, int] | None = None) -> None:
        with self.transaction() as c:
            c.execute(
                "UPDATE runs SET finished_at = ?, chunks_tried = ?, chunks_captured = ?, chunks_failed = ?,"
                " items_added = ?, input_tokens = ?, output_tokens = ?, cache_creation_input_tokens = ?,"
                " cache_read_input_tokens = ?, requests = ?, note = ?, cost_usd = ?, chunks_resplit = ?,"
                " chunks_lost = ?, items_attributed = ?, items_dropped = ? WHERE id = ?",
                (self.clock(), tried, captured, failed, items, usage.input_tokens, usage.output_tokens,
                 usage.cache_creation_input_tokens, usage.cache_read_input_tokens, usage.requests, note,
                 usage.cost_usd, resplit, lost, attributed, json.dumps(dict(sorted((dropped or {}).items()))),
                 run_id),
            )

    def runs(self, limit: int = 20) -> list[RunRecord]:
        """The latest runs, newest first, with what each cost."""
        # the columns in RunRecord's field order
        return [RunRecord._make([*row[:-1], json.loads(row[-1])]) for row in self.conn.execute(
            "SELECT id, started_at, finished_at, extractor, chunks_tried, chunks_captured, chunks_failed,"
            " chunks_lost, chunks_resplit, items_added, items_attributed, requests, input_tokens, output_tokens,"
            " cache_creation_input_tokens, cache_read_input_tokens, cost_usd, note, items_dropped"
            " FROM runs ORDER BY id DESC LIMIT ?",
            (limit,),
        )]


