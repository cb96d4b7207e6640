"""Blocking work off the event loop: each worker is one thread with its own Store (one sqlite
connection per thread), fed through a queue. Scans, extraction runs and reads each get a worker,
so a long extraction never delays ingesting new lines or answering the editor.

Daemon threads on purpose: a daemon killed mid-run must exit promptly; leases and transactions make
that safe (the store's exactly-once invariant), and waiting on a slow model call would not be.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from checkpoint.backfills import open_store
from checkpoint.store import Store

T = TypeVar("T")
log = logging.getLogger(__name__)

_STOP = object()


class StoreWorker:
    """One thread, one Store. `call(fn, *args)` runs fn(store, *args) there and awaits the result."""

    def __init__(self, name: str, db: Callable[[], Path]) -> None:
        self.name = name
        self._db = db  # read at each job: a changed `db` setting reopens the store
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._main, name=f"checkpoint-{name}", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((future, fn, args))
        return future

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self.submit(fn, *args))

    def stop(self, timeout: float = 2.0) -> bool:
        """Finish the queued jobs, close the store. False if the thread is still busy after timeout."""
        self._jobs.put(_STOP)
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _main(self) -> None:
        store: Store | None = None
        try:
            while True:
                job = self._jobs.get()
                if job is _STOP:
                    return
                future, fn, args = job
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    path = self._db()
                    if store is None or store.path != path:
                        if store is not None:
                            store.close()
                        store = open_store(path)  # the due back-fills run once, by the first
                    future.set_result(fn(store, *args))
                except BaseException as exc:
                    future.set_exception(exc)
        finally:
            if store is not None:
                store.close()
