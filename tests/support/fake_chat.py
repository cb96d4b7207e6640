"""A fake OpenAI-compatible chat-completions server over real HTTP (what Ollama, llama.cpp's server,
LM Studio and vLLM serve), for the `openai` extractor. Never contacts a real server: it binds
127.0.0.1 on a free port.

    with FakeChat(context_tokens=4096) as fake:
        ... CHECKPOINT_OPENAI_BASE_URL=fake.base_url ...
        fake.completions                   # RequestRecord of every POST /v1/chat/completions, in order

Endpoints
---------
    POST /v1/chat/completions   a ChatCompletion JSON (no streaming), with usage and finish_reason
    GET  /v1/models             {"object": "list", "data": [{"id": <model>}]}
    A key is optional (a local server takes none); `FakeChat(api_key="k")` wants `Bearer k`, else 401
    (which quotes the key presented with `echo_key=True`, as some gateways do); `models_open=True`: the
    model list is served without a key, as llama.cpp's server does.

    `says_window` makes the fake say its window (`context_tokens`; `model_max` for what the model
    allows) as one server does, every other convention answered 404 as that server would:
        "vllm"         GET /v1/models           data[].max_model_len
        "llama.cpp"    GET /props               default_generation_settings.n_ctx
        "ollama"       GET /api/ps              models[].context_length (the model loaded)
        "ollama-show"  POST /api/show           parameters "num_ctx N", model_info "<arch>.context_length"
        "ollama-info"  POST /api/show           model_info only (the Modelfile sets no num_ctx)
        "lmstudio"     GET /api/v0/models       data[].loaded_context_length, max_context_length

Answers
-------
    The prompt is the user message's text. The default responder answers the planted decisions of
    tests/support/synth.py found in it (fake_anthropic.planted_decisions), as {"items": [...]}.
    `fake.responder = fn`: fn(ChatRequest) returns a list of items or a str sent verbatim.

The window
----------
    `context_tokens`: a request whose messages (counted at 4 bytes a token, about what a real
    tokenizer does with English; the chunker's estimate counts more) and max_tokens do not fit is
    answered 400, as llama.cpp answers it, and its record says `over_window`. `refuse_json_schema`:
    every response_format json_schema is answered 400 "Either json_schema or grammar ..." (some
    llama.cpp builds, ggml-org/llama.cpp #11847); json_object is served.

Faults (queued with `fake.script(...)`, one per chat request, in order)
------
    500 / "server_error"   500 {"error": {...}}
    "cut_off"              200, half the answer, finish_reason "length" (a small model looping)
    "prose"                200, a sentence instead of JSON, finish_reason "stop"
    "too_long"             400 "the request exceeds the available context size" whatever its size
    "drop"                 the connection closed without an answer
    "endless"              200 with no length, 64 KB of JSON-looking text after another until the client goes
    "huge"                 200 announcing (Content-Length) and sending a 100 MB body
    "drip"                 200 whose body comes one byte every DRIP_SECONDS (hours for the whole answer)
    "hang"                 no answer at all until the fake stops (a server slower than any timeout)

A redirect: `FakeChat(redirect=(307, other.origin))` answers every request with that status and a
Location on the other origin, same path; `fake.redirected` counts them.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from tests.support.fake_anthropic import planted_decisions
from tests.support.fake_http import JSON, FakeHandler, FakeServer, hard_close, read_body, write_json

FaultKind = Literal["server_error", "cut_off", "prose", "too_long", "drop", "hang", "endless", "huge", "drip"]
HUGE_BYTES = 100 << 20
DRIP_SECONDS = 0.2
SaysWindow = Literal["vllm", "llama.cpp", "ollama", "ollama-show", "ollama-info", "lmstudio"]
_SHORTHANDS: dict[int, FaultKind] = {500: "server_error"}
SCHEMA_REFUSAL = "Either json_schema or grammar can be specified, but not both"


@dataclass(frozen=True)
class ChatRequest:
    model: str
    system: str
    prompt: str  # the user message's text
    response_format: JSON
    body: JSON


@dataclass
class RequestRecord:
    seq: int
    method: str
    path: str
    started: float  # time.monotonic(): which process sent it (crash_harness.sends_per_chunk)
    headers: dict[str, str]
    body: JSON | None = None
    tokens: int = 0  # the request's messages, counted as the fake's "tokenizer" counts
    over_window: bool = False  # its messages and max_tokens did not fit context_tokens
    fault: str | None = None
    status: int | None = None
    answer: str | None = None
    error_type: str | None = None  # crash_harness.chunk_key names it in a failure

    @property
    def format_type(self) -> str | None:
        return ((self.body or {}).get("response_format") or {}).get("type")


Responder = Callable[[ChatRequest], list[JSON] | str]


def default_responder(request: ChatRequest) -> list[JSON]:
    return planted_decisions(request.prompt, same_as='"same_as"' in json.dumps(request.response_format))


def count_tokens(body: JSON) -> int:
    text = "".join(str(m.get("content") or "") for m in body.get("messages") or [] if isinstance(m, dict))
    return math.ceil(len(text.encode()) / 4)


class FakeChat(FakeServer[RequestRecord]):
    thread_name = "fake-chat"

    def __init__(self, *, model: str = "fake-local-model", context_tokens: int | None = None,
                 refuse_json_schema: bool = False, api_key: str | None = None, latency: float = 0.0,
                 responder: Responder | None = None, redirect: tuple[int, str] | None = None,
                 echo_key: bool = False, models_open: bool = False, says_window: SaysWindow | None = None,
                 model_max: int = 131_072) -> None:
        super().__init__()
        self.says_window = says_window
        self.model_max = model_max
        self.echo_key = echo_key
        self.models_open = models_open
        self.redirect = redirect
        self.redirected = 0
        self.model = model
        self.context_tokens = context_tokens
        self.refuse_json_schema = refuse_json_schema
        self.api_key = api_key
        self.latency = latency
        self.responder: Responder = responder or default_responder
        self._faults: deque[FaultKind] = deque()
        self._released = threading.Event()  # set when the fake stops: every "hang" ends

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def script(self, *faults: FaultKind | int) -> None:
        with self._lock:
            self._faults.extend(_SHORTHANDS[f] if isinstance(f, int) else f for f in faults)

    def unscript(self) -> None:
        """Forget the faults not met yet: the server answers well from now on."""
        with self._lock:
            self._faults.clear()

    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    @property
    def completions(self) -> list[RequestRecord]:
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/chat/completions"]

    def _drain(self) -> None:
        self._released.set()

    # ------------------------------------------------------------------------------------------ serving

    def _handle(self, h: FakeHandler) -> None:
        with self._lock:
            self._seq += 1
            # A proxy's request names the whole URL (an HTTP_PROXY pointed here): its path is what counts.
            path = urlsplit(h.path).path if h.path.startswith(("http://", "https://")) else h.path.split("?")[0]
            rec = RequestRecord(self._seq, h.command, path.rstrip("/"), time.monotonic(),
                                {k.lower(): ("Bearer <redacted>" if k.lower() == "authorization" else v)
                                 for k, v in h.headers.items()})
            self._log.append(rec)
        try:
            raw = read_body(h)
            if raw:
                rec.body = json.loads(raw)
            self._route(h, rec)
        except (OSError, ValueError) as exc:
            if isinstance(exc, ValueError):
                self._json(h, rec, 400, _error(f"body is not JSON: {exc}"))
            h.close_connection = True
        except Exception as exc:  # re-raised in the test thread when the fake stops
            self._failed(exc)
            h.close_connection = True

    def _route(self, h: FakeHandler, rec: RequestRecord) -> None:
        if self.redirect is not None:
            code, origin = self.redirect
            with self._lock:
                self.redirected += 1
            rec.status = code
            h.send_response(code)
            h.send_header("Location", origin + h.path)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        auth = h.headers.get("authorization") or ""
        listing = h.command == "GET" and rec.path == "/v1/models"
        if self.api_key is not None and auth != f"Bearer {self.api_key}" and not (listing and self.models_open):
            quoted = f": {auth.removeprefix('Bearer ')}" if self.echo_key else "."
            self._json(h, rec, 401, _error(f"Incorrect API key provided{quoted}", "invalid_api_key", 401))
            return
        if h.command == "GET" and rec.path == "/v1/models":
            entry: JSON = {"id": self.model, "object": "model"}
            if self.says_window == "vllm":
                entry["max_model_len"] = self.context_tokens
            self._json(h, rec, 200, {"object": "list", "data": [entry]})
            return
        said = self._window_said(h.command, rec.path, rec.body)
        if said is not None:
            self._json(h, rec, 200, said)
            return
        if h.command != "POST" or rec.path != "/v1/chat/completions":
            self._json(h, rec, 404, _error(f"no route {h.command} {rec.path}", code=404))
            return
        body = rec.body or {}
        rec.tokens = count_tokens(body)
        fmt = body.get("response_format") or {}
        if self.refuse_json_schema and fmt.get("type") == "json_schema":
            self._json(h, rec, 400, _error(SCHEMA_REFUSAL))
            return
        if self.context_tokens is not None and rec.tokens + int(body.get("max_tokens") or 0) > self.context_tokens:
            rec.over_window = True
            self._json(h, rec, 400, _too_long(rec.tokens, self.context_tokens))
            return
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
        rec.fault = fault
        if self.latency:
            time.sleep(self.latency)
        if fault == "server_error":
            self._json(h, rec, 500, _error("internal server error", "server_error", 500))
            return
        if fault == "too_long":
            self._json(h, rec, 400, _too_long(rec.tokens, self.context_tokens or rec.tokens))
            return
        if fault == "drop":
            hard_close(h)
            return
        if fault == "hang":
            self._released.wait()
            hard_close(h)
            return
        if fault in ("endless", "huge", "drip"):
            rec.status = 200
            _flood(h, fault)
            return
        request = _parse(body)
        answer = self.responder(request)
        text = answer if isinstance(answer, str) else json.dumps({"items": answer}, ensure_ascii=False)
        finish = "stop"
        if fault == "cut_off":
            text, finish = text[: max(1, len(text) // 2)], "length"
        elif fault == "prose":
            text = "Sure! Here are the decisions I found in this chunk: the team picked a cache."
        rec.answer = text
        self._json(h, rec, 200, {
            "id": f"chatcmpl-fake{rec.seq}", "object": "chat.completion", "created": int(time.time()),
            "model": request.model or self.model,
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": rec.tokens, "completion_tokens": len(text) // 4 + 1,
                      "total_tokens": rec.tokens + len(text) // 4 + 1},
        })

    def _window_said(self, method: str, path: str, body: JSON | None) -> JSON | None:
        """The answer of the one window convention this fake follows, for its own request; else None (404)."""
        says, window = self.says_window, self.context_tokens
        if says == "llama.cpp" and (method, path) == ("GET", "/props"):
            return {"default_generation_settings": {"n_ctx": window, "params": {}}, "total_slots": 1}
        if says in ("ollama", "ollama-show", "ollama-info") and (method, path) == ("GET", "/api/ps"):
            loaded = [{"name": self.model, "model": self.model, "size": 1, "context_length": window}]
            return {"models": loaded if says == "ollama" else []}  # else: the model is not loaded
        if says in ("ollama", "ollama-show", "ollama-info") and (method, path) == ("POST", "/api/show") \
                and (body or {}).get("model") == self.model:
            parameters = f"num_ctx {window}\nstop \"<|im_end|>\"" if says == "ollama-show" else ""
            return {"parameters": parameters, "model_info": {"general.architecture": "qwen2",
                                                             "qwen2.context_length": self.model_max}}
        if says == "lmstudio" and (method, path) == ("GET", "/api/v0/models"):
            return {"object": "list", "data": [{"id": self.model, "state": "loaded", "max_context_length":
                                                self.model_max, "loaded_context_length": window}]}
        return None

    def _json(self, h: FakeHandler, rec: RequestRecord, status: int, body: JSON) -> None:
        rec.status = status
        if status != 200:
            rec.error_type = str((body.get("error") or {}).get("type"))
        write_json(h, status, body)


def _flood(h: FakeHandler, fault: str) -> None:
    """An answer that never ends, is 100 MB, or drips: written until done or the client goes."""
    piece = (b'{"choices": [{"message": {"content": "' + b"x" * (64 << 10))
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    if fault == "huge":
        h.send_header("Content-Length", str(HUGE_BYTES))
    elif fault == "drip":
        h.send_header("Content-Length", str(len(piece)))
    else:
        h.send_header("Connection", "close")
    h.end_headers()
    h.close_connection = True
    sent = 0
    try:
        while fault != "huge" or sent < HUGE_BYTES:
            if fault == "drip":
                if sent >= len(piece):
                    break
                h.wfile.write(piece[sent:sent + 1])
                h.wfile.flush()
                sent += 1
                time.sleep(DRIP_SECONDS)
                continue
            chunk = piece[: HUGE_BYTES - sent] if fault == "huge" else piece
            h.wfile.write(chunk)
            sent += len(chunk)
    except OSError:
        pass  # the client went, as it should


def _parse(body: JSON) -> ChatRequest:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    prompt = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    return ChatRequest(str(body.get("model") or ""), system, prompt, body.get("response_format") or {}, body)


def _error(message: str, kind: str = "invalid_request_error", code: int = 400) -> JSON:
    return {"error": {"code": code, "message": message, "type": kind}}


def _too_long(tokens: int, context: int) -> JSON:
    return _error(f"the request exceeds the available context size ({tokens} tokens > {context}), "
                  "try increasing it", "exceed_context_size_error")
