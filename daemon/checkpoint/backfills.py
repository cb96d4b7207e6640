"""Back-fills: what a migration (store/migrations.py) cannot derive in SQL, derived once when a front
end opens the store for writing, not on every scan. Each is a named unit registered with `@backfill`
(as simonw/llm registers its `@migration` functions); the migration that makes one necessary leaves
its name in the store's `backfills` table, and running it removes the name in the same transaction as
its writes, so each runs once whichever process opens the database first.

They live above the store because what they derive is not the store's to know: the agents' formats
of a stored turn's tool calls (the sources), the rule that holds an item for review (extract/held.py).
Until the holds back-fill has run (a database only ever opened read-only since the upgrade), the
store's reads for agents judge each item themselves (store/agent_reads.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from checkpoint.store import Store

Backfill = Callable[[Store], int]  # runs the back-fill if still due; returns the rows it wrote
BACKFILLS: dict[str, Backfill] = {}


def backfill(name: str) -> Callable[[Backfill], Backfill]:
    """Register a back-fill under the name its migration leaves in `backfills`."""
    def register(fn: Backfill) -> Backfill:
        if name in BACKFILLS:
            raise ValueError(f"back-fill {name!r} registered twice")
        BACKFILLS[name] = fn
        return fn
    return register


@backfill("turn_edits")
def turn_edits(store: Store) -> int:
    """The edits of the turns stored before the store kept edits (migration "turn edits")."""
    from checkpoint.sources.stored_edits import TOOL_CALL_MARK, stored_edits  # the readers: on use only

    return store.backfill_edits(stored_edits, TOOL_CALL_MARK)


@backfill("item_holds")
def item_holds(store: Store) -> int:
    """The hold of the items stored before items could be held (migration "held items")."""
    from checkpoint.extract.held import held_for_review  # its patterns compile on import: on use only

    return store.backfill_holds(held_for_review)


def run_due(store: Store) -> dict[str, int]:
    """Every back-fill the database still has due, each once; what each wrote, by name."""
    return {name: BACKFILLS[name](store) for name in store.backfills_due() if name in BACKFILLS}


def open_store(path: Path | str, **options: Any) -> Store:
    """The store opened for writing (migrated on open) with its due back-fills run."""
    store = Store(path, **options)
    try:
        run_due(store)
    except BaseException:
        store.close()
        raise
    return store
