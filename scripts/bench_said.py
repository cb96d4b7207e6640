"""What recall of everything said (`checkpoint search --said`, checkpoint.store.said) costs on a real
corpus, beside the scan that stores the turns: the scan's wall time, the first search's (which builds
the index of every said turn), a search's once the index is built, and the database's size before and
after the index.

    .venv/bin/python -m scripts.bench_said [--corpus DIR] [--json PATH]

The corpus is laid out as the agents keep it (a `claude` folder of projects and a `codex` folder of
sessions, as ../shared/samples/real is) and read in place; the database goes under a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.store import Store

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "real"
QUERIES = ("test", "cache layer", "decided", "database schema", "hook", "error handling")


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def measure(corpus: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "c.db"
        settings = Settings(db=db, sources=[corpus / "claude", corpus / "codex"])
        store = Store(db)
        started = time.perf_counter()
        pipeline.scan(store, settings)
        scan_s = time.perf_counter() - started
        turns, said = store.conn.execute(
            "SELECT count(*), sum(role IN ('user', 'assistant')) FROM turns").fetchone()
        said_bytes = store.conn.execute(
            "SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM turns WHERE role IN ('user', 'assistant')"
        ).fetchone()[0]
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        before = _size(db)
        started = time.perf_counter()
        first = store.search_said("decided")
        first_s = time.perf_counter() - started
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after = _size(db)
        later = []
        for _ in range(5):
            for query in QUERIES:
                started = time.perf_counter()
                store.search_said(query)
                later.append(time.perf_counter() - started)
        store.close()
    return {"corpus": str(corpus), "turns": turns, "said_turns": said, "said_mb": said_bytes / 1e6,
            "scan_s": scan_s, "first_search_s": first_s, "indexed": first.indexed,
            "search_median_ms": statistics.median(later) * 1000, "search_max_ms": max(later) * 1000,
            "db_mb_before_index": before / 1e6, "db_mb_after_index": after / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    figures = measure(args.corpus)
    print(f"{figures['turns']:,} turns ({figures['said_turns']:,} said, {figures['said_mb']:.1f} MB of what was said)")
    print(f"scan:                     {figures['scan_s']:.2f} s")
    print(f"first search (indexes {figures['indexed']:,} turns): {figures['first_search_s']:.2f} s")
    print(f"search once indexed:      median {figures['search_median_ms']:.1f} ms, "
          f"max {figures['search_max_ms']:.1f} ms")
    print(f"database:                 {figures['db_mb_before_index']:.1f} MB -> {figures['db_mb_after_index']:.1f} MB "
          "with the index")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
