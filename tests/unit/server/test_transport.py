"""The daemon's stdio reader thread never dies quietly: whatever breaks in it ends the connection."""

from __future__ import annotations

import asyncio
import logging
import os

import pytest

from checkpoint.server import transport
from checkpoint.server.framing import Frame, FrameReader, Malformed


def test_a_failure_inside_the_reader_ends_the_connection_and_is_said(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(self: FrameReader) -> Frame | Malformed | None:
        raise RuntimeError("the reader lost its place")

    monkeypatch.setattr(FrameReader, "next", broken)
    read_end, write_end = os.pipe()

    async def pump() -> Frame | Malformed | None:
        queue: asyncio.Queue[Frame | Malformed | None] = asyncio.Queue()
        await asyncio.get_running_loop().run_in_executor(None, transport._pump, read_end, asyncio.get_running_loop(),
                                                         queue)
        return await asyncio.wait_for(queue.get(), 5)

    try:
        with caplog.at_level(logging.ERROR, "checkpoint.server.transport"):
            assert asyncio.run(pump()) is None  # the end: the server leaves, never stays as an orphan
    finally:
        os.close(read_end)
        os.close(write_end)
    assert [r.getMessage() for r in caplog.records] == [
        "the LSP reader failed (RuntimeError: the reader lost its place): exiting"]


def test_a_frame_too_deep_for_the_dispatcher_is_skipped_without_raising(caplog: pytest.LogCaptureFixture) -> None:
    class Protocol:
        def structure_message(self, data: object) -> object:
            return data

    with caplog.at_level(logging.WARNING, "checkpoint.server.transport"):
        transport.dispatch(Protocol(), b"[" * 5000 + b"]" * 5000)  # type: ignore[arg-type]
    assert [r.getMessage() for r in caplog.records] == ["a frame nested too deeply to read: skipped"]
