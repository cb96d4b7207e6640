"""Coalesced refreshes and debounced per-document work.

Coalescer: at most one refresh in flight; a request during one schedules exactly one
more. A refresh recomputes from the current state, so any number of requests made while one runs
are all answered by the single refresh that follows it, and none is lost: the flag is cleared
before a refresh starts, so whatever it reads may already be stale only if the flag is set again.

Debouncer: per key (a document's uri), work runs once the requests for that key pause for `delay`
seconds; a request while one is waiting restarts the wait, so typing is handled once it stops."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol


class Spawn(Protocol):
    """How a refresh task is started: the server's `run_task`, which keeps and logs its tasks."""

    def __call__(self, coro: Coroutine[Any, Any, None], name: str | None = None) -> asyncio.Task[Any]: ...


class Coalescer:
    def __init__(
        self, refresh: Callable[[], Awaitable[None]], spawn: Spawn, name: str,
        stopped: Callable[[], bool] = lambda: False,
    ) -> None:
        self._refresh = refresh
        self._spawn = spawn
        self._name = name
        self._stopped = stopped
        self._dirty = False
        self._task: asyncio.Task[Any] | None = None

    def request(self) -> None:
        self._dirty = True
        if self._task is None or self._task.done():
            self._task = self._spawn(self._drain(), name=self._name)

    async def _drain(self) -> None:
        while self._dirty and not self._stopped():
            self._dirty = False
            await self._refresh()


class Debouncer:
    def __init__(self, delay: float, run: Callable[[str], None]) -> None:
        self._delay = delay
        self._run = run
        self._waiting: dict[str, asyncio.TimerHandle] = {}

    def request(self, key: str) -> None:
        pending = self._waiting.pop(key, None)
        if pending is not None:
            pending.cancel()
        self._waiting[key] = asyncio.get_running_loop().call_later(self._delay, self._fire, key)

    def _fire(self, key: str) -> None:
        self._waiting.pop(key, None)
        self._run(key)

    def cancel_all(self) -> None:
        for handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
