"""The counts kept between statuses (status_counts.CountsCache) equal a full read after writes by this
process and by another one, and only the sessions those writes touched are read again; the sums kept
from them (totals, usage, secrets redacted) equal the sums of a full read."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from checkpoint.model import FileCursor, Role, ScannedTurn, SessionInfo, Totals, TurnDraft
from checkpoint.status_counts import CountsCache
from checkpoint.status_model import redacted_totals, usage_of
from checkpoint.store import Store


def _ingest(store: Store, session_id: str, turns: int, start: int = 0) -> None:
    drafts = [TurnDraft(id=f"{session_id}-{n}", role=Role.USER if n % 2 == 0 else Role.ASSISTANT,
                        text=f"turn {n} of {session_id}", timestamp=f"2026-11-01T10:{n:02d}:00Z")
              for n in range(start, start + turns)]
    store.ingest(FileCursor(f"/t/{session_id}.jsonl"), "claude", session_id, False, {},
                 [ScannedTurn(d, i + 1 + start, 10, 5) for i, d in enumerate(drafts)],
                 SessionInfo(id=session_id, agent="claude", cwd="/w"), Counter(), Counter(), [], chunk_tokens=40)


def _as_dicts(store: Store, cache: CountsCache | None = None) -> list[dict[str, object]]:
    """Every session's counts as sent: from the kept counts (and their kept dicts), or read afresh."""
    if cache is None:
        return [s.as_dict() for s in store.session_counts()]
    read = cache.read(store)
    fresh = store.session_counts()
    # the sums kept over what was read equal the sums of a full read
    assert cache.sums(read) == (Totals.of(fresh), usage_of(fresh), redacted_totals(fresh))
    shown = [cache.shown(s, None) for s in read]
    assert all(d["workspace"] is None for d in shown)
    return [{k: v for k, v in d.items() if k != "workspace"} for d in shown]


ANOTHER_PROCESS = """
import sys
from checkpoint.store import Store
store = Store(sys.argv[1])
[chunk] = store.claim_chunks(1, "other", session_id="s3")
store.fail_chunk(chunk.chunk_id, "other", "the model said no", lambda attempts: 0.0)
store.close()
"""


def test_kept_counts_follow_every_writer_and_reread_only_what_changed(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    store = Store(db)
    for n in range(1, 6):
        _ingest(store, f"s{n}", 4)
    cache = CountsCache()
    assert _as_dicts(store, cache) == _as_dicts(store)
    assert cache.reread == 5  # the first read reads everything
    assert _as_dicts(store, cache) == _as_dicts(store) and cache.reread == 0  # nothing changed

    _ingest(store, "s2", 2, start=4)  # this process appends to one session
    assert _as_dicts(store, cache) == _as_dicts(store) and cache.reread == 1

    other = subprocess.run([sys.executable, "-c", ANOTHER_PROCESS, str(db)], capture_output=True, text=True,
                           timeout=120)
    assert other.returncode == 0, other.stderr
    kept = {s["id"]: s for s in _as_dicts(store, cache)}
    assert cache.reread == 1
    assert kept["s3"]["failed"] != 0 and kept["s3"]["causes"] == ["the model said no"]
    assert list(kept.values()) == _as_dicts(store)

    assert store.forget_session("s4") is not None  # a session gone: gone from the kept counts too
    assert _as_dicts(store, cache) == _as_dicts(store)
    assert "s4" not in {s["id"] for s in _as_dicts(store, cache)}
    store.close()
