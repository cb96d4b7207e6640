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
import dataclasses
import io
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from checkpoint import config, pipeline, redact
from checkpoint.extract import Extractor
from checkpoint.server.events import ItemsChanged, RunFinished, RunProgressed, RunStarted, TurnsAdded
from checkpoint.server.feature import Feature
from checkpoint.server.messages import once_key
from checkpoint.server.protocol import PROGRESS_TITLE, NowResult, RunSummary
from checkpoint.server.workspace import Folders, scope_sessions
from checkpoint.store import Store

if TYPE_CHECKING:
    from checkpoint.server.server import CheckpointServer
    from checkpoint.server.settings import ServerSettings
    from checkpoint.server.watcher import Watcher

Progress = Callable[[int, int], None]


class Stopped(Exception):
    """Raised from the progress callback when the server stops: the pipeline then gives its leases back."""


def candidates(store: Store, folders: Folders, scope: str, daemon: ServerSettings, now: float) -> list[str]:
    """Sessions due for a background run: due chunks (past their backoff), in scope, and idle or
    with many pending turns. Sessions whose transcript Claude Code deletes soon come first."""
    due = store.due_by_session(respect_backoff=True)
    if not due:
        return []
    activity = store.session_activity()
    out = []
    sessions = store.session_counts(list(due))
    at_risk = {s.id for s in pipeline.flag_at_risk(sessions, now=now)}
    for s in sessions:
        if scope == "workspace" and not folders.folder_of(s.cwd):
            continue
        if now - activity.get(s.id, 0.0) >= daemon.idle_seconds or s.pending > daemon.max_pending_turns:
            out.append(s.id)
    return sorted(out, key=lambda sid: (sid not in at_risk, sid))


@dataclass
class ExtractorSlot:
    """The extractor for the current settings, built on the extract thread and kept between runs
    (the Claude extractor holds an HTTP client)."""

    key: Any = None
    extractor: Extractor | None = None
    notice: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, engine: config.Settings) -> tuple[Extractor, str]:
        from checkpoint.cli import choose_extractor  # the CLI's choice, said the same way

        key = repr(engine)
        with self.lock:
            if self.extractor is None or key != self.key:
                out = io.StringIO()
                self.extractor = choose_extractor(engine, out)
                self.key, self.notice = key, out.getvalue().strip()
            return self.extractor, self.notice


@dataclass
class RunOutcome:
    summary: RunSummary
    notice: str  # which extractor runs, and why
    fallback: bool  # the offline extractor stands in for the one asked for (no API key)
    total: int


def _budget(engine: config.Settings, used: dict[str, float]) -> pipeline.Budget:
    """The run budget less what earlier sessions of the same run used."""
    caps: dict[str, Any] = {}
    for f in dataclasses.fields(pipeline.Budget):
        cap = getattr(engine, f.name, None)
        if cap is not None:
            caps[f.name] = max(type(cap)(0), cap - type(cap)(used.get(f.name, 0)))
    return pipeline.Budget(**caps)


def run_sessions(
    store: Store,
    engine: config.Settings,
    slot: ExtractorSlot,
    sessions: list[str] | None,
    explicit: bool,
    progress: Progress,
    stop: threading.Event,
) -> RunOutcome:
    """One checkpoint run over the given sessions (None: every session), on the extract thread."""
    extractor, notice = slot.get(engine)
    targets: list[str | None] = [None] if sessions is None else list(sessions)
    total = sum(store.due_count(s) for s in targets)
    summary: RunSummary = {
        "explicit": explicit, "extractor": extractor.name, "tried": 0, "captured": 0, "failed": 0, "lost": 0,
        "items_added": 0, "items_rejected": 0, "stopped_by": None, "failures": [], "finished_at": 0.0,
    }
    used: dict[str, float] = {}
    done_before = 0
    progress(0, total)
    for session_id in targets:
        if stop.is_set():
            break

        def report_progress(done: int, session_total: int, offset: int = done_before) -> None:
            if stop.is_set():
                raise Stopped
            progress(offset + done, max(total, offset + session_total))

        try:
            report = pipeline.checkpoint(
                store, extractor, _budget(engine, used), concurrency=engine.concurrency, session_id=session_id,
                progress=report_progress, respect_backoff=not explicit, lease_seconds=engine.lease_seconds,
                redactor=redact.redactor(engine.redact, engine.redact_patterns), at_risk_days=engine.at_risk_days,
            )
        except Stopped:
            break
        summary["tried"] += report.tried
        summary["captured"] += report.captured
        summary["failed"] += report.failed
        summary["lost"] += report.lost
        summary["items_added"] += report.items_added
        summary["items_rejected"] += report.items_rejected
        summary["failures"] += [
            {"chunk_id": f.chunk_id, "session_id": f.session_id, "cause": f.cause, "lost": f.lost}
            for f in report.failures
        ]
        usage = report.usage
        used["max_requests"] = used.get("max_requests", 0) + max(usage.requests, report.tried)
        used["max_tokens"] = used.get("max_tokens", 0) + getattr(usage, "tokens", usage.input_tokens)
        used["max_cost"] = used.get("max_cost", 0) + float(getattr(usage, "cost_usd", 0.0))
        done_before += report.done
        if report.stopped_by:
            summary["stopped_by"] = report.stopped_by
            break
    summary["finished_at"] = time.time()
    fallback = extractor.name == "heuristic" and engine.extractor != "heuristic"
    return RunOutcome(summary, notice, fallback, total)


