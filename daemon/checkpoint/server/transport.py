"""The daemon's stdio connection: frames read by `framing` on a thread of their own, every request
answered (a result or an error, never silence), nothing but `initialize` served before
`initialize`, one line on stderr per bad message, and an end when the editor that started us dies.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol.types import INITIALIZE, ResponseError
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol

from checkpoint.server.framing import Frame, FrameReader, Malformed

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger("checkpoint.server.transport")
PARENT_POLL_SECONDS = 1.0
_EXIT = "exit"


class CheckpointProtocol(LanguageServerProtocol):
    """pygls' protocol, refusing work before `initialize` and keeping tracebacks out of replies."""

    def __init__(self, server: LanguageServer, converter: Any) -> None:
        super().__init__(server, converter)
        self.initialize_seen = False

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if not self.initialize_seen and method is not None:
            msg_id = getattr(message, "id", None)
            if method == INITIALIZE and msg_id is not None:
                self.initialize_seen = True
            elif msg_id is not None:
                log.warning("request %r (id %s) before initialize: refused", method, msg_id)
                error = JsonRpcServerNotInitialized(f"{method}: the server is not initialized yet")
                self._send_response(msg_id, None, error.to_response_error())
                return
            elif method != _EXIT:
                log.warning("notification %r before initialize: ignored", method)
                return
        msg_id = getattr(message, "id", None)
        if self._shutdown and method not in (None, _EXIT) and msg_id is not None:
            # pygls drops it; the LSP says a request after `shutdown` gets InvalidRequest.
            log.warning("request %r (id %s) after shutdown: refused", method, msg_id)
            self.answer_error(msg_id, JsonRpcInvalidRequest(f"{method}: the server is shutting down"))
            return
        super().handle_message(message)

    def structure_message(self, data: dict[str, Any]) -> Any:
        # JSON-RPC lets a request omit `params`; pygls' generic message type for a method outside
        # the LSP (`checkpoint/items`, ...) requires it. Omitted is absent: each handler reads None
        # as an empty query.
        method = data.get("method")
        if isinstance(method, str) and "params" not in data and "jsonrpc" in data and not self.get_message_type(method):
            data = {**data, "params": None}
        return super().structure_message(data)

    def _send_response(self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None) -> None:
        # pygls puts the handler's traceback in `error.data`: it belongs in the debug log, not in
        # the editor's hands (it names our files and lines and may quote arguments).
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            log.debug("traceback of the error answered to %s:\n%s", msg_id, "".join(error.data["traceback"]))
            error = ResponseError(code=error.code, message=error.message)
        super()._send_response(msg_id, result, error)

    def answer_error(self, msg_id: Any, error: JsonRpcException) -> None:
        self._send_response(msg_id, None, error.to_response_error())


