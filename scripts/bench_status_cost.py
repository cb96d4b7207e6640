"""The CPU cost of one `checkpoint/status` snapshot (server.status.snapshot, in this process) over many
workspace sessions, as the daemon builds it: every session's counts read again (before issue 40),
against the counts kept and re-read only for the sessions the change feed names (status_counts.py).

    .venv/bin/python -m scripts.bench_status_cost [--workspace-sessions 3000] [--others 2000] [--grow 5]

Builds a database through the store's own writes (sessions of 4 turns, one chunk each), then, each
round, appends a turn to GROW workspace sessions and times one snapshot each way (CPU time of this
thread, median of ROUNDS). Prints figures, asserts nothing."""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from checkpoint.model import FileCursor, Role, ScannedTurn, SessionInfo, TurnDraft
from checkpoint.server.features.status import snapshot
from checkpoint.server.folders import Folders
from checkpoint.status_counts import CountsCache
from checkpoint.status_scope import FolderSessionsCache
from checkpoint.store import Store

ROUNDS = 15


def _append(store: Store, session_id: str, cwd: str, seq: int) -> None:
    draft = TurnDraft(id=f"{session_id}-{seq}", role=Role.USER if seq % 2 == 0 else Role.ASSISTANT,
                      text=f"turn {seq} of {session_id}", timestamp=f"2026-11-01T10:00:{seq % 60:02d}Z")
    store.ingest(FileCursor(f"/t/{session_id}.jsonl", offset=seq), "claude", session_id, False, {},
                 [ScannedTurn(draft, seq, 10, 5)], SessionInfo(id=session_id, agent="claude", cwd=cwd),
                 Counter(), Counter(), [], chunk_tokens=16_000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace-sessions", type=int, default=3000)
    parser.add_argument("--others", type=int, default=2000)
    parser.add_argument("--grow", type=int, default=5)
    parser.add_argument("--folders", type=int, default=1_000_000,
                        help="distinct folders sessions run in (default: one each, as scripts.bench_status's corpus)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-status-cost-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        store = Store(Path(tmp) / "c.db")
        sessions = [(f"w{n:05d}", str(ws / f"p{n % args.folders}")) for n in range(args.workspace_sessions)]
        sessions += [(f"o{n:05d}", f"/elsewhere/p{n % args.folders}") for n in range(args.others)]
        with store.grouped_commits():
            for session_id, cwd in sessions:
                for seq in range(1, 5):
                    _append(store, session_id, cwd, seq)
        folders = Folders([ws.as_uri()])
        cache, kept_folders = CountsCache(), FolderSessionsCache()
        snapshot(store, folders, "all", cache, kept_folders)
        full: list[float] = []
        kept: list[float] = []
        for r in range(ROUNDS):
            for session_id, cwd in sessions[: args.grow]:
                _append(store, session_id, cwd, 5 + r)
            for times, counts, belongs in ((full, None, None), (kept, cache, kept_folders)):
                started = time.thread_time()
                snapshot(store, folders, "all", counts, belongs)
                times.append(time.thread_time() - started)
        assert snapshot(store, folders, "all", cache, kept_folders)[0] == snapshot(store, folders, "all")[0]
        store.close()
    print(f"status snapshot over {args.workspace_sessions:,} workspace + {args.others:,} other sessions, "
          f"{args.grow} appended to before each (CPU ms, median of {ROUNDS}):")
    print(f"  every session's counts read again   {statistics.median(full) * 1000:7.1f} ms")
    print(f"  counts kept, changed ones re-read   {statistics.median(kept) * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
