"""A fake Gemini API (generativelanguage v1beta) over real HTTP, for driving the real `gemini` CLI.

Never contacts the live API: it binds 127.0.0.1 on a free port; the CLI is pointed at it with
`GOOGLE_GEMINI_BASE_URL=fake.base_url` and `GEMINI_API_KEY=<anything>` (`fake.env()`): gemini-cli
0.61 then uses its "gateway" auth and the @google/genai SDK sends every request here.

    with FakeGemini() as fake:
        fake.responder = fn                # fn(GeminiRequest) -> str | list of parts
        ... run gemini with fake.env() ...
        fake.generations                   # RequestRecord of every generateContent call, in order

Endpoints
---------
    POST /v1beta/models/{model}:streamGenerateContent?alt=sse   SSE: the answer's parts in one
         chunk (a text answer in two halves), the last with finishReason STOP and usageMetadata
    POST /v1beta/models/{model}:generateContent                 the same answer as one JSON response
    POST /v1beta/models/{model}:countTokens                      {"totalTokens": n}
    POST /v1beta/models/{model}:embedContent                     a small embedding
    GET  /v1beta/models[/{model}]                                an empty list / a model description
    Auth: `x-goog-api-key` (or `?key=`); none -> 401 UNAUTHENTICATED.

Answers
-------
    The responder gets the request's model, the text of its last user turn, the function responses
    in that turn (name -> response), the tools offered and the whole body. It returns a str (a text
    answer) or a list of Gemini parts answered as they are (e.g. [{"functionCall": {"name":
    "write_file", "args": {...}}}] to drive the CLI's tools). The default answers "Nothing to add."
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.fake_http import JSON, FakeHandler, FakeServer, read_body, write_json, write_sse


@dataclass(frozen=True)
class GeminiRequest:
    model: str
    method: str  # streamGenerateContent, generateContent
    prompt: str  # the text parts of the last user turn
    responses: dict[str, Any]  # the functionResponse parts of the last user turn, by name
    tools: frozenset[str]  # the function declarations offered
    body: JSON


@dataclass
class RequestRecord:
    seq: int
    method: str
    path: str
    body: JSON = field(default_factory=dict)
    status: int | None = None
    answer: list[JSON] | None = None  # the parts answered


Responder = Callable[[GeminiRequest], str | list[JSON]]


def default_responder(request: GeminiRequest) -> str:
    return "Nothing to add."


def parse_request(model: str, method: str, body: JSON) -> GeminiRequest:
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    users = [c for c in contents if c.get("role", "user") == "user"]
    parts = [p for p in (users[-1].get("parts") or []) if isinstance(p, dict)] if users else []
    prompt = "\n".join(str(p["text"]) for p in parts if isinstance(p.get("text"), str))
    responses = {str(p["functionResponse"].get("name")): p["functionResponse"].get("response")
                 for p in parts if isinstance(p.get("functionResponse"), dict)}
    tools = frozenset(str(d.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)
                      for d in t.get("functionDeclarations") or [] if isinstance(d, dict))
    return GeminiRequest(model, method, prompt, responses, tools, body)


class FakeGemini(FakeServer[RequestRecord]):
    thread_name = "fake-gemini"

    def __init__(self, *, responder: Responder | None = None) -> None:
        super().__init__()
        self.responder: Responder = responder or default_responder

    @property
    def base_url(self) -> str:
        return self.origin

    def env(self) -> dict[str, str]:
        return {"GOOGLE_GEMINI_BASE_URL": self.base_url, "GEMINI_API_KEY": "fake-gemini-key"}

    @property
    def generations(self) -> list[RequestRecord]:
        return [r for r in self.requests if r.path.endswith(("GenerateContent", ":generateContent"))]

    # ------------------------------------------------------------------------------------------ serving

    def _handle(self, h: FakeHandler) -> None:
        url = urlsplit(h.path)
        with self._lock:
            self._seq += 1
            rec = RequestRecord(self._seq, h.command, url.path)
            self._log.append(rec)
        try:
            raw = read_body(h)
            if raw:
                rec.body = json.loads(raw)
            key = h.headers.get("x-goog-api-key") or (parse_qs(url.query).get("key") or [""])[0]
            if not key:
                self._json(h, rec, 401, {"error": {"code": 401, "message": "API key not valid.",
                                                   "status": "UNAUTHENTICATED"}})
                return
            self._route(h, rec)
        except (OSError, ValueError) as exc:
            if isinstance(exc, ValueError):
                self._json(h, rec, 400, {"error": {"code": 400, "message": f"body is not JSON: {exc}",
                                                   "status": "INVALID_ARGUMENT"}})
            h.close_connection = True
        except Exception as exc:  # re-raised in the test thread when the fake stops
            self._failed(exc)
            h.close_connection = True

    def _route(self, h: FakeHandler, rec: RequestRecord) -> None:
        path = rec.path.rstrip("/")
        if h.command == "GET" and path.endswith("/models"):
            self._json(h, rec, 200, {"models": []})
            return
        head, _, method = path.rpartition(":")
        model = head.rpartition("/")[2]
        if h.command == "GET" and "/models/" in path:
            self._json(h, rec, 200, {"name": f"models/{path.rpartition('/')[2]}", "inputTokenLimit": 1_000_000,
                                     "outputTokenLimit": 65_536})
        elif method == "countTokens":
            self._json(h, rec, 200, {"totalTokens": len(json.dumps(rec.body)) // 4 + 1})
        elif method in ("embedContent", "batchEmbedContents"):
            self._json(h, rec, 200, {"embedding": {"values": [0.0] * 8}})
        elif method in ("generateContent", "streamGenerateContent"):
            answer = self.responder(parse_request(model, method, rec.body))
            parts = [{"text": answer}] if isinstance(answer, str) else answer
            rec.answer = parts
            if method == "generateContent":
                self._json(h, rec, 200, _response(model, parts, rec.body, final=True))
            else:
                self._stream(h, rec, model, parts)
        else:
            self._json(h, rec, 404, {"error": {"code": 404, "message": f"no route {h.command} {rec.path}",
                                               "status": "NOT_FOUND"}})

    def _stream(self, h: FakeHandler, rec: RequestRecord, model: str, parts: list[JSON]) -> None:
        rec.status = 200
        text = [p for p in parts if isinstance(p.get("text"), str)]
        if len(parts) == 1 and text and len(text[0]["text"]) > 1:
            whole = text[0]["text"]
            chunks = [[{"text": whole[: len(whole) // 2]}], [{"text": whole[len(whole) // 2:]}]]
        else:
            chunks = [parts]
        events = (_response(model, chunk, rec.body, final=n == len(chunks) - 1) for n, chunk in enumerate(chunks))
        write_sse(h, (f"data: {json.dumps(event)}\r\n\r\n" for event in events))

    def _json(self, h: FakeHandler, rec: RequestRecord, status: int, body: JSON) -> None:
        rec.status = status
        write_json(h, status, body)


def _response(model: str, parts: list[JSON], body: JSON, *, final: bool) -> JSON:
    candidate: JSON = {"content": {"role": "model", "parts": parts}, "index": 0}
    response: JSON = {"candidates": [candidate], "modelVersion": model, "responseId": "fake"}
    if final:
        candidate["finishReason"] = "STOP"
        sent = len(json.dumps(body.get("contents") or [])) // 4 + 1
        said = len(json.dumps(parts)) // 4 + 1
        response["usageMetadata"] = {"promptTokenCount": sent, "candidatesTokenCount": said,
                                     "totalTokenCount": sent + said}
    return response


@contextlib.contextmanager
def serve(**kwargs: Any) -> Iterator[FakeGemini]:
    with FakeGemini(**kwargs) as fake:
        yield fake
