"""Coalesced refreshes: at most one refresh in flight; a request during one schedules exactly one
more. A refresh recomputes from the current state, so any number of requests made while one runs
are all answered by the single refresh that follows it, and none is lost: the flag is cleared
before a refresh starts, so whatever it reads may already be stale only if the flag is set again."""

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
