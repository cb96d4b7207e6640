"""The HTTP side the fake model APIs share (fake_anthropic, fake_openai, fake_gemini): a threaded server
on 127.0.0.1 and a free port, a handler that passes every request to its fake, and the writing of a
JSON answer, a chunked SSE stream or a dropped connection. Each fake keeps its own protocol (routes,
bodies, events, faults) in its own module; this one knows nothing of any API."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

JSON = dict[str, Any]
R = TypeVar("R")  # a fake's record of one request


class FakeHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else headers and body, written apart, stall 40 ms on delayed ACKs
    server: _Server

    def do_POST(self) -> None:
        self.server.fake._handle(self)

    def do_GET(self) -> None:
        self.server.fake._handle(self)

    def log_message(self, format: str, *args: Any) -> None:
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeServer[Any]


class FakeServer(Generic[R]):
    """A fake API's server: start()/stop() or `with`; `requests`, its log. An error raised in a server
    thread (where pytest cannot see it) is kept in `errors` and re-raised in the test's thread when the
    fake stops, or by check()."""

    thread_name = "fake-http"
    handler: type[FakeHandler] = FakeHandler

    def __init__(self) -> None:
        self.errors: list[BaseException] = []
        self._lock = threading.RLock()
        self._seq = 0
        self._log: list[R] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def _handle(self, h: FakeHandler) -> None:
        """Answer one request, in a server thread."""
        raise NotImplementedError

    def _drain(self) -> None:
        """Called once the server accepts no more requests, before its socket closes."""

    def start(self) -> Self:
        if self._server is not None:
            return self
        server = _Server(("127.0.0.1", 0), self.handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                                        name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        server.shutdown()
        self._drain()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5.0)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self.stop()
        if exc is None:
            self.check()

    def check(self) -> None:
        """Re-raise the first error raised in a server thread, if any."""
        with self._lock:
            errors = list(self.errors)
        if errors:
            raise errors[0]

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            self.errors.append(exc)

    @property
    def origin(self) -> str:
        """http://127.0.0.1:<port>, while the fake runs."""
        if self._server is None:
            raise RuntimeError("the fake is not running; use it as a context manager or call start()")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[R]:
        with self._lock:
            return list(self._log)


def read_body(h: FakeHandler) -> bytes:
    length = int(h.headers.get("content-length") or 0)
    return h.rfile.read(length) if length else b""


def write_json(h: FakeHandler, status: int, body: JSON, headers: Mapping[str, str] | None = None, *,
               cut: bool = False) -> None:
    """A JSON answer; cut: the status line, the headers and half the body, then the connection closed."""
    data = json.dumps(body, ensure_ascii=False).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        h.send_header(name, value)
    if cut:
        h.send_header("Connection", "close")
    h.end_headers()
    if cut:
        h.wfile.write(data[: len(data) // 2])
        hard_close(h)
        return
    h.wfile.write(data)
    h.wfile.flush()


def sse_event(name: str, data: JSON) -> str:
    """One server-sent event with an event name, as the Anthropic and OpenAI APIs write them."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def write_sse(h: FakeHandler, frames: Iterable[str], headers: Mapping[str, str] | None = None, *,
              content_type: str = "text/event-stream", cut: bool = False) -> None:
    """A 200 whose chunked body is the frames, one a chunk; cut: the connection closed after them
    without the last chunk (a stream broken mid-body)."""
    h.send_response(200)
    h.send_header("Content-Type", content_type)
    h.send_header("Transfer-Encoding", "chunked")
    for name, value in (headers or {}).items():
        h.send_header(name, value)
    h.end_headers()
    for frame in frames:
        data = frame.encode()
        h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    h.wfile.flush()
    if cut:
        hard_close(h)
        return
    h.wfile.write(b"0\r\n\r\n")
    h.wfile.flush()


def hard_close(h: FakeHandler) -> None:
    """Close the socket now, so the client sees the connection end (FIN) where it stands."""
    h.close_connection = True
    with contextlib.suppress(OSError):
        h.wfile.flush()
    with contextlib.suppress(OSError):
        h.connection.shutdown(socket.SHUT_RDWR)


def halves(text: str) -> list[str]:
    """A streamed text's deltas: its two halves (one, or one empty, when it is too short)."""
    mid = len(text) // 2
    return [p for p in (text[:mid], text[mid:]) if p] or [""]
