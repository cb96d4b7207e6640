"""One uninterrupted scan of the same files into a database of its own: what concurrent, killed or
daemon-driven ingestion must come out equal to."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from checkpoint import pipeline
from checkpoint.config import CHUNK_TOKENS, Settings
from checkpoint.store import Store


def clean_scan(db: Path, sources: Sequence[Path], chunk_tokens: int = CHUNK_TOKENS) -> pipeline.ScanReport:
    store = Store(db)
    try:
        return pipeline.scan(store, Settings(db=db, sources=list(sources), chunk_tokens=chunk_tokens))
    finally:
        store.close()
