"""The server core's scheduling helpers (asyncio only, no LSP): the coalescer behind the status and
diagnostics refreshes (at most one refresh in flight, a request during one schedules exactly one
more), and the per-document debouncer behind re-anchoring and re-checking as the user types."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from checkpoint.server.coalesce import Coalescer, Debouncer

pytestmark = pytest.mark.asyncio(loop_scope="function")


class Refreshes:
    """A refresh that records the state it read, and can be held open until released."""

    def __init__(self) -> None:
        self.state = 0
        self.seen: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()
        self.tasks: list[asyncio.Task[Any]] = []

    async def refresh(self) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            seen = self.state  # read before the wait: what changes during it is this one's to miss
            self.started.set()
            await self.release.wait()
            self.seen.append(seen)
        finally:
            self.in_flight -= 1

    def spawn(self, coro: Coroutine[Any, Any, None], name: str | None = None) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.append(task)
        return task

    async def settle(self) -> None:
        while not all(t.done() for t in self.tasks):
            await asyncio.gather(*self.tasks)


async def test_requests_during_a_refresh_make_exactly_one_more() -> None:
    r = Refreshes()
    coalescer = Coalescer(r.refresh, r.spawn, "test")
    r.release.clear()
    coalescer.request()
    await r.started.wait()
    r.state = 1
    coalescer.request()
    coalescer.request()
    coalescer.request()
    r.release.set()
    await r.settle()
    assert r.seen == [0, 1]
    assert r.most_in_flight == 1


async def test_a_request_during_a_refresh_is_not_lost() -> None:
    r = Refreshes()
    coalescer = Coalescer(r.refresh, r.spawn, "test")
    r.release.clear()
    coalescer.request()
    await r.started.wait()
    r.state = 1  # changed after the running refresh read it
    coalescer.request()
    r.release.set()
    await r.settle()
    assert r.seen[-1] == 1


async def test_a_request_as_a_refresh_returns_is_not_lost() -> None:
    """Requested from inside the refresh after its last await: the loop must still go round."""
    r = Refreshes()
    coalescer: Coalescer

    async def refresh_then_request() -> None:
        await r.refresh()
        if len(r.seen) == 1:
            r.state = 1
            coalescer.request()

    coalescer = Coalescer(refresh_then_request, r.spawn, "test")
    coalescer.request()
    await r.settle()
    assert r.seen == [0, 1]


async def test_requests_in_one_step_make_one_refresh_and_later_ones_another() -> None:
    r = Refreshes()
    coalescer = Coalescer(r.refresh, r.spawn, "test")
    coalescer.request()
    coalescer.request()
    await r.settle()
    assert r.seen == [0]
    r.state = 1
    coalescer.request()
    await r.settle()
    assert r.seen == [0, 1]


async def test_nothing_refreshes_once_stopped() -> None:
    r = Refreshes()
    stopped = False
    coalescer = Coalescer(r.refresh, r.spawn, "test", lambda: stopped)
    r.release.clear()
    coalescer.request()
    await r.started.wait()
    coalescer.request()
    stopped = True
    r.release.set()
    await r.settle()
    assert r.seen == [0]


async def _loop_turns(n: int) -> None:
    """Let the event loop run `n` iterations: a zero-delay timer is due on the next one."""
    for _ in range(n):
        await asyncio.sleep(0)


async def test_debouncer_runs_once_per_key_after_a_burst_of_requests() -> None:
    ran: list[str] = []
    debouncer = Debouncer(0, ran.append)
    for _ in range(5):
        debouncer.request("file:///a.py")
    debouncer.request("file:///b.py")
    await _loop_turns(3)
    assert sorted(ran) == ["file:///a.py", "file:///b.py"]


async def test_debouncer_cancel_all_drops_what_was_waiting() -> None:
    ran: list[str] = []
    debouncer = Debouncer(0, ran.append)
    debouncer.request("file:///a.py")
    debouncer.cancel_all()
    await _loop_turns(3)
    assert ran == []
    debouncer.request("file:///a.py")  # still usable after a cancel
    await _loop_turns(3)
    assert ran == ["file:///a.py"]
