"""`checkpoint serve` over a raw stdio pipe, as a hostile or broken client drives it: a malformed
frame costs that frame only, every request gets an answer, nothing is served before `initialize`,
stderr holds one line per bad message and no traceback, and the daemon leaves when its editor dies."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.lsp_support import SERVER, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")


def frame(message: dict[str, Any] | bytes, header: bytes | None = None) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return (header if header is not None else b"Content-Length: %d" % len(body)) + b"\r\n\r\n" + body


def request(msg_id: int | str, method: str, params: Any = None, *, omit: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if not omit:
        message["params"] = params
    return message


class RawClient:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.answers: dict[Any, dict[str, Any]] = {}

    @classmethod
    async def start(cls, tmp_path: Path) -> RawClient:
        env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "none"])
        process = await asyncio.create_subprocess_exec(
            *SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        return cls(process)

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    async def _read_one(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while (line := await self.process.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        if not length:
            raise EOFError("the daemon closed its stdout")
        message: dict[str, Any] = json.loads(await self.process.stdout.readexactly(length))
        return message

    async def answer(self, msg_id: Any, timeout: float = 15) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while msg_id not in self.answers:
            message = await asyncio.wait_for(self._read_one(), max(0.01, deadline - time.monotonic()))
            if "id" in message and "method" not in message:
                self.answers[message["id"]] = message
        return self.answers[msg_id]

    async def initialize(self, process_id: int | None = None) -> None:
        self.send(frame(request("init", "initialize", {"processId": process_id, "rootUri": None,
                                                          "capabilities": {}})))
        assert "result" in await self.answer("init")
        self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    async def close(self) -> str:
        """End the session; the daemon's stderr."""
        if self.process.returncode is None:
            self.send(frame(request("bye", "shutdown")))
            self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), 15)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        assert self.process.stderr is not None
        return (await self.process.stderr.read()).decode()


GOOD = request(0, "checkpoint/items", {})
BAD_FRAMES = {
    "non-numeric length": frame(GOOD, b"Content-Length: twelve"),
    "too small a length": frame(GOOD, b"Content-Length: 9"),
    "too large a length": frame(GOOD, b"Content-Length: %d" % (len(json.dumps(GOOD)) + 4000)),
    "a huge length": frame(GOOD, b"Content-Length: 99999999999999"),
    "not JSON": frame(b"{this is not json}"),
}


@pytest.mark.parametrize("name", sorted(BAD_FRAMES))
async def test_after_a_malformed_frame_the_next_50_requests_are_answered(tmp_path: Path, name: str) -> None:
    client = await RawClient.start(tmp_path)
    try:
        await client.initialize()
        client.send(BAD_FRAMES[name])
        for i in range(1, 51):  # one at a time, each waiting for its answer, as an editor would
            client.send(frame(request(i, "checkpoint/items", {})))
            assert "result" in await client.answer(i), i
    finally:
        stderr = await client.close()
    assert "Traceback" not in stderr
    assert stderr.count("malformed LSP frame") == 1, stderr


async def test_a_lowercase_header_name_is_read(tmp_path: Path) -> None:
    client = await RawClient.start(tmp_path)
    try:
        await client.initialize()
        body = json.dumps(request(1, "checkpoint/items", {})).encode()
        client.send(frame(body, b"content-length: %d" % len(body)))
        assert "result" in await client.answer(1)
    finally:
        await client.close()


async def test_requests_before_initialize_get_server_not_initialized(tmp_path: Path) -> None:
    client = await RawClient.start(tmp_path)
    try:
        client.send(frame(request(1, "workspace/executeCommand", {"command": "checkpoint.now", "arguments": []})))
        client.send(frame(request(2, "checkpoint/items", {})))
        for msg_id in (1, 2):
            error = (await client.answer(msg_id))["error"]
            assert error["code"] == -32002 and not error.get("data"), error
        await client.initialize()
        client.send(frame(request(3, "checkpoint/items", {})))
        assert "result" in await client.answer(3)
    finally:
        stderr = await client.close()
    assert "Traceback" not in stderr and "AttributeError" not in stderr


