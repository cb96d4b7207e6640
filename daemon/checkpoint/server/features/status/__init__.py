"""`checkpoint/status`: counts in total over the sessions in scope (the same `totals` as
`checkpoint status --json`), the workspace folders' own sessions that changed since the status
before (workspace_sessions.py: a delta with a version, issue 32), plus the run state. Sent whenever
any of it changes, never twice the same.

The sessions outside the workspace folders (scope "all") are not sent with every status: over a long
history they were most of its bytes (issue 16: 10.8 MB a minute over 2,000 sessions while one session
grew). A status carries how many sessions are in scope, a digest of the ones it leaves out (it
changes exactly when one of them does), and their failing causes (few, and the status bar names
them); the full list is the `checkpoint/sessions` request (sessions.py), which a client makes when
it shows the list and that digest changed. Everything but the workspace's sessions is whole in every
status: a client that only shows totals needs nothing more."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import orjson

from checkpoint.model import TEAM_AGENT, SessionCounts
from checkpoint.server import inotify
from checkpoint.server.coalesce import Coalescer
from checkpoint.server.events import CountsChanged, ItemsChanged, ProblemSeen, RunFinished, RunProgressed, RunStarted
from checkpoint.server.feature import Feature
from checkpoint.server.features.status.workspace_sessions import SentSessions
from checkpoint.server.folders import Folder, Folders
from checkpoint.server.protocol import CHECKPOINT_STATUS, RunProgress, RunSummary, SessionStatus
from checkpoint.status_counts import CountsCache
from checkpoint.status_model import read_status
from checkpoint.status_scope import FolderSessionsCache
from checkpoint.store import Store, StoreUnavailable, fault_message

if TYPE_CHECKING:
    from checkpoint.server.features.extraction import ExtractionFeature
    from checkpoint.server.server import CheckpointServer

POLL_SECONDS = 0.5
MAX_OTHER_CAUSES = 20  # failing causes of sessions not sent; the status bar shows five
SLOW_POLL_SECONDS = 30.0  # with the database's folder watched: the backstop
# What a status holds when the database cannot be read at all: zeros, and the cause in last_error.
NO_DATA: dict[str, Any] = {"totals": {"turns": 0, "captured": 0, "pending": 0, "failed": 0},
                           "problems": [], "usage": {}, "items": {"by_kind": {}, "by_state": {}, "held": 0},
                           "sessions_total": 0, "team_sessions": 0, "others_version": "", "other_causes": []}


def digest(sessions: list[dict[str, Any]]) -> str:
    """A short digest of sessions as sent: equal lists, equal digests; "" for none."""
    if not sessions:
        return ""
    # orjson: this runs on every status over every session left out (15 ms with json at 2,000, 1.5 here)
    data = orjson.dumps(sessions, option=orjson.OPT_SORT_KEYS, default=str)
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def split_sessions(sessions: Sequence[SessionCounts], belongs: Mapping[str, Folder],
                   counts: CountsCache | None = None) -> dict[str, Any]:
    """The status's session keys: the workspace folders' sessions (`listed`, each with its
    `workspace`, whole: the caller sends what changed), how many there are in all, a digest of the
    others and their failing causes. `counts`: the kept counts, which keep each one's dict too."""
    listed: list[SessionStatus] = []
    others: list[dict[str, Any]] = []
    causes: list[dict[str, Any]] = []
    teams = 0  # shown as a repository's Team node, not a session
    for session in sessions:
        folder = belongs.get(session.id)
        teams += session.agent == TEAM_AGENT
        if counts is not None:
            shown = counts.shown(session, folder.uri if folder else None)
        else:
            shown = session.as_dict()
            shown["workspace"] = folder.uri if folder else None
        if folder:
            listed.append(cast("SessionStatus", shown))
            continue
        others.append(shown)
        for cause in session.causes:
            if len(causes) < MAX_OTHER_CAUSES:
                causes.append({"session_id": session.id, "title": session.title, "cwd": session.cwd, "cause": cause})
    version = digest(others) if counts is None else counts.digest_of(others, digest)
    return {"listed": listed, "sessions_total": len(sessions), "team_sessions": teams, "others_version": version,
            "other_causes": causes}


