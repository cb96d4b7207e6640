"""The language server: state, workers, tracked background tasks, the event bus, and the hooks
that fan out to the features (which `app.create_server` builds)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

import checkpoint
from checkpoint import config
from checkpoint.server.events import EventBus
from checkpoint.server.feature import Feature
from checkpoint.server.folders import Folders
from checkpoint.server.messages import Messenger
from checkpoint.server.protocol import SERVER_NAME
from checkpoint.server.settings import ServerSettings, layered_settings
from checkpoint.server.transport import CheckpointProtocol, start_stdio
from checkpoint.server.workers import StoreWorker

log = logging.getLogger("checkpoint.server")


class CheckpointServer(LanguageServer):
    def __init__(self, flags: dict[str, Any] | None = None) -> None:
        super().__init__(SERVER_NAME, checkpoint.__version__, protocol_cls=CheckpointProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.flags = dict(flags or {})
        self.settings: config.Settings = config.load(self.flags)
        self.daemon_settings = ServerSettings()
        self.folders = Folders([])
        self.messages = Messenger(self)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.started = False  # until `initialized`, the server may only log and show messages
        self.stopping = threading.Event()
        # One thread and one sqlite connection each: ingest never waits for a long extraction, and
        # reads for the editor never wait for either.
        self.scan_worker = StoreWorker("scan", lambda: self.settings.db)
        self.extract_worker = StoreWorker("extract", lambda: self.settings.db)
        self.read_worker = StoreWorker("read", lambda: self.settings.db)

        self.events = EventBus()
        # Set by `app.create_server`, which builds the features in dependency order; this order is
        # the order their hooks run in.
        self.features: list[Feature] = []

    # -- background tasks -------------------------------------------------------------------------

    def run_task(self, coro: Coroutine[Any, Any, Any], name: str | None = None) -> asyncio.Task[Any]:
        """Keep a reference (asyncio holds tasks weakly) and log what a task dies of."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and not self.stopping.is_set():
            log.error("background task %s failed", task.get_name(), exc_info=exc)
            self.messages.log(f"internal error in {task.get_name()}: {type(exc).__name__}: {exc}",
                              types.MessageType.Error)

    # -- settings and workspace -------------------------------------------------------------------

    def apply_options(self, options: Any) -> None:
        engine, daemon, warnings = layered_settings(options, self.flags)
        for warning in warnings:
            self.messages.show_once("settings:" + warning, f"Checkpoint: {warning}")
        old_engine, old_daemon = self.settings, self.daemon_settings
        self.settings, self.daemon_settings = engine, daemon
        if self.started and (old_engine, old_daemon) != (engine, daemon):
            self.messages.log(self.describe_settings())
            for feature in self.features:
                feature.settings_changed(old_engine, old_daemon)

    def describe_settings(self) -> str:
        e, d, auto = self.settings, self.daemon_settings, self.daemon_settings.auto
        return (
            f"settings: db {e.db}; sources {', '.join(map(str, e.sources))}; extractor {e.extractor or 'auto'};"
            f" scope {d.scope}; extraction {auto.extraction} (idle {auto.idle_seconds:g}s or >{auto.max_pending_turns}"
            f" pending turns); rescan every {d.rescan_seconds:g}s;"
            f" diagnostics {'on' if d.diagnostics.enabled else 'off'}"
        )

    def update_folders(self) -> None:
        folder_uris = [f.uri for f in self.workspace.folders.values()]
        if not folder_uris and self.workspace.root_uri:
            folder_uris = [self.workspace.root_uri]
        self.folders = Folders(folder_uris)
        if self.started:
            for feature in self.features:
                feature.folders_changed()

    @property
    def scope(self) -> str:
        """The `scope` setting; with no folder open there is no workspace to scope to: all sessions."""
        return self.daemon_settings.scope if self.folders.folders else "all"

    def supports(self, capability: str) -> bool:
        return bool(get_capability(self.client_capabilities, capability, False))

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls' loop goes deaf after one malformed frame; ours skips it (see `transport`)."""
        start_stdio(self, stdin, stdout)

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        self.update_folders()
        self.started = True
        self.messages.log(f"checkpoint daemon {self.version} started; {self.describe_settings()}")
        self.messages.log("workspace folders: " + (", ".join(self.folders.uris) or "none"))
        for feature in self.features:
            await feature.initialized()

    def stop(self) -> None:
        """Stop background work; a run in progress ends at its next chunk and gives its leases back."""
        self.stopping.set()
        for feature in self.features:
            feature.shutdown()
        for task in list(self.tasks):
            task.cancel()

    def close(self, timeout: float = 3.0) -> bool:
        """After the connection ended: close the stores. False if a worker is still busy."""
        self.stop()
        return all([w.stop(timeout) for w in (self.scan_worker, self.read_worker, self.extract_worker)])
