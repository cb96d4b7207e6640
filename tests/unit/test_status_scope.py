"""Which sessions are the workspace's, kept between statuses (status_scope.FolderSessionsCache): equal
to the store's rule read afresh (Store.folder_sessions) after every kind of write, by this process and
by another one, and decided again only for the sessions the writes named, unless the folders held
may have changed."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from checkpoint.model import FileCursor, Role, ScannedTurn, SessionInfo, TurnDraft
from checkpoint.status_scope import FolderSessionsCache
from checkpoint.store import Store


def _ingest(store: Store, session_id: str, cwd: str, *later: str, n: int = 0) -> None:
    turn = ScannedTurn(TurnDraft(id=f"{session_id}-{n}", role=Role.USER, text=f"turn {n}"), n + 1, 10, 5)
    store.ingest(FileCursor(f"/t/{session_id}.jsonl", offset=n), "claude", session_id, False, {}, [turn],
                 SessionInfo(id=session_id, agent="claude", cwd=cwd, cwds=tuple(later)), Counter(), Counter(), [],
                 chunk_tokens=100_000)


ANOTHER_PROCESS = """
import sys
from collections import Counter
from checkpoint.model import FileCursor, Role, ScannedTurn, SessionInfo, TurnDraft
from checkpoint.store import Store
store = Store(sys.argv[1])
turn = ScannedTurn(TurnDraft(id="out-9", role=Role.USER, text="moved"), 10, 10, 5)
store.ingest(FileCursor("/t/out.jsonl", offset=9), "claude", "out", False, {}, [turn],
             SessionInfo(id="out", agent="claude", cwd=sys.argv[2], cwds=(sys.argv[3],)), Counter(), Counter(), [],
             chunk_tokens=100_000)
store.close()
"""


def test_kept_workspace_sessions_follow_every_writer_and_decide_again_only_what_changed(tmp_path: Path) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    (ws / "a").mkdir(parents=True)
    (ws / "b").mkdir()
    other.mkdir()
    store = Store(tmp_path / "c.db")
    _ingest(store, "s1", str(ws / "a"))
    _ingest(store, "s2", str(ws / "b"))
    _ingest(store, "out", str(other))
    folders = [str(ws)]
    cache = FolderSessionsCache()

    def same() -> dict[str, str]:
        kept = cache.sessions(store, folders)
        fresh = store.folder_sessions(folders)
        assert kept == fresh and list(kept) == list(fresh)  # the same, in order of id
        return kept

    assert same() == {"s1": str(ws), "s2": str(ws)} and cache.reread == 3  # the first read: every session
    assert same() and cache.reread == 0  # nothing changed

    _ingest(store, "s1", str(ws / "a"), n=1)  # an append: a folder already known
    assert same() and cache.reread == 1

    _ingest(store, "s0", str(ws / "a"))  # a new session in a folder already held: it alone is decided
    assert "s0" in same() and cache.reread == 1

    _ingest(store, "s3", str(ws / "new"))  # a new folder: which folders are held may change, all decided again
    assert "s3" in same() and cache.reread == 5

    # another process records that a session outside worked in the workspace: it joins
    run = subprocess.run([sys.executable, "-c", ANOTHER_PROCESS, str(tmp_path / "c.db"), str(other), str(ws / "b")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert same()["out"] == str(ws)

    assert cache.sessions(store, [str(ws / "a")]) == store.folder_sessions([str(ws / "a")])  # other folders
    assert store.forget_session("s1") is not None  # forgotten: gone from the kept answer too
    assert "s1" not in same()
    store.close()
