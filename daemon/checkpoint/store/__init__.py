"""The SQLite store: the schema, its migrations, and every read and write of the database.

The storage rule, stated once:
- Only the store writes SQL. Every other module asks the store; nothing else opens the database.
- Markers move only in `commit_extraction`: a chunk's items, its state and the session's watermark
  change in one transaction.
- The watermark is derived from chunk states (the end of the contiguous captured prefix, as
  checkpoint.ledger defines it), never from what was fed in or sent.

The parts, each a mixin over one shared connection and clock (connection.StoreBase): schema
(migrations), connection (opening, pragmas, transactions; read-only for the agent front ends),
ingest (files and turns), chunks (the chunk ledger's writes and what is due), items (items written
with their chunk, triage), queries (reads), agent_reads (bounded reads for the MCP server and the
hooks), scope (which sessions belong to workspace folders: the one rule), search (full-text, over
items), supersessions (an item replaced by a later one), shared (decision records of a repository as items),
forgetting, runs (usage and the record of each run), agent_lines (statements as an agent is shown
them, for the pre-edit hook's narrow path).
"""

from __future__ import annotations

from checkpoint.config import LEASE_SECONDS
from checkpoint.store.agent_lines import AgentLinesMixin
from checkpoint.store.agent_reads import AgentReadsMixin
from checkpoint.store.checks import CheckRow, ChecksMixin
from checkpoint.store.chunks import ChunksMixin
from checkpoint.store.connection import StoreBase, StoreFault, StoreUnavailable, fault_message, read_only_file
from checkpoint.store.edits import EditsMixin
from checkpoint.store.forgetting import ForgettingMixin
from checkpoint.store.ingest import PROBLEMS_PER_FILE, IngestMixin
from checkpoint.store.items import ItemsMixin, fingerprint
from checkpoint.store.migrations import MIGRATIONS, Migration
from checkpoint.store.queries import QueriesMixin
from checkpoint.store.rows import (
    CursorMoved,
    FileRow,
    Ingested,
    ItemPage,
    ItemSummary,
    LeaseLost,
    RunRecord,
    SearchResult,
    SourceExcerpt,
    WindowTurn,
)
from checkpoint.store.runs import RunsMixin
from checkpoint.store.said import SaidMixin
from checkpoint.store.search import SearchMixin
from checkpoint.store.shared import SharedMixin, SharedProblem, SyncReport
from checkpoint.store.supersessions import Supersession, SupersessionRefused, SupersessionsMixin

__all__ = [
    "LEASE_SECONDS",
    "MIGRATIONS",
    "PROBLEMS_PER_FILE",
    "CheckRow",
    "CursorMoved",
    "FileRow",
    "Ingested",
    "ItemPage",
    "ItemSummary",
    "LeaseLost",
    "Migration",
    "RunRecord",
    "SearchResult",
    "SharedProblem",
    "SourceExcerpt",
    "Store",
    "StoreFault",
    "StoreUnavailable",
    "Supersession",
    "SupersessionRefused",
    "SyncReport",
    "WindowTurn",
    "fault_message",
    "fingerprint",
    "read_only_file",
]


class Store(
    IngestMixin, ChunksMixin, ItemsMixin, SupersessionsMixin, AgentReadsMixin, SearchMixin, SaidMixin, QueriesMixin,
    ForgettingMixin, RunsMixin, EditsMixin, SharedMixin, AgentLinesMixin, ChecksMixin, StoreBase,
):
    """One SQLite database. Safe to open from several processes (WAL, busy timeout, leases)."""
