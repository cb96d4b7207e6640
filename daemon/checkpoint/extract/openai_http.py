"""The HTTP side of the `openai` extractor (openai_compatible.py): one request to an OpenAI-compatible
server, and the quick `GET {base}/models` that says whether one answers and what it serves.

Standard library only (urllib), and no extractor module: the registry's readiness check and the
automatic choice (choose.py) probe a configured server with this before anything heavier is imported
(the answer schema pulls in the Anthropic SDK, over a second to import on a cold start). The SDK's own
client (httpx2) is not used either: 0.2 s to import, for one POST per chunk.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from checkpoint.config import OPENAI_ANSWER_BYTES, OPENAI_DEFAULT_BASE_URL, Settings
from checkpoint.redact.outside import hide_secrets

KEY_VARIABLE = "OPENAI_API_KEY"


def base_url(settings: Settings) -> str:
    return (settings.openai_base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/")


def host_of(url: str) -> str:
    """The host (and a port other than the scheme's) a URL names, as the sentence "sent to HOST" says it."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or url
    return f"{host}:{port}" if port else host


def on_this_machine(url: str) -> bool:
    """A server on the loopback interface: what is sent to it never leaves this machine (a server on
    the local network is local for its cost, but the transcripts do travel to it)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_local(url: str) -> bool:
    """A server on this machine or the local network: a self-hosted model, which costs nothing per token."""
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


@dataclass(frozen=True)
class Reply:
    status: int  # 0: no HTTP answer (connection refused, dropped, timed out)
    body: Any  # the parsed JSON, or None
    text: str  # the raw body (or what went wrong), for a cause
    retry_after: float | None = None
    refused: bool = False  # we refused to go on (a redirect to another origin): no retry helps


_READ = 64 << 10


class CrossOriginRedirect(urllib.error.URLError):
    """The server sent us elsewhere: urllib would follow with the Authorization header copied."""


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects followed only within the request's own origin (scheme, host, port): the key
    (OPENAI_API_KEY, in Authorization) is never sent to another server, whatever this one answers."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        if _origin(newurl) != _origin(req.full_url):
            raise CrossOriginRedirect(f"the server answered {code} redirecting to another origin, "
                                      f"{hide_secrets(_origin(newurl))}: refused, so the key and the transcript "
                                      "are not sent there; set openai_base_url to the server's own address")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        port = -1
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


class _Deadline:
    """One request's total deadline: at it every socket the request opened is shut down, so a server
    that drips its headers or its answer, or never ends it, cannot hold the request past it (the socket
    timeout alone bounds each read, not their sum)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def left(self) -> float:
        return max(0.001, self.at - time.monotonic())

    def watch(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            if self.expired:
                _shut(sock)
            self._sockets.append(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def connection(self, base: type[http.client.HTTPConnection]) -> Any:
        deadline = self

        class Watched(base):  # type: ignore[valid-type,misc]
            def connect(self) -> None:
                given: Any = getattr(self, "timeout", None)
                self.timeout = min(given, deadline.left()) if isinstance(given, float | int) else deadline.left()
                super().connect()
                deadline.watch(self.sock)

        return Watched


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: nothing left to end
        sock.shutdown(socket.SHUT_RDWR)


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self.deadline.connection(http.client.HTTPConnection), req)


class _HTTPS(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self.deadline.connection(http.client.HTTPSConnection), req,
                            context=self._context)  # type: ignore[attr-defined]


class TooLarge(Exception):
    pass


def _read_capped(response: Any, cap: int, deadline: _Deadline) -> bytes:
    """The body, read in pieces: past `cap` bytes it is refused (TooLarge) without holding more than
    that, and past the deadline a piece is never waited for."""
    length = response.headers.get("content-length") if response.headers else None
    if length and length.isdigit() and int(length) > cap:
        raise TooLarge(f"the answer is {int(length):,} bytes, over the {cap:,}-byte cap (openai_answer_bytes)")
    pieces: list[bytes] = []
    size = 0
    while True:
        if deadline.expired:
            raise TimeoutError
        piece = response.read1(_READ) if hasattr(response, "read1") else response.read(_READ)
        if not piece:
            if deadline.expired:
                raise TimeoutError
            return b"".join(pieces)
        size += len(piece)
        if size > cap:
            raise TooLarge(f"the answer went past the {cap:,}-byte cap (openai_answer_bytes): refused")
        pieces.append(piece)


def request(url: str, payload: dict[str, Any] | None, timeout: float, cap: int = OPENAI_ANSWER_BYTES) -> Reply:
    """One HTTP request (POST with a JSON payload, else GET), never raising for a failure. Proxies of
    the environment apply except to a local server. The key (OPENAI_API_KEY) goes in the header only,
    and never to another origin (a redirect there is refused). `timeout` is the whole request's
    deadline, headers and answer included; an answer over `cap` bytes is refused unread."""
    headers = {"Accept": "application/json"}
    key = os.environ.get(KEY_VARIABLE)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = None
    if payload is not None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    retry_after = None
    with _Deadline(timeout) as deadline:
        handlers: list[urllib.request.BaseHandler] = [_SameOriginRedirects(), _HTTP(deadline), _HTTPS(deadline)]
        if is_local(url):
            handlers.append(urllib.request.ProxyHandler({}))
        try:
            try:
                with urllib.request.build_opener(*handlers).open(req, timeout=deadline.left()) as response:
                    status = int(response.status)
                    raw = _read_capped(response, cap, deadline)
            except urllib.error.HTTPError as exc:
                status = int(exc.code)
                retry_after = _seconds(exc.headers.get("retry-after") if exc.headers else None)
                raw = _read_capped(exc, cap, deadline) if exc.fp is not None else b""
        except TooLarge as exc:
            return Reply(0, None, str(exc))
        except CrossOriginRedirect as exc:
            return Reply(0, None, str(exc.reason), refused=True)
        except (TimeoutError, http.client.HTTPException, urllib.error.URLError, OSError, ValueError) as exc:
            if deadline.expired or isinstance(exc, TimeoutError) \
                    or isinstance(getattr(exc, "reason", None), TimeoutError):
                return Reply(0, None, f"timed out: no whole answer within the request's deadline of {timeout:g} s "
                                      "(request_timeout)")
            reason = getattr(exc, "reason", exc)
            return Reply(0, None, f"connection failed ({_said(str(reason), key)})")
    text = raw.decode("utf-8", errors="replace")
    try:
        body = json.loads(text) if text.strip() else None
    except ValueError:
        body = None
    return Reply(status, body, _said(text, key), retry_after)


def said(text: str) -> str:
    """Text from the server, as a cause may show it: the configured key and every secret replaced."""
    return _said(text, os.environ.get(KEY_VARIABLE))


def _said(text: str, key: str | None) -> str:
    """Text from or about the server, as a cause may show it: never the key, never a secret."""
    if key:
        text = text.replace(key, "<OPENAI_API_KEY>")
    return hide_secrets(" ".join(text.split()))


def _seconds(raw: str | None) -> float | None:
    try:
        value = float(raw) if raw else None
    except ValueError:
        return None  # an HTTP date: our own backoff will do
    return value if value is not None and value > 0 else None


def listed_models(url: str, timeout: float) -> tuple[list[str] | None, str]:
    """The ids `GET {url}/models` lists (None when the server does not answer with a list), and what
    went wrong when it did not."""
    reply = request(f"{url}/models", None, timeout)
    data = reply.body.get("data") if isinstance(reply.body, dict) else None
    if reply.status == 200 and isinstance(data, list):
        return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")], ""
    if reply.status == 0:
        return None, reply.text
    return None, f"GET /models answered {reply.status}: {reply.text[:160]}"


def server_unavailable(settings: Settings, timeout: float = 1.0) -> tuple[str | None, str]:
    """(why the server cannot be used, as a clause, or None; what it runs as when it can): a quick
    `GET {base}/models`. Used by the registry's readiness check, before a run."""
    url = base_url(settings)
    models, why = listed_models(url, timeout)
    if models is None:
        where = "openai_base_url" if settings.openai_base_url else f"openai_base_url is unset, so Ollama's {url}"
        return (f"the OpenAI-compatible server at {hide_secrets(url)} does not answer ({why}; {where}): start it, "
                "or set openai_base_url"), ""
    if settings.openai_model is None and not models:
        return f"the server at {hide_secrets(url)} lists no model: set openai_model", ""
    if settings.openai_model is None:
        return None, f": model {models[0]} (the first it lists)"
    return None, ""