@pytest.mark.parametrize("message", [
    request(1, "workspace/executeCommand", omit=True),
    request(1, "workspace/executeCommand", None),
    request(1, "workspace/executeCommand", {"command": "checkpoint.nosuch"}),
    request(1, "textDocument/hover", {"textDocument": {}}),
    request(1, "checkpoint/items", omit=True),
    request(1, "checkpoint/items", None),
    request(1, "checkpoint/items", [1, 2]),
    request(1, "workspace/executeCommand", {"command": "checkpoint.dismiss", "arguments": [None]}),
    {"id": 1, "method": "checkpoint/items"},  # not JSON-RPC 2.0
], ids=lambda m: f"{m.get('method')}:{json.dumps(m.get('params', 'omitted'))}:{'jsonrpc' in m}")
async def test_requests_with_bad_or_missing_params_are_answered(tmp_path: Path, message: dict[str, Any]) -> None:
    client = await RawClient.start(tmp_path)
    try:
        await client.initialize()
        client.send(frame(message))
        answer = await client.answer(1)
        assert "error" in answer or "result" in answer
        assert not (answer.get("error") or {}).get("data"), answer  # no traceback handed to the client
        client.send(frame(request(2, "checkpoint/items", {})))
        assert "result" in await client.answer(2)
    finally:
        stderr = await client.close()
    assert "Traceback" not in stderr, stderr
    assert len([line for line in stderr.splitlines() if "WARNING" in line or "ERROR" in line]) <= 2, stderr


async def test_the_daemon_exits_when_the_editor_process_dies(tmp_path: Path) -> None:
    editor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    client = await RawClient.start(tmp_path)
    try:
        await client.initialize(process_id=editor.pid)
        client.send(frame(request(1, "checkpoint/items", {})))
        assert "result" in await client.answer(1)
        editor.kill()
        editor.wait()
        # stdin stays open: only the parent's death can end it
        assert await asyncio.wait_for(client.process.wait(), 15) == 0
    finally:
        editor.kill()
        await client.close()


async def test_a_pytest_lsp_client_gets_an_answer_to_every_bad_request(tmp_path: Path) -> None:
    from lsprotocol import types
    from pygls.exceptions import JsonRpcException

    from tests.support.lsp_support import Daemon

    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "none"])
    daemon = await Daemon.start(env, [])
    try:
        protocol = daemon.client.protocol
        with pytest.raises(JsonRpcException) as caught:  # the raw-stdio tests send what this client cannot
            await asyncio.wait_for(asyncio.wrap_future(protocol.send_request("checkpoint/items", [1])), 10)
        assert caught.value.code == -32602, caught.value
        with pytest.raises(JsonRpcException):
            await asyncio.wait_for(daemon.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="checkpoint.dismiss", arguments=[None])), 10)
        with pytest.raises(JsonRpcException):
            await asyncio.wait_for(daemon.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="checkpoint.nosuch")), 10)
        assert await daemon.items() == []  # and it still answers
    finally:
        await daemon.stop()


DEEP = b"[" * 2000 + b"]" * 2000  # 4 KB that json.loads cannot take (RecursionError, not ValueError)


async def test_a_too_deeply_nested_frame_costs_that_frame_only_and_stdin_still_ends_the_daemon(
        tmp_path: Path) -> None:
    client = await RawClient.start(tmp_path)
    try:
        await client.initialize()
        client.send(frame(DEEP))
        client.send(frame(b'{"jsonrpc": "2.0", "id": 7, "method": "checkpoint/items", "params": {"x": %s}}' % DEEP))
        client.send(frame(request(1, "checkpoint/items", {})))
        assert "result" in await client.answer(1)
        assert client.process.stdin is not None
        client.process.stdin.close()  # no shutdown, no exit: the end of stdin alone must end it
        assert await asyncio.wait_for(client.process.wait(), 15) == 0
    finally:
        stderr = await client.close()
    assert "Traceback" not in stderr, stderr
    assert stderr.count("malformed LSP frame") == 2 and "nested too deeply" in stderr, stderr


async def test_requests_after_shutdown_are_answered_with_invalid_request(tmp_path: Path) -> None:
    client = await RawClient.start(tmp_path)
    try:
        await client.initialize()
        client.send(frame(request("down", "shutdown")))
        assert "error" not in await client.answer("down")
        client.send(frame(request(1, "checkpoint/items", {})))
        client.send(frame(request(2, "workspace/executeCommand", {"command": "checkpoint.now", "arguments": []})))
        for msg_id in (1, 2):
            error = (await client.answer(msg_id))["error"]
            assert error["code"] == -32600 and "shut" in error["message"], error
        client.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(client.process.wait(), 15) == 0
    finally:
        await client.close()


async def test_checkpoint_items_without_params_is_an_empty_query(tmp_path: Path) -> None:
    client = await RawClient.start(tmp_path)
    try:
        await client.initialize()
        client.send(frame(request(1, "checkpoint/items", omit=True)))
        client.send(frame(request(2, "checkpoint/items", {})))
        assert (await client.answer(1)).get("result") == (await client.answer(2))["result"]
    finally:
        await client.close()
