"""Which sessions belong to the workspace folders (`Store.folder_sessions`, the store's one rule),
kept between statuses and read again only for the sessions the change feed names (issue 40: with
3,000 workspace sessions, each in a folder of its own, matching every folder of the history against
the workspace on every status was 57 % of the daemon's CPU).

The rule reads the folders sessions worked in (session_cwds) and each session's first cwd
(sessions.cwd): the change feed numbers every write to both (migrations "session changes" and
"session changes of folders"), whichever process writes. Which recorded folders the workspace holds
depends only on the distinct (folder, workspace) pairs of the whole history: while the sessions that
changed bring no pair that was not there and take none away, only their own folder is decided again;
otherwise (a session in a new folder, the last of one forgotten) every session is, from the rows kept,
with each folder's holder found once per set of workspace folders. Another set of folders, another
database connection or a feed that went back (a restored file) starts again from a full read."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence

from checkpoint.store import Store
from checkpoint.store.scope import FolderRow, FoldersInScope, held_cwds, session_folder

Pair = tuple[str, "str | None"]  # a folder a session worked in, and its recorded workspace


class FolderSessionsCache:
    """store.folder_sessions(folders), kept. One reader thread at a time."""

    def __init__(self) -> None:
        self._conn: object = None
        self._key: tuple[str, ...] | None = None
        self._last = 0
        self._rows: dict[str, list[FolderRow]] = {}  # each session's rows (session_folder_rows)
        self._pairs: Counter[Pair] = Counter()  # the distinct (folder, workspace) pairs, with their rows
        self._holders: dict[str, str | None] = {}  # each recorded folder's holder in these folders
        self._held: dict[str, str] = {}
        self._sessions: dict[str, str] = {}
        self.reread = 0  # sessions decided again at the last call (all of them on a full read)

    def sessions(self, store: Store, folders: Sequence[str]) -> dict[str, str]:
        """store.folder_sessions(folders), from what was kept and the sessions changed since."""
        key = tuple(folders)
        same = store.conn is self._conn and key == self._key
        # the newest number first: what is read after it is at least as new
        last, changed = store.session_changes(self._last if same else sys.maxsize)
        if not same or last < self._last:
            self._full(store, key)
        elif changed:
            self._update(store, key, changed)
        else:
            self.reread = 0
        self._conn, self._key, self._last = store.conn, key, last
        return dict(self._sessions)

    def _full(self, store: Store, key: tuple[str, ...]) -> None:
        if key != self._key:
            self._holders = {}
        self._rows = {}
        for row in store.session_folder_rows():
            self._rows.setdefault(row[0], []).append(row)
        self._pairs = Counter((cwd, workspace) for rows in self._rows.values() for _, cwd, workspace, _ in rows)
        self._decide_all(key)

    def _decide_all(self, key: tuple[str, ...]) -> None:
        self._held = held_cwds(self._pairs, FoldersInScope(key), self._holders)
        self._sessions = {}
        for session_id in sorted(self._rows):
            self._decide(session_id)
        self.reread = len(self._rows)

    def _decide(self, session_id: str) -> None:
        held = self._held
        folder = session_folder(((cwd, first) for _, cwd, _, first in self._rows.get(session_id, ()) if cwd in held),
                                held)
        if folder is not None:
            self._sessions[session_id] = folder
        else:
            self._sessions.pop(session_id, None)

    def _update(self, store: Store, key: tuple[str, ...], changed: list[str]) -> None:
        fresh: dict[str, list[FolderRow]] = {}
        for row in store.session_folder_rows(changed):
            fresh.setdefault(row[0], []).append(row)
        touched: dict[Pair, bool] = {}  # each pair the changed sessions had or have: whether it was there
        for session_id in changed:
            for _, cwd, workspace, _ in self._rows.pop(session_id, ()):
                touched.setdefault((cwd, workspace), True)
                self._pairs[(cwd, workspace)] -= 1
            rows = fresh.get(session_id)
            if rows:
                self._rows[session_id] = rows
                for _, cwd, workspace, _ in rows:
                    touched.setdefault((cwd, workspace), self._pairs[(cwd, workspace)] > 0)
                    self._pairs[(cwd, workspace)] += 1
        pairs_changed = False
        for pair, was in touched.items():
            if self._pairs[pair] <= 0:
                del self._pairs[pair]
            pairs_changed |= was != (pair in self._pairs)
        if pairs_changed:  # which folders are held may have changed: every session is decided again
            self._decide_all(key)
            return
        before = {session_id for session_id in changed if session_id in self._sessions}
        for session_id in changed:
            self._decide(session_id)
        if any(session_id in self._sessions and session_id not in before for session_id in changed):
            self._sessions = dict(sorted(self._sessions.items()))  # in order of id, as folder_sessions
        self.reread = len(changed)
