"""A fake OpenAI Responses API over real HTTP, for driving the real `codex` CLI in tests.

Never contacts the live API: it binds 127.0.0.1 on a free port; codex is pointed at it with a
provider whose `base_url` is `fake.base_url` (`wire_api = "responses"`), e.g. `codex exec -c
model_provider=fake -c 'model_providers.fake={...}'` (see `provider_overrides`).

    with FakeOpenAI() as fake:
        ... run codex with provider_overrides(fake.base_url) and FAKE_KEY=<anything> ...
        fake.responses                     # RequestRecord of every POST /v1/responses, in order

Endpoints
---------
    POST /v1/responses   streamed (SSE) when the body has "stream": true (codex always streams):
                         response.created, response.in_progress, response.output_item.added,
                         response.content_part.added, response.output_text.delta (in two halves),
                         response.output_text.done, response.content_part.done,
                         response.output_item.done, response.completed (with usage);
                         a plain Response JSON otherwise.
    GET  /v1/models      {"object": "list", "data": []} (codex may ask for the provider's models)
    Auth: `Authorization: Bearer <key>`; none -> 401. `FakeOpenAI(api_key="k")` rejects any other key.

Answers
-------
    The prompt is the text of the request's last user message (`input_text` parts). The default
    responder answers the planted decisions of tests/support/synth.py found in it (fake_anthropic's
    `planted_decisions`: one decision per "We'll use marker-<hex> ..." sentence, cited to its turn's
    label), as JSON text {"items": [...]}, with "same_as" when the request's schema has that property.
    `fake.responder = fn`: fn(ResponsesRequest) returns a list of items or a str sent verbatim, or a
    dict {"output": [output items]} answered as they are (a function_call to drive an agent's tools).
    A `text.format` of type json_schema with `"strict": true` is checked as OpenAI's structured outputs
    check it: every object has `additionalProperties: false` and lists every property in `required`;
    a schema that breaks this is a 400 invalid_request_error naming the key, as the real API answers.

Faults (queued with `fake.script(...)`, one per /v1/responses request, in order)
------
    500 / "server_error"   500 {"error": {"type": "server_error", ...}}
    429 / "rate_limit"     429 rate_limit_exceeded with retry-after: 0
    401 / "unauthorized"   401 invalid_api_key
    "drop"                 close the connection without a response
    "drop_mid_stream"      a 200 stream cut after response.created (no response.completed)
    "malformed"            a completed answer whose text is not JSON
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.support.fake_anthropic import planted_decisions
from tests.support.fake_http import (
    JSON,
    FakeHandler,
    FakeServer,
    halves,
    hard_close,
    read_body,
    sse_event,
    write_json,
    write_sse,
)

FaultKind = Literal["server_error", "rate_limit", "unauthorized", "drop", "drop_mid_stream", "malformed"]
_SHORTHANDS: dict[int, FaultKind] = {500: "server_error", 429: "rate_limit", 401: "unauthorized"}
_STATUS: dict[str, tuple[int, str, str]] = {
    "server_error": (500, "server_error", "The server had an error while processing your request."),
    "rate_limit": (429, "rate_limit_exceeded", "Rate limit reached for requests."),
    "unauthorized": (401, "invalid_api_key", "Incorrect API key provided."),
}


@dataclass(frozen=True)
class ResponsesRequest:
    model: str
    prompt: str  # the text of the last user message
    instructions: list[str]  # the developer/system messages' text, then `instructions` if any
    schema: JSON | None  # text.format.schema when text.format.type is json_schema
    body: JSON


@dataclass
class RequestRecord:
    seq: int
    method: str
    path: str
    headers: dict[str, str]  # the key redacted
    body: JSON = field(default_factory=dict)
    fault: str | None = None
    status: int | None = None
    answer: str | None = None  # the text answered, when there was one
    usage: JSON | None = None


Responder = Callable[[ResponsesRequest], list[JSON] | str | JSON]


def default_responder(request: ResponsesRequest) -> list[JSON]:
    return planted_decisions(request.prompt, same_as='"same_as"' in json.dumps(request.schema or {}))


def strict_schema_problem(schema: Any, where: str = "()") -> str | None:
    """What OpenAI's strict structured outputs would refuse in `schema`, or None."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            props = schema.get("properties") or {}
            if schema.get("additionalProperties") is not False:
                return f"In context={where}, 'additionalProperties' is required to be supplied and to be false."
            missing = [k for k in props if k not in (schema.get("required") or [])]
            if missing:
                return (f"In context={where}, 'required' is required to be supplied and to be an array including "
                        f"every key in properties. Missing '{missing[0]}'.")
        for key, sub in schema.items():
            problem = strict_schema_problem(sub, f"{where[:-1]}, '{key}')" if where != "()" else f"('{key}')")
            if problem:
                return problem
    elif isinstance(schema, list):
        for sub in schema:
            problem = strict_schema_problem(sub, where)
            if problem:
                return problem
    return None