class Extraction(Feature):
    """Depends on the watcher (checkpoint.now scans first); hears of new turns and tells of runs
    and new items through the server's events."""

    def __init__(self, server: CheckpointServer, watcher: Watcher) -> None:
        super().__init__(server)
        self.watcher = watcher
        server.events.subscribe(TurnsAdded, lambda event: self.new_turns(event.count))
        self.lock = asyncio.Lock()
        self.paused: str | None = None
        self.slot = ExtractorSlot()
        self._kick: asyncio.Event | None = None
        self.runs = 0

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
            tick = min(2.0, max(0.1, self.server.daemon.idle_seconds / 4))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._kick.wait(), tick)
            self._kick.clear()
            d = self.server.daemon
            if d.extraction != "auto" or self.paused or self.lock.locked():
                continue
            due = await self.server.db.call(candidates, self.server.folders, self.server.scope, d, time.time())
            if due:
                await self.run(due, explicit=False)

    async def now(self, session_id: str | None) -> NowResult:
        """checkpoint.now: scan, then one run over the session, or every session in scope."""
        scan = await self.watcher.scan_now()
        self.paused = None
        if session_id is not None:
            sessions: list[str] | None = [session_id]
        else:
            sessions = await self.server.db.call(scope_sessions, self.server.folders, self.server.scope)
        summary = await self.run(sessions, explicit=True)
        status = await self.server.db.call(pipeline.status, sessions)
        return {
            "scanned": {"files_seen": scan.files_seen, "files_read": scan.files_read,
                        "turns_added": scan.turns_added, "chunks_created": scan.chunks_created},
            "run": summary,
            "totals": status["totals"],
        }

    async def run(self, sessions: list[str] | None, explicit: bool) -> RunSummary:
        # A task of its own: an editor that cancels checkpoint.now stops waiting, but the run goes
        # on and still ends its progress and says how it went.
        task = self.server.run_task(self._locked_run(sessions, explicit), name="run")
        return await asyncio.shield(task)

    async def _locked_run(self, sessions: list[str] | None, explicit: bool) -> RunSummary:
        async with self.lock:
            return await self._run(sessions, explicit)

    async def _run(self, sessions: list[str] | None, explicit: bool) -> RunSummary:
        server = self.server
        loop = asyncio.get_running_loop()
        token = await self._create_progress()
        server.events.publish(RunStarted(0))
        self._progress_begin(token)

        def progress(done: int, total: int) -> None:
            loop.call_soon_threadsafe(self._on_progress, token, done, total)

        what = "checkpoint.now" if explicit else "background extraction"
        scope = "all sessions" if sessions is None else f"{len(sessions)} session(s)"
        server.messages.log(f"{what}: extracting {scope}")
        try:
            outcome = await server.extract_worker.call(
                run_sessions, server.engine, self.slot, sessions, explicit, progress, server.stopping
            )
        except Exception as exc:
            text = f"Checkpoint could not run the extractor: {type(exc).__name__}: {exc}"
            server.messages.show_once(once_key("run", text), text, types.MessageType.Error)
            summary: RunSummary = {
                "explicit": explicit, "extractor": "", "tried": 0, "captured": 0, "failed": 0, "lost": 0,
                "items_added": 0, "items_rejected": 0,
                "stopped_by": None, "failures": [], "finished_at": time.time(),
            }
            self._progress_end(token, "failed")
            server.events.publish(RunFinished(None, error=text))
            return summary
        self.runs += 1
        summary = outcome.summary
        if outcome.notice:
            # Said aloud once: a popup only when the extractor is not the one asked for (no API key),
            # the log otherwise.
            if outcome.fallback:
                server.messages.show_once(once_key("extractor", outcome.notice), outcome.notice, log_again=False)
            else:
                server.messages.log_once(once_key("extractor", outcome.notice), outcome.notice)
        for failure in summary["failures"]:
            cause = str(failure["cause"])
            how = "was not captured" if failure["lost"] else "failed"
            server.messages.show_once(
                once_key("chunk", cause), f"Checkpoint: a chunk of session {failure['session_id']} {how}: {cause}"
            )
        if summary["stopped_by"]:
            note = f"{summary['stopped_by']}; the rest stays pending"
            if not explicit:
                self.paused = note + " (background extraction waits for new turns or checkpoint.now)"
            server.messages.show_once(once_key("budget", note), f"Checkpoint: {note}.", types.MessageType.Info)
        rejected = summary["items_rejected"]
        dropped = f", {rejected} dropped for citing no turn of their chunk" if rejected else ""
        lost = f", {summary['lost']} not captured (taken over by another worker)" if summary["lost"] else ""
        server.messages.log(
            f"{what} with {summary['extractor']}: {summary['tried']} chunks tried, {summary['captured']} captured,"
            f" {summary['failed']} failed{lost}; {summary['items_added']} new items{dropped}"
        )
        self._progress_end(
            token,
            f"{summary['captured']} captured, {summary['failed']} failed{lost}, {summary['items_added']} new items",
        )
        server.events.publish(RunFinished(summary))
        server.events.publish(ItemsChanged())
        return summary

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
        self.server.events.publish(RunProgressed(done, total))
        if token is not None:
            percentage = int(100 * done / total) if total else 100
            self.server.work_done_progress.report(
                token, types.WorkDoneProgressReport(message=f"{done}/{total} chunks", percentage=percentage)
            )

    def _progress_end(self, token: str | None, message: str) -> None:
        if token is not None:
            self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
