"""Who holds a lease: each run's owner id recorded with its process (checkpoint.liveness), so that a
run on the same machine can tell a dead owner from a slow one; and what holds pending work (a live
lease, a lease whose owner cannot be told, a backoff), as status and `checkpoint now` say it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from checkpoint import liveness
from checkpoint.liveness import Process
from checkpoint.model import ChunkState, Hold, HoldKind
from checkpoint.store.connection import StoreBase

SENT, FAILED = (f"'{s.value}'" for s in (ChunkState.SENT, ChunkState.FAILED))


class LeasesMixin(StoreBase):
    # How this process is known and how another's life is told: replaced in tests that play several
    # processes in one (tests/properties).
    this_process: Callable[[], Process | None] = staticmethod(liveness.current)
    process_alive: Callable[[Process, str | None], bool | None] = staticmethod(liveness.alive)

    def _register_owner(self, c: sqlite3.Connection, owner: str) -> None:
        me = self.this_process()
        if me is not None:
            c.execute("INSERT OR IGNORE INTO lease_owners (owner, host, pid, started, since) VALUES (?,?,?,?,?)",
                      (owner, me.host, me.pid, me.started, self.clock()))

    def _owner_liveness(self, c: sqlite3.Connection) -> dict[str, tuple[Process, bool | None]]:
        """Every owner recorded that holds a lease, with whether it is alive (None: cannot be told)."""
        me = self.this_process()
        here = me.host if me is not None else None
        out: dict[str, tuple[Process, bool | None]] = {}
        for owner, host, pid, started in c.execute(
            f"SELECT o.owner, o.host, o.pid, o.started FROM lease_owners o WHERE EXISTS ("
            f"  SELECT 1 FROM chunks WHERE lease_owner = o.owner AND state = {SENT})"
        ):
            process = Process(host, pid, started)
            out[owner] = (process, self.process_alive(process, here))
        return out

    def dead_owners(self, c: sqlite3.Connection | None = None) -> list[str]:
        """Owners holding leases whose process is known to be gone: their chunks are due at once."""
        return [o for o, (_, alive) in self._owner_liveness(c or self.conn).items() if alive is False]

    def _forget_owner(self, c: sqlite3.Connection, owner: str) -> None:
        c.execute("DELETE FROM lease_owners WHERE owner = ?", (owner,))

    def _forget_dead_owners(self, c: sqlite3.Connection) -> None:
        """Owners without a lease whose process is gone: nothing refers to them any more."""
        me = self.this_process()
        here = me.host if me is not None else None
        for owner, host, pid, started in c.execute(
            f"SELECT o.owner, o.host, o.pid, o.started FROM lease_owners o WHERE NOT EXISTS ("
            f"  SELECT 1 FROM chunks WHERE lease_owner = o.owner AND state = {SENT})"
        ).fetchall():
            if self.process_alive(Process(host, pid, started), here) is False:
                self._forget_owner(c, owner)

    def holds(self, sessions: str | Sequence[str] | None = None, respect_backoff: bool = True) -> list[Hold]:
        """What keeps chunks that are not captured from being claimed now, per session: leases of live
        runs (with their pid), leases whose owner cannot be told alive or dead (until they expire),
        and, with respect_backoff, failed chunks waiting out their backoff (with their cause). A dead
        owner's chunks hold nothing: they are due."""
        now = self.clock()
        where, args = "", []
        if isinstance(sessions, str):
            sessions = [sessions]
        if sessions is not None:
            where = f" AND session_id IN ({','.join('?' * len(sessions))})"
            args = list(sessions)
        owners = self._owner_liveness(self.conn)
        found: dict[tuple[str, HoldKind, int | None, str | None], list[Any]] = {}

        def add(key: tuple[str, HoldKind, int | None, str | None], turns: int, until: float) -> None:
            entry = found.setdefault(key, [0, 0, until])
            entry[0] += 1
            entry[1] += turns
            entry[2] = max(entry[2], until)

        for session_id, owner, until, turns in self.conn.execute(
            f"SELECT session_id, lease_owner, lease_until, CASE WHEN parts = 1 THEN last_seq - first_seq + 1"
            f" ELSE 1 END FROM chunks WHERE state = {SENT} AND lease_until >= ?{where}",
            [now, *args],
        ):
            process, alive = owners.get(owner, (None, None))
            if alive is False:
                continue
            if alive and process is not None:
                add((session_id, HoldKind.LEASED, process.pid, None), turns, until)
            else:
                add((session_id, HoldKind.LEASED_ELSEWHERE, None, None), turns, until)
        if respect_backoff:
            for session_id, cause, until, turns in self.conn.execute(
                f"SELECT session_id, cause, next_try, CASE WHEN parts = 1 THEN last_seq - first_seq + 1"
                f" ELSE 1 END FROM chunks WHERE state = {FAILED} AND next_try > ?{where}",
                [now, *args],
            ):
                add((session_id, HoldKind.BACKOFF, None, cause), turns, until)
        return [Hold(session_id=k[0], kind=k[1], chunks=v[0], turns=v[1], until=v[2], pid=k[2], cause=k[3])
                for k, v in sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[1][2]))]