def snapshot(store: Store, folders: Folders, scope: str, counts: CountsCache | None = None,
             kept_folders: FolderSessionsCache | None = None) -> tuple[dict[str, Any], Any]:
    """(totals over the sessions in scope, the workspace's sessions, problems and item counts in
    scope; a version of the items table). `counts`: the counts kept from the status before, re-read
    for the sessions changed since (status_counts.py); `kept_folders`: which sessions are the
    workspace's, kept likewise (status_scope.py)."""
    belongs = folders.sessions(store, kept_folders)
    ids = None if scope == "all" else list(belongs)
    status = read_status(store, ids, counts=counts)
    # the workspace's go as a delta, the others on request
    out = status.as_dict(with_sessions=False, sums=counts.sums(status.sessions) if counts is not None else None)
    out.update(split_sessions(status.sessions, belongs, counts))
    if ids is not None:
        out["problems"] = [p.as_json() for p in status.problems if p.session_id in belongs
                           or (p.session_id is None and folders.folder_of(p.path))]
    summary = store.item_summary(ids)
    out["items"] = {"by_kind": dict(summary.by_kind), "by_state": dict(summary.by_state), "held": summary.held}
    return out, (summary.by_state, summary.changed_at)


def versioned_snapshot(store: Store, folders: Folders, scope: str, counts: CountsCache | None = None,
                       kept_folders: FolderSessionsCache | None = None) -> tuple[int, tuple[dict[str, Any], Any]]:
    """(the connection's data_version before the read, snapshot(...)): the database watch asks for
    another status only when a commit came after the last one read (this daemon's own scans commit
    too, and each already asked for its status: every commit cost two snapshots)."""
    return store.data_version(), snapshot(store, folders, scope, counts, kept_folders)