def function_outputs(body: JSON) -> dict[str, str]:
    """call_id -> output of the function_call_output items in a request's input: the tool results a
    scripted responder driving an agent CLI goes by."""
    return {str(i.get("call_id")): str(i.get("output")) for i in body.get("input") or []
            if isinstance(i, dict) and i.get("type") == "function_call_output"}


def _texts(content: Any, kinds: tuple[str, ...]) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [str(p.get("text", "")) for p in content or [] if isinstance(p, dict) and p.get("type") in kinds]


def parse_request(body: JSON) -> ResponsesRequest:
    messages = [m for m in body.get("input") or [] if isinstance(m, dict) and m.get("type", "message") == "message"]
    users = [m for m in messages if m.get("role") == "user"]
    prompt = "\n".join(_texts(users[-1].get("content"), ("input_text",))) if users else ""
    instructions = [t for m in messages if m.get("role") in ("developer", "system")
                    for t in _texts(m.get("content"), ("input_text",))]
    if body.get("instructions"):
        instructions.append(str(body["instructions"]))
    fmt = (body.get("text") or {}).get("format") or {}
    schema = fmt.get("schema") if fmt.get("type") == "json_schema" else None
    return ResponsesRequest(str(body.get("model")), prompt, instructions, schema, body)


class FakeOpenAI(FakeServer[RequestRecord]):
    thread_name = "fake-openai"

    def __init__(self, *, api_key: str | None = None, responder: Responder | None = None) -> None:
        super().__init__()
        self.api_key = api_key
        self.responder: Responder = responder or default_responder
        self._faults: deque[FaultKind] = deque()

    @property
    def base_url(self) -> str:
        """The provider's base_url, ending in /v1 as codex expects (it appends /responses)."""
        return f"{self.origin}/v1"

    def script(self, *faults: FaultKind | int) -> None:
        with self._lock:
            self._faults.extend(_SHORTHANDS[f] if isinstance(f, int) else f for f in faults)

    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    @property
    def responses(self) -> list[RequestRecord]:
        return [r for r in self.requests if r.method == "POST" and r.path.rstrip("/") == "/v1/responses"]

    # ------------------------------------------------------------------------------------------ serving

    def _handle(self, h: FakeHandler) -> None:
        with self._lock:
            self._seq += 1
            rec = RequestRecord(self._seq, h.command, h.path.split("?")[0], _redacted(h))
            self._log.append(rec)
        try:
            raw = read_body(h)
            if raw:
                rec.body = json.loads(raw)
            self._route(h, rec)
        except (OSError, ValueError) as exc:
            if isinstance(exc, ValueError):
                self._json(h, rec, 400, _error("invalid_request_error", f"body is not JSON: {exc}", None))
            h.close_connection = True
        except Exception as exc:  # re-raised in the test thread when the fake stops
            self._failed(exc)
            h.close_connection = True

    def _route(self, h: FakeHandler, rec: RequestRecord) -> None:
        if h.command == "GET" and rec.path.rstrip("/") == "/v1/models":
            self._json(h, rec, 200, {"object": "list", "data": []})
            return
        if h.command != "POST" or rec.path.rstrip("/") != "/v1/responses":
            self._json(h, rec, 404, _error("invalid_request_error", f"no route {h.command} {rec.path}", None))
            return
        auth = h.headers.get("authorization") or ""
        key = auth[7:] if auth.lower().startswith("bearer ") else ""
        if not key or (self.api_key is not None and key != self.api_key):
            self._json(h, rec, 401, _error("invalid_request_error", "Missing or incorrect API key.", "invalid_api_key"))
            return
        request = parse_request(rec.body)
        if request.schema is not None and (rec.body.get("text") or {}).get("format", {}).get("strict"):
            problem = strict_schema_problem(request.schema)
            if problem:
                name = rec.body["text"]["format"].get("name", "schema")
                self._json(h, rec, 400, _error("invalid_request_error",
                                               f"Invalid schema for response_format '{name}': {problem}",
                                               "invalid_json_schema"))
                return
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
        rec.fault = fault
        if fault in _STATUS:
            status, code, message = _STATUS[fault]
            self._json(h, rec, status, _error(code, message, code),
                       {"retry-after": "0"} if status == 429 else {})
            return
        if fault == "drop":
            hard_close(h)
            return
        answer = self.responder(request)
        if isinstance(answer, dict):
            response = self._response(rec.seq, request, "")
            response["output"] = answer["output"]
            rec.usage = response["usage"]
            self._stream_items(h, rec, response)
            return
        text = answer if isinstance(answer, str) else json.dumps({"items": answer}, ensure_ascii=False)
        if fault == "malformed":
            text = repr({"items": answer})
        rec.answer = text
        response = self._response(rec.seq, request, text)
        rec.usage = response["usage"]
        if rec.body.get("stream"):
            self._stream(h, rec, response, cut=fault == "drop_mid_stream")
        else:
            self._json(h, rec, 200, response)

    @staticmethod
    def _response(seq: int, request: ResponsesRequest, text: str) -> JSON:
        sent = len(request.prompt) + sum(len(t) for t in request.instructions)
        usage: JSON = {"input_tokens": sent // 4 + 1, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": len(text) // 4 + 1, "output_tokens_details": {"reasoning_tokens": 0}}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        message = {"type": "message", "id": f"msg_fake{seq}", "status": "completed", "role": "assistant",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]}
        return {"id": f"resp_fake{seq}", "object": "response", "created_at": int(time.time()),
                "status": "completed", "model": request.model, "output": [message], "usage": usage}

    def _stream(self, h: FakeHandler, rec: RequestRecord, response: JSON, *, cut: bool) -> None:
        rec.status = 200
        message = response["output"][0]
        text = message["content"][0]["text"]
        head = dict(response, status="in_progress", output=[], usage=None)
        empty = dict(message, status="in_progress", content=[])
        part = {"type": "output_text", "text": "", "annotations": []}
        ids = {"item_id": message["id"], "output_index": 0, "content_index": 0}
        events: list[JSON] = [
            {"type": "response.created", "response": head},
            {"type": "response.in_progress", "response": head},
            {"type": "response.output_item.added", "output_index": 0, "item": empty},
            {"type": "response.content_part.added", **ids, "part": part},
            *({"type": "response.output_text.delta", **ids, "delta": d} for d in halves(text)),
            {"type": "response.output_text.done", **ids, "text": text},
            {"type": "response.content_part.done", **ids, "part": message["content"][0]},
            {"type": "response.output_item.done", "output_index": 0, "item": message},
            {"type": "response.completed", "response": response},
        ]
        if cut:
            events = events[:1]
        write_sse(h, _frames(events), {"x-request-id": f"req_fake{rec.seq}"}, cut=cut)

    def _stream_items(self, h: FakeHandler, rec: RequestRecord, response: JSON) -> None:
        """Output items (tool calls) streamed whole: added, then done, each."""
        rec.status = 200
        head = dict(response, status="in_progress", output=[], usage=None)
        events: list[JSON] = [{"type": "response.created", "response": head}]
        for n, item in enumerate(response["output"]):
            events.append({"type": "response.output_item.added", "output_index": n, "item": item})
            events.append({"type": "response.output_item.done", "output_index": n, "item": item})
        events.append({"type": "response.completed", "response": response})
        write_sse(h, _frames(events))

    def _json(self, h: FakeHandler, rec: RequestRecord, status: int, body: JSON,
              headers: dict[str, str] | None = None) -> None:
        rec.status = status
        write_json(h, status, body, {"x-request-id": f"req_fake{rec.seq}", **(headers or {})})


def provider_overrides(base_url: str, *, env_key: str = "FAKE_KEY", retries: int = 0) -> list[str]:
    """`codex -c` overrides (key=value, the value TOML) that point codex at the fake with a provider
    named "fake": no retries of its own unless asked, so a test sees every attempt."""
    provider = (f'{{ name = "fake", base_url = "{base_url}", wire_api = "responses", env_key = "{env_key}", '
                f"request_max_retries = {retries}, stream_max_retries = {retries}, stream_idle_timeout_ms = 10000 }}")
    return ['model_provider="fake"', f"model_providers.fake={provider}"]


def _error(code: str, message: str, param_code: str | None) -> JSON:
    return {"error": {"message": message, "type": code, "param": None, "code": param_code}}


def _redacted(h: FakeHandler) -> dict[str, str]:
    return {k.lower(): ("Bearer <redacted>" if k.lower() == "authorization" else v) for k, v in h.headers.items()}


def _frames(events: list[JSON]) -> Iterator[str]:
    """The Responses API's events, numbered in order."""
    return (sse_event(event["type"], dict(event, sequence_number=n)) for n, event in enumerate(events))


@contextlib.contextmanager
def serve(**kwargs: Any) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(**kwargs) as fake:
        yield fake
