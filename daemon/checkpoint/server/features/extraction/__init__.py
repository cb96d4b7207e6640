"""Background extraction and `checkpoint.now`.

Policy (settings): in `auto` mode a session is extracted once it has been idle `idleSeconds` (its
transcript files untouched) or holds more than `maxPendingTurns` pending turns; in `manual` mode
only on checkpoint.now. Every run stays within the run budget; a background run stopped by the
budget pauses background extraction until new turns arrive or the user asks (checkpoint.now), so a
budget is never exceeded by starting run after run. One run at a time per server; two servers on
one database share the work through the store's chunk leases.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from lsprotocol import types

from checkpoint import config, pipeline, runner
from checkpoint.model import RunReport
from checkpoint.server.events import ItemsChanged, RunFinished, RunProgressed, RunStarted, TurnsAdded
from checkpoint.server.feature import Feature
from checkpoint.server.features.extraction.extractor_slot import ExtractorSlot
from checkpoint.server.folders import Folders
from checkpoint.server.messages import once_key
from checkpoint.server.protocol import PROGRESS_TITLE, NowResult, RunSummary
from checkpoint.server.protocol import Totals as WireTotals
from checkpoint.status_model import read_status, with_risk
from checkpoint.store import Store

if TYPE_CHECKING:
    from checkpoint.server.features.watcher import Watcher
    from checkpoint.server.server import CheckpointServer
    from checkpoint.server.settings import AutoExtraction, ServerSettings


def candidates(store: Store, folders: Folders, scope: str, auto: AutoExtraction, now: float) -> list[str]:
    """Sessions due for a background run: due chunks (past their backoff), in scope, and idle or
    with many pending turns. Sessions whose transcript Claude Code deletes soon come first."""
    due = store.due_by_session(respect_backoff=True)
    if due and scope == "workspace":
        # Out of scope first: a long history outside the workspace stays due, and this runs every tick.
        in_scope = store.folder_sessions(folders.paths)
        due = {sid: n for sid, n in due.items() if sid in in_scope}
    if not due:
        return []
    activity = store.session_activity()
    out = []
    sessions = with_risk(store.session_counts(list(due)), now=now)
    at_risk = {s.id for s in sessions if s.at_risk}
    for s in sessions:
        if now - activity.get(s.id, 0.0) >= auto.idle_seconds or s.pending > auto.max_pending_turns:
            out.append(s.id)
    return sorted(out, key=lambda sid: (sid not in at_risk, sid))


# The sessions of a run: these, or (checkpoint.now) those a function of the store chooses after its scan.
Targets = list[str] | Callable[[Store], list[str] | None]


def capture(
    store: Store, engine: config.Settings, slot: ExtractorSlot, sessions: Targets,
    scan: runner.Scan | None, progress: runner.Progress, stop: threading.Event,
) -> runner.CaptureReport:
    """A run on the extract thread, with the extractor the slot keeps: checkpoint.now (`scan`: the
    daemon's, through its watcher) scans then extracts; a background run (no scan) extracts only,
    failed chunks waiting their backoff."""
    choice, options = slot.get(engine)
    return runner.capture(store, engine, sessions=sessions, choice=choice, options=options, scan=scan,
                          background=scan is None, progress=progress, stop=stop)


def summary_of(report: RunReport, explicit: bool) -> RunSummary:
    """The run's one JSON form, with what the daemon adds: who asked, and when it ended."""
    return cast(RunSummary, {**report.as_dict(), "explicit": explicit, "finished_at": time.time()})


class ExtractionFeature(Feature):
    """Depends on the watcher (checkpoint.now scans first) and the extractor slot it shares with it;
    hears of new turns and tells of runs and new items through the server's events."""

    def __init__(self, server: CheckpointServer, watcher: Watcher, slot: ExtractorSlot) -> None:
        super().__init__(server)
        self.watcher = watcher
        self.slot = slot
        server.events.subscribe(TurnsAdded, lambda event: self.new_turns(event.count))
        self.lock = asyncio.Lock()
        self.paused: str | None = None
        self._kick: asyncio.Event | None = None
        self.runs = 0
        self._reported = False

    async def initialized(self) -> None:
        self._kick = asyncio.Event()
        self.server.run_task(self._loop(), name="scheduler")

    def kick(self) -> None:
        if self._kick is not None:
            self._kick.set()

    def new_turns(self, added: int) -> None:
        if added and self.paused:
            self.server.messages.log("new turns arrived: background extraction resumes")
            self.paused = None
        self.kick()

    def settings_changed(self, engine: config.Settings, daemon: ServerSettings) -> None:
        self.paused = None
        self.kick()

    def folders_changed(self) -> None:
        self.kick()

    async def _loop(self) -> None:
        assert self._kick is not None
        while True:
            tick = min(2.0, max(0.1, self.server.daemon_settings.auto.idle_seconds / 4))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._kick.wait(), tick)
            self._kick.clear()
            auto = self.server.daemon_settings.auto
            if auto.extraction != "auto" or self.paused or self.lock.locked():
                continue
            # On the extract thread, idle between runs: the read thread may be busy with a status.
            due = await self.server.extract_worker.call(candidates, self.server.folders, self.server.scope, auto,
                                                        time.time())
            if due:
                await self.run(due, explicit=False)

    async def now(self, session_id: str | None) -> NowResult:
        """checkpoint.now: scan, then one run over the session, or every session in scope."""
        self.paused = None
        server, loop = self.server, asyncio.get_running_loop()
        folders, scope = server.folders, server.scope

        def sessions(store: Store) -> list[str] | None:
            if session_id is not None:
                return [session_id]
            return None if scope == "all" else list(store.folder_sessions(folders.paths))

        def scan(settings: config.Settings) -> pipeline.ScanReport:
            # From the extract thread: the scan runs in turn with the watcher's, and what it found is
            # reported as the watcher reports its own.
            return asyncio.run_coroutine_threadsafe(self.watcher.scan_now(settings), loop).result()

        task = server.run_task(self._locked_run(sessions, scan, explicit=True), name="run")
        summary, now = await asyncio.shield(task)
        status = await server.read_worker.call(read_status, now.sessions if now is not None else None)
        scanned = now.scan if now is not None and now.scan is not None else pipeline.ScanReport(roots=[])
        return {
            "scanned": {"files_seen": scanned.files_seen, "files_read": scanned.files_read,
                        "turns_added": scanned.turns_added, "chunks_created": scanned.chunks_created},
            "run": summary,
            "totals": cast("WireTotals", status.totals.as_dict()),
        }

    async def run(self, sessions: list[str], explicit: bool = False) -> RunSummary:
        # A task of its own: an editor that cancels checkpoint.now stops waiting, but the run goes
        # on and still ends its progress and says how it went.
        task = self.server.run_task(self._locked_run(sessions, None, explicit=explicit), name="run")
        summary: RunSummary = (await asyncio.shield(task))[0]
        return summary

    async def _locked_run(
        self, sessions: Targets, scan: runner.Scan | None, explicit: bool,
    ) -> tuple[RunSummary, runner.CaptureReport | None]:
        async with self.lock:
            return await self._run(sessions, scan, explicit)

    async def _run(
        self, sessions: Targets, scan: runner.Scan | None, explicit: bool,
    ) -> tuple[RunSummary, runner.CaptureReport | None]:
        """A capture on the extract thread (checkpoint.now with `scan`, a background run without),
        with progress and messages."""
        server = self.server
        loop = asyncio.get_running_loop()
        token = await self._create_progress()
        self._reported = False  # the status says "running" from the run's first progress report
        self._progress_begin(token)

        def progress(done: int, total: int) -> None:
            loop.call_soon_threadsafe(self._on_progress, token, done, total)

        what = "checkpoint.now" if explicit else "background extraction"
        scope = "sessions in scope" if callable(sessions) else f"{len(sessions)} session(s)"
        server.messages.log(f"{what}: extracting {scope}")
        try:
            outcome: runner.CaptureReport = await server.extract_worker.call(
                capture, server.settings, self.slot, sessions, scan, progress, server.stopping
            )
        except Exception as exc:
            text = f"Checkpoint could not run the extractor: {type(exc).__name__}: {exc}"
            server.messages.show_once(once_key("run", text), text, types.MessageType.Error)
            summary = summary_of(RunReport(run_id=0, extractor=""), explicit)
            self._progress_end(token, "failed")
            server.events.publish(RunFinished(None, error=text))
            return summary, None
        self.runs += 1
        choice, report = outcome.choice, outcome.run
        summary = summary_of(report, explicit)
        # Said aloud once: a popup only when the extractor is not the one asked for (no API key),
        # the log otherwise.
        if choice.fallback:
            server.messages.show_once(once_key("extractor", choice.sentence), choice.sentence, log_again=False)
        else:
            server.messages.log_once(once_key("extractor", choice.sentence), choice.sentence)
        for failure in report.failures:
            how = "was not captured" if failure.lost else "failed"
            server.messages.show_once(
                once_key("chunk", failure.cause),
                f"Checkpoint: a chunk of session {failure.session_id} {how}: {failure.cause}",
            )
        if report.stopped_by:
            note = f"{report.stopped_by}; the rest stays pending"
            if not explicit:
                self.paused = note + " (background extraction waits for new turns or checkpoint.now)"
            server.messages.show_once(once_key("budget", note), f"Checkpoint: {note}.", types.MessageType.Info)
        server.messages.log(f"{what}: {report.sentence()}")
        lost = f", {report.lost} not captured (taken over by another worker)" if report.lost else ""
        self._progress_end(
            token, f"{report.captured} captured, {report.failed} failed{lost}, {report.items_added} new items",
        )
        server.events.publish(RunFinished(summary))
        server.events.publish(ItemsChanged())
        return summary, outcome

    # -- work-done progress -----------------------------------------------------------------------

    async def _create_progress(self) -> str | None:
        if not self.server.supports("window.work_done_progress"):
            return None
        token = f"checkpoint-run-{uuid.uuid4().hex[:12]}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token), 5.0)
        except Exception as exc:
            self.server.messages.log(f"no progress bar: {exc}", types.MessageType.Log)
            return None
        return token

    def _progress_begin(self, token: str | None) -> None:
        if token is not None:
            self.server.work_done_progress.begin(
                token, types.WorkDoneProgressBegin(title=PROGRESS_TITLE, message="extracting", percentage=0)
            )

    def _on_progress(self, token: str | None, done: int, total: int) -> None:
        # From the first report on, once checkpoint.now's scan (inside the run) is done: the scan is
        # not extraction, and the editor is not told it is.
        if self._reported:
            self.server.events.publish(RunProgressed(done, total))
        else:
            self._reported = True
            self.server.events.publish(RunStarted(total))
        if token is not None:
            percentage = int(100 * done / total) if total else 100
            self.server.work_done_progress.report(
                token, types.WorkDoneProgressReport(message=f"{done}/{total} chunks", percentage=percentage)
            )

    def _progress_end(self, token: str | None, message: str) -> None:
        if token is not None:
            self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
