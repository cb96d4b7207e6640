"""The daemon's side of the workspace's sessions as a delta: what changed since the list as sent, by
id, with versions that move only when something did, and the whole list at its version on request."""

from __future__ import annotations

from typing import cast

from checkpoint.model import SessionCounts
from checkpoint.server.features.status.workspace_sessions import SentSessions, newest_first
from checkpoint.server.protocol import SessionStatus


def session(n: int, turns: int = 1, last: int | None = None) -> SessionStatus:
    counts = SessionCounts(id=f"s{n}", agent="claude", title=None, cwd="/ws", turns=turns, pending=turns,
                           last_ts=None if last is None else f"2026-01-05T10:00:{last:02d}Z")
    return cast("SessionStatus", {**counts.as_dict(), "workspace": "file:///ws"})


def test_a_delta_carries_what_changed_and_the_version_moves_only_then() -> None:
    sent = SentSessions()
    a, b, c = session(1, last=1), session(2, last=2), session(3, last=3)
    assert sent.advance([b, a]) == {"version": 1, "since": 0, "changed": [b, a], "removed": [], "total": 2}
    assert not sent.differs([b, a])
    assert sent.advance([b, a]) == {"version": 1, "since": 1, "changed": [], "removed": [], "total": 2}
    a2 = session(1, turns=5, last=4)
    assert sent.differs([a2, c])
    assert sent.advance([a2, c]) == {"version": 2, "since": 1, "changed": [a2, c], "removed": ["s2"], "total": 2}
    assert sent.answer() == {"version": 2, "sessions": [a2, c], "total": 2}
    assert sent.advance([]) == {"version": 3, "since": 2, "changed": [], "removed": ["s1", "s3"], "total": 0}


def test_newest_first_is_the_store_order() -> None:
    old, new, same, none = session(1, last=1), session(3, last=5), session(2, last=5), session(0)
    assert [s["id"] for s in newest_first([old, none, new, same])] == ["s2", "s3", "s1", "s0"]