class StatusFeature(Feature):
    """Depends on extraction (whether background extraction is paused); hears about runs, scans,
    triage and problems through the server's events."""

    def __init__(self, server: CheckpointServer, extraction: ExtractionFeature) -> None:
        super().__init__(server)
        self.extraction = extraction
        self.running = False
        self.progress: RunProgress | None = None
        self.last_run: RunSummary | None = None
        self.last_error: str | None = None
        self.last_sent: dict[str, Any] | None = None  # without its workspace_sessions
        self.sent_sessions = SentSessions()
        self.counts = CountsCache()  # used on the read worker's thread only
        self.folder_sessions = FolderSessionsCache()  # likewise
        self.items_seen: Any = None  # item summary last seen: a change means diagnostics are stale
        self.read_version: int | None = None  # the read connection's data_version at the last snapshot
        self._sender = Coalescer(self._send, server.run_task, "status", server.stopping.is_set)
        events = server.events
        events.subscribe(CountsChanged, lambda _: self.refresh())
        events.subscribe(ProblemSeen, lambda event: self.error(event.message))
        events.subscribe(RunStarted, lambda event: self.run_started(event.total))
        events.subscribe(RunProgressed, lambda event: self.run_progress(event.done, event.total))
        events.subscribe(RunFinished, self._run_finished)

    def error(self, message: str) -> None:
        self.last_error = message
        self.refresh()

    def refresh(self) -> None:
        """Recompute and send if changed, coalesced."""
        self._sender.request()

    async def _send(self) -> None:
        scope = self.server.scope
        # The run state as it is before the counts are read: a run that ends during the read
        # marks this dirty again, so its summary is never sent beside counts read before its commit.
        run_state = {
            "running": self.running,
            "progress": self.progress,
            "extraction": self.server.daemon_settings.auto.extraction,
            "paused": self.extraction.paused,
            "last_run": self.last_run,
            "last_error": self.last_error,
        }
        try:
            version, (data, items_version) = await self.server.read_worker.call(
                versioned_snapshot, self.server.folders, scope, self.counts, self.folder_sessions)
        except (StoreUnavailable, sqlite3.Error, OSError) as exc:
            # A full disk, a read-only, foreign or corrupt database, a newer schema: the editor is
            # told why in the status (and once in a message), not left with no status at all.
            message = fault_message(exc, self.server.settings.db)
            self.server.messages.show_once("database:" + message, f"Checkpoint: {message}")
            payload = {"scope": scope, "workspace_folders": self.server.folders.uris, **NO_DATA, **run_state,
                       "last_error": message}
            self._notify(payload, [])
            return
        self.read_version = version
        if self.items_seen is not None and items_version != self.items_seen:
            self.server.events.publish(ItemsChanged())  # this run's items, or another window's
        self.items_seen = items_version
        listed = data.pop("listed")
        self._notify({"scope": scope, "workspace_folders": self.server.folders.uris, **data, **run_state}, listed)

    def _notify(self, payload: dict[str, Any], listed: list[SessionStatus]) -> None:
        """Send the status with the workspace's sessions that changed, unless nothing did."""
        if payload == self.last_sent and not self.sent_sessions.differs(listed):
            return
        self.last_sent = payload
        # No await from here to the send: the list as sent and the wire never disagree.
        self.server.protocol.notify(CHECKPOINT_STATUS, {**payload,
                                                        "workspace_sessions": self.sent_sessions.advance(listed)})

    def run_started(self, total: int) -> None:
        self.running = True
        self.progress = {"done": 0, "total": total}
        self.refresh()

    def run_progress(self, done: int, total: int) -> None:
        self.progress = {"done": done, "total": total}
        self.refresh()

    def _run_finished(self, event: RunFinished) -> None:
        if event.error is not None:
            self.last_error = event.error
        self.run_finished(event.summary)

    def run_finished(self, summary: RunSummary | None) -> None:
        self.running = False
        self.progress = None
        if summary is not None:
            self.last_run = summary
            if not summary["failed"] and not summary["lost"] and not summary["stopped_by"]:
                self.last_error = None
            elif summary["failures"]:
                self.last_error = str(summary["failures"][-1]["cause"])
        self.refresh()

    def settings_changed(self, engine: Any, daemon: Any) -> None:
        self.refresh()

    def folders_changed(self) -> None:
        self.refresh()

    async def initialized(self) -> None:
        self.refresh()
        self.server.run_task(self._watch_database(), name="database")

    async def _watch_database(self) -> None:
        """Another window's daemon shares the database: what it ingests, extracts or triages shows
        here within POLL_SECONDS (the version changes on any other connection's commit). On Linux the
        version is looked at when the database's folder changes (a commit writes its WAL file), and
        every SLOW_POLL_SECONDS besides (a writer on another machine, a folder that cannot be
        watched); elsewhere every POLL_SECONDS."""
        folder = str(self.server.settings.db.parent)
        watch = _folder_watch(folder)
        woken = asyncio.Event()
        loop = asyncio.get_running_loop()
        if watch is not None:
            loop.add_reader(watch.fd, woken.set)
        try:
            while True:
                # Looked at once before the first wait, and a status sent then: another daemon's
                # commit may have come between this one's first status and this watch starting.
                version = await self.server.read_worker.call(Store.data_version)
                if version != self.read_version:  # a commit the last status did not read
                    self.refresh()
                if watch is None:
                    await asyncio.sleep(POLL_SECONDS)
                else:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(woken.wait(), SLOW_POLL_SECONDS)
                    await asyncio.sleep(POLL_SECONDS / 5)  # a commit's writes come in a burst: look once
                    woken.clear()
                    watch.read()
        finally:
            if watch is not None:
                loop.remove_reader(watch.fd)
                watch.close()


def _folder_watch(folder: str) -> inotify.Inotify | None:
    """An inotify watch of the database's folder (not below it); None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        watch = inotify.Inotify()
    except (OSError, AttributeError):
        return None
    try:
        watch.watch_dir(folder)
    except OSError:
        watch.close()
        return None
    return watch
