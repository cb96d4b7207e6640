"""Per-session counts kept between statuses, re-read only for the sessions that changed: the daemon's
status over a long history costs what changed, not the whole history (issue 40: 3,000 workspace
sessions with five growing cost 23-32 % of a core, 73 % of it re-reading every session's counts).

What changed comes from the database's change feed (migration "session changes": triggers number
every write to what counts are read from, by whichever process writes: this daemon, a second one,
`checkpoint now`), read `WHERE seq > last`. What depends on the clock rather than on a write (the
holds: leases that expire, failed chunks waiting out their backoff) is read again for every session
each time, from the few chunks that hold anything. A new connection (another database, reopened)
starts again from a full read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checkpoint.model import SessionCounts
from checkpoint.store import Store


class CountsCache:
    """The counts of every session, as of the newest change read. One reader thread at a time."""

    def __init__(self) -> None:
        self._conn: object = None
        self._last = 0
        self._counts: dict[str, SessionCounts] = {}
        self.reread = 0  # sessions read again at the last `read` (all of them on a full read)
        # each session's as_dict, with what it was made from (the record kept, and what the clock sets)
        self._shown: dict[str, tuple[SessionCounts, tuple[Any, ...], dict[str, Any]]] = {}

    def read(self, store: Store, session_ids: Sequence[str] | None = None) -> list[SessionCounts]:
        """store.session_counts(session_ids), from what was kept and the sessions changed since."""
        last, changed = store.session_changes(self._last if store.conn is self._conn else -1)
        if store.conn is not self._conn or last < self._last:
            self._counts = {s.id: s for s in store.session_counts()}
            self._conn, self.reread = store.conn, len(self._counts)
        else:
            fresh = {s.id: s for s in store.session_counts(changed)} if changed else {}
            for session_id in changed:
                if session_id in fresh:
                    self._counts[session_id] = fresh[session_id]
                else:
                    self._counts.pop(session_id, None)  # forgotten
                    self._shown.pop(session_id, None)
            self.reread = len(changed)
            for s in self._counts.values():
                s.held = []
            for hold in store.holds():
                if hold.session_id in self._counts:
                    self._counts[hold.session_id].held.append(hold)
        self._last = last
        wanted = self._counts.values() if session_ids is None else [
            self._counts[i] for i in dict.fromkeys(session_ids) if i in self._counts]
        # session_counts' order: the latest activity first, then by id
        ordered = sorted(wanted, key=lambda s: s.id)
        ordered.sort(key=lambda s: s.last_ts or "", reverse=True)
        return ordered

    def as_dict(self, s: SessionCounts) -> dict[str, Any]:
        """s.as_dict(), made again only when the session was re-read or its holds or risk changed (a
        copy: the caller may add to it)."""
        clock = (s.at_risk, s.deletes_in_days, tuple(s.held))
        kept = self._shown.get(s.id)
        if kept is None or kept[0] is not s or kept[1] != clock:
            kept = (s, clock, s.as_dict())
            self._shown[s.id] = kept
        return dict(kept[2])