def _request_id(body: bytes) -> tuple[Any, str | None]:
    """The id and method of a message pygls could not take, if it has them (to answer it)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    method = data.get("method")
    return data.get("id"), method if isinstance(method, str) else None


def dispatch(protocol: CheckpointProtocol, body: bytes) -> None:
    """Hand one frame to pygls; answer a request it cannot take with the error that says why."""
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except JsonRpcException as exc:  # pygls could not build the typed params (omitted, null, wrong)
        msg_id, method = _request_id(body)
        reason = str(exc.__cause__ or exc).splitlines()[0] if (exc.__cause__ or str(exc)) else type(exc).__name__
        log.warning("invalid message %s (id %s): %s", method, msg_id, reason)
        if msg_id is not None:
            code = JsonRpcInvalidParams if isinstance(exc, JsonRpcInvalidParams) else JsonRpcInvalidRequest
            protocol.answer_error(msg_id, code(f"{method}: invalid params ({reason})"))
        return
    except ValueError as exc:
        log.warning("a frame that is not JSON: %s", exc)
        return
    except RecursionError:  # deeper here than on the reader's thread (framing): nothing to answer it by
        log.warning("a frame nested too deeply to read: skipped")
        return
    if not hasattr(message, "jsonrpc"):
        msg_id = message.get("id") if isinstance(message, dict) else None
        log.warning("not a JSON-RPC 2.0 message (id %s)", msg_id)
        if msg_id is not None:
            protocol.answer_error(msg_id, JsonRpcInvalidRequest("not a JSON-RPC 2.0 request"))
        return
    try:
        protocol.handle_message(message)
    except JsonRpcException as exc:
        log.warning("could not handle %s: %s", getattr(message, "method", "a message"), exc)
        msg_id = getattr(message, "id", None)
        if msg_id is not None and getattr(message, "method", None):
            protocol.answer_error(msg_id, exc)
    except Exception as exc:
        log.warning("could not handle %s: %s: %s", getattr(message, "method", "a message"), type(exc).__name__, exc)
        log.debug("traceback", exc_info=True)
        msg_id = getattr(message, "id", None)
        if msg_id is not None and getattr(message, "method", None):
            protocol.answer_error(msg_id, JsonRpcInternalError(f"{type(exc).__name__}: {exc}"))


def _pump(fd: int, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Frame | Malformed | None]) -> None:
    """Frames onto the queue, then None at the end. Whatever goes wrong in here ends the connection,
    said on stderr: a reader thread that died quietly would leave a process that never answers and
    never notices its stdin closing."""
    reader = FrameReader(lambda: os.read(fd, 65536))
    while True:
        try:
            item = reader.next()
        except OSError as exc:
            log.warning("stdin: %s", exc)
            item = None
        except BaseException as exc:  # a bug in the reader: where its frames begin is lost with it
            log.error("the LSP reader failed (%s: %s): exiting", type(exc).__name__, exc)
            log.debug("traceback", exc_info=True)
            item = None
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: we are leaving
            return
        if item is None:
            return


def parent_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


async def _watch_parent(server: LanguageServer, queue: asyncio.Queue[Frame | Malformed | None]) -> None:
    while True:
        await asyncio.sleep(PARENT_POLL_SECONDS)
        pid = server.process_id
        if pid and not parent_alive(pid):
            log.warning("the editor (process %s) is gone: exiting", pid)
            queue.put_nowait(None)
            return


async def _serve(server: LanguageServer, stdin: BinaryIO) -> None:
    protocol = server.protocol
    assert isinstance(protocol, CheckpointProtocol)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Frame | Malformed | None] = asyncio.Queue()
    # A daemon thread: a read blocked on a silent stdin must not keep the process from ending.
    threading.Thread(target=_pump, args=(stdin.fileno(), loop, queue), name="lsp-reader", daemon=True).start()
    watcher = loop.create_task(_watch_parent(server, queue))
    try:
        while True:
            item = await queue.get()
            if item is None:
                return
            if isinstance(item, Malformed):
                log.warning("malformed LSP frame skipped: %s", item.reason)
                continue
            dispatch(protocol, item.body)
            if b'"exit"' in item.body and _request_id(item.body)[1] == _EXIT:
                return  # pygls leaves by raising SystemExit from its handler; leave here whatever came of it
    finally:
        watcher.cancel()


def start_stdio(server: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve until stdin ends, `exit` arrives, or the parent process dies."""
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(_serve(server, stdin or sys.stdin.buffer))
    except BrokenPipeError:
        log.warning("the connection to the editor is lost: exiting")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


class OneLineFormatter(logging.Formatter):
    """stderr is the editor's server log: one line per event there; the traceback only when the
    log level is DEBUG (CHECKPOINT_LOG_LEVEL=DEBUG), which is the debug log."""

    def __init__(self, fmt: str, debug: bool) -> None:
        super().__init__(fmt)
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        if self.debug:
            return super().format(record)
        text = record.getMessage()
        first = text.splitlines()[0] if text else ""
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            first += f": {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        if len(first) > 400:
            first = first[:400] + "…"
        saved = record.msg, record.args, record.exc_info, record.exc_text, record.stack_info
        record.msg, record.args, record.exc_info, record.exc_text, record.stack_info = first, None, None, None, None
        try:
            return super().format(record)
        finally:
            record.msg, record.args, record.exc_info, record.exc_text, record.stack_info = saved
