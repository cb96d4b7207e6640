"""Watching the transcript roots. watchfiles (inotify and friends) wakes a scan of just the
directories that changed, within a few tens of milliseconds; a periodic full rescan backs it up
(roots that appear later, events a full inotify queue dropped, network filesystems), and is cheap
because the scan skips every file whose size and mtime did not change.

Scans run one at a time on the scan worker; requests that arrive meanwhile are merged into the next.
The first scan reads the workspace's own Claude Code project directories before the rest of the
history, so that on a first start over a long history the workspace's status is right at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from watchfiles import Change, awatch

from checkpoint import config, pipeline, sources
from checkpoint.model import ProblemKind
from checkpoint.server import inotify
from checkpoint.server.events import CountsChanged, ProblemSeen, TurnsAdded
from checkpoint.server.feature import Feature
from checkpoint.server.messages import once_key
from checkpoint.sources.tailer import SETTLE_SECONDS
from checkpoint.store import Store

if TYPE_CHECKING:
    from checkpoint.server.features.extraction.extractor_slot import ExtractorSlot  # the extraction's, shared
    from checkpoint.server.server import CheckpointServer
    from checkpoint.server.settings import ServerSettings

DEBOUNCE_MS = 100  # most a burst of writes is held back before it is scanned
STEP_MS = 15  # quiet time that ends a burst
BACKUP_RESCAN_SECONDS = 300.0  # the full rescan's period while inotify watches every directory
_UNREADABLE = frozenset({ProblemKind.UNREADABLE, ProblemKind.UNLISTABLE})  # said in a message, not only logged


def _keep(change: Change, path: str) -> bool:
    return sources.claimed(os.path.basename(path)) or (change == Change.added and os.path.isdir(path))


def scan_dirs(store: Store, settings: config.Settings, dirs: list[Path] | None) -> pipeline.ScanReport:
    """A full scan, or one of only these directories (each inside a root): discovery and the
    vanished-file check then cover just them, so a busy session costs the same however many
    transcripts the roots hold."""
    if dirs is not None:
        settings = replace(settings, sources=dirs)
    return pipeline.scan(store, settings)


def project_dirs(roots: list[Path], folders: list[str]) -> list[Path]:
    """The Claude Code project directories of sessions launched in these folders or below them
    (the directory name is the launch directory with every character but [a-zA-Z0-9] as "-", cut at
    200 characters and a hash appended when longer). A few other projects may match too (`/a/b-c`
    for `/a/b`): they are only read early, not scoped by it."""
    slugs = [re.sub(r"[^a-zA-Z0-9]", "-", folder) for folder in folders]
    found: list[Path] = []
    for root in roots if slugs else ():
        try:
            names = sorted(entry.name for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False))
        except OSError:
            continue  # reading it fully says what is wrong
        for name in names:
            if any(name == slug or name.startswith(slug[:200] + "-") for slug in slugs):
                found.append(root / name)
    return found


def outermost(dirs: set[Path], roots: list[Path]) -> list[Path]:
    """The changed directories that lie inside a root, none inside another."""
    inside = [d for d in dirs if any(d == r or d.is_relative_to(r) for r in roots)]
    out: list[Path] = []
    for d in sorted(inside, key=lambda p: len(p.parts)):
        if not any(d.is_relative_to(o) for o in out):
            out.append(d)
    return out


class Watcher(Feature):
    """Depends on no other feature; tells of new turns, changed counts and unreadable transcripts
    through the server's events."""

    def __init__(self, server: CheckpointServer, slot: ExtractorSlot) -> None:
        super().__init__(server)
        self.slot = slot  # chunks are formed fitted to the extractor's window once it is known
        self._dirs: set[Path] = set()
        self._full = False
        self._wake: asyncio.Event | None = None
        self._watched: tuple[Path, ...] = ()
        self._watch_stop: asyncio.Event | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self.scans = 0
        self._kernel_watch = False  # inotify watches every directory of the roots
        self._changed_at = 0.0  # monotonic time of the last change inotify told of
        self._recent: dict[Path, float] = {}  # directories inotify told of, with when it last did

    async def initialized(self) -> None:
        self._wake = asyncio.Event()
        self.server.run_task(self._scan_loop(), name="scan")
        self.server.run_task(self._rescan_loop(), name="rescan")
        self.request(full=True)
        self._ensure_watch()

    def request(self, dirs: set[Path] | None = None, full: bool = False) -> None:
        if full:
            self._full = True
        if dirs:
            self._dirs |= dirs
        if self._wake is not None:
            self._wake.set()

    async def scan_now(self, settings: config.Settings) -> pipeline.ScanReport:
        """A full scan for checkpoint.now, in turn with the watcher's."""
        report = await self.server.scan_worker.call(scan_dirs, settings, None)
        await self._after(report)
        return report

    async def _scan_loop(self) -> None:
        assert self._wake is not None
        first = project_dirs(list(self.server.settings.sources), [f.real for f in self.server.folders.folders])
        if first:
            with contextlib.suppress(Exception):  # the full scan that follows says what went wrong
                settings = self.slot.scan_settings(self.server.settings)
                await self._after(await self.server.scan_worker.call(scan_dirs, settings, first))
        while True:
            await self._wake.wait()
            self._wake.clear()
            roots = list(self.server.settings.sources)
            full, dirs = self._full, self._dirs
            self._full, self._dirs = False, set()
            targets = None if full else outermost(dirs, roots)
            if targets == []:
                continue
            try:
                settings = self.slot.scan_settings(self.server.settings)
                report = await self.server.scan_worker.call(scan_dirs, settings, targets)
            except Exception as exc:
                self.server.messages.show_once(
                    once_key("scan", str(exc)), f"Checkpoint could not scan the transcripts: {exc}",
                    types.MessageType.Error,
                )
                self.server.events.publish(ProblemSeen(f"scan failed: {exc}"))
                continue
            await self._after(report)

    async def _after(self, report: pipeline.ScanReport) -> None:
        self.scans += 1
        messages = self.server.messages
        for problem in report.problems:
            warning = problem.text
            if problem.kind in _UNREADABLE:
                text = f"Checkpoint cannot read a transcript: {warning}"
                if messages.show_once(once_key("unreadable", problem.path), text, log_again=False):
                    self.server.events.publish(ProblemSeen(warning))
            else:
                messages.log_once(once_key("scan", warning), f"transcript: {warning}", types.MessageType.Warning)
        if report.turns_added or report.chunks_created:
            messages.log(f"ingested {report.turns_added} new turns from {report.files_read} changed files"
                         f" ({report.chunks_created} new chunks)", types.MessageType.Log)
            self.server.events.publish(TurnsAdded(report.turns_added))
        if report.files_read or report.problems:
            self.server.events.publish(CountsChanged())

    async def _rescan_loop(self) -> None:
        """Every rescanSeconds: roots that appeared are watched, and a full rescan backs the watcher
        up. While inotify watches every directory, the rescan (a stat of every transcript, 2,000 of
        them a few tens of ms) runs only every BACKUP_RESCAN_SECONDS: the kernel tells of every change
        and says when it lost some (an overflow asks for a full scan). After a change, the directories
        the kernel told of are scanned again meanwhile: a last line written without its newline is read
        once it has settled (SETTLE_SECONDS), which no event announces (the whole history was rescanned
        every period while any session was busy: issue 40)."""
        since = 0.0
        while True:
            period = self.server.daemon_settings.rescan_seconds
            await asyncio.sleep(period)
            self._ensure_watch()
            since += period
            now = time.monotonic()
            self._recent = {d: at for d, at in self._recent.items() if now - at <= period + SETTLE_SECONDS}
            if self._kernel_watch and since < BACKUP_RESCAN_SECONDS:
                if self._recent:
                    self.request(dirs=set(self._recent))
                continue
            since = 0.0
            self.request(full=True)
            self.server.events.publish(CountsChanged())  # also notices items another window extracted or triaged

    # -- the watcher ------------------------------------------------------------------------------

    def _ensure_watch(self) -> None:
        roots = tuple(r for r in self.server.settings.sources if r.is_dir())
        if roots == self._watched and self._watch_task is not None and not self._watch_task.done():
            return
        self._stop_watch()
        self._watched = roots
        if not roots:
            return
        self._watch_stop = asyncio.Event()
        self._watch_task = self.server.run_task(self._watch(roots, self._watch_stop), name="watch")

    def _stop_watch(self) -> None:
        if self._watch_stop is not None:
            self._watch_stop.set()
        if self._watch_task is not None:
            self._watch_task.cancel()
        self._watch_task = None
        self._watched = ()

    async def _watch(self, roots: tuple[Path, ...], stop: asyncio.Event) -> None:
        if sys.platform.startswith("linux"):
            try:
                watch = inotify.Inotify()
            except (OSError, AttributeError) as exc:  # AttributeError: a libc without inotify
                self.server.messages.log(f"no inotify ({exc}): watching through watchfiles", types.MessageType.Log)
            else:
                try:
                    for root in roots:
                        watch.watch_tree(str(root))
                except OSError as exc:  # the watch limit (fs.inotify.max_user_watches)
                    watch.close()
                    self.server.messages.log(f"inotify: {exc}; watching through watchfiles", types.MessageType.Log)
                else:
                    await self._watch_inotify(roots, watch)
                    return
        await self._watch_polling(roots, stop)

    async def _watch_inotify(self, roots: tuple[Path, ...], watch: inotify.Inotify) -> None:
        """Woken by the kernel only: nothing runs at rest. A burst is gathered as watchfiles gathers
        it (until STEP_MS pass without an event, DEBOUNCE_MS at most), then its directories are scanned."""
        self.server.messages.log("watching (inotify) " + ", ".join(map(str, roots)), types.MessageType.Log)
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        loop.add_reader(watch.fd, ready.set)
        self._kernel_watch = True
        try:
            while True:
                await ready.wait()
                ready.clear()
                changes = watch.read()
                self._changed_at = time.monotonic()
                deadline = loop.time() + DEBOUNCE_MS / 1000
                while (left := deadline - loop.time()) > 0:
                    try:
                        await asyncio.wait_for(ready.wait(), min(STEP_MS / 1000, left))
                    except TimeoutError:
                        break
                    ready.clear()
                    changes.update(watch.read())
                if changes.overflow:
                    self.request(full=True)  # the kernel's queue overflowed: events were lost
                dirs = {Path(d) for d in changes.new_dirs}
                dirs |= {Path(p).parent for p in changes.paths if _keep(Change.modified, p)}  # the same filter
                if dirs:
                    existing = {_existing(d) for d in dirs}
                    self._recent.update(dict.fromkeys(existing, self._changed_at))
                    self.request(dirs=existing)
        except OSError as exc:
            self.server.messages.show_once(
                once_key("watch", str(exc)),
                f"Checkpoint cannot watch the transcripts ({exc}); it rescans every "
                f"{self.server.daemon_settings.rescan_seconds:g}s instead.",
            )
        finally:
            self._kernel_watch = False
            loop.remove_reader(watch.fd)
            watch.close()

    async def _watch_polling(self, roots: tuple[Path, ...], stop: asyncio.Event) -> None:
        self.server.messages.log("watching " + ", ".join(map(str, roots)), types.MessageType.Log)
        try:
            async for changes in awatch(
                *roots, watch_filter=_keep, debounce=DEBOUNCE_MS, step=STEP_MS, stop_event=stop,
                recursive=True, ignore_permission_denied=True,
            ):
                dirs = set()
                for change, path in changes:
                    p = Path(path)
                    dirs.add(p if change == Change.added and p.is_dir() else p.parent)
                self.request(dirs={_existing(d) for d in dirs})
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.server.messages.show_once(
                once_key("watch", str(exc)),
                f"Checkpoint cannot watch the transcripts ({exc}); it rescans every "
                f"{self.server.daemon_settings.rescan_seconds:g}s instead.",
            )

    def settings_changed(self, engine: config.Settings, daemon: ServerSettings) -> None:
        if engine.sources != self.server.settings.sources or engine.db != self.server.settings.db:
            self._ensure_watch()
            self.request(full=True)

    def shutdown(self) -> None:
        self._stop_watch()


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path
