"""A fake Anthropic Messages API over real HTTP, for driving the real `anthropic` SDK in tests.

Never contacts the live API: it binds 127.0.0.1 on a free port and the SDK is pointed at it.

Start it
--------
    from tests.support.fake_anthropic import FakeAnthropic, Fault, ModelSpec

    with FakeAnthropic() as fake:                       # or the `fake_anthropic` fixture at the end
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="test-key", max_retries=0, timeout=2)
        # or: for k, v in fake.env().items(): monkeypatch.setenv(k, v)   (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY)

    `serve(**kwargs)` is the same as a context manager function; `FakeAnthropic(latency=0.05)` (or
    `fake.latency = ...`) makes every /v1/messages answer wait that long, concurrently, as a model would.

    Leaving the `with` block stops the server and re-raises the first error raised inside it by the
    responder or the `on_request` hook (they run in server threads, where pytest cannot see them).
    `fake.check()` does the same on demand.

Endpoints
---------
    POST /v1/messages                 Message JSON (or SSE when the body has "stream": true)
    POST /v1/messages/count_tokens    {"input_tokens": n}
    GET  /v1/models/{id}, /v1/models  ModelInfo (with capabilities) / a page of them; 404 for unknown ids

    Auth: `Authorization: Bearer <key>` (what SDK 2.x sends) or `x-api-key`; none -> 401 authentication_error.
    `FakeAnthropic(echo_key=True)`: every 400 and 404 error message quotes the key the request presented
    (what some gateways do), for tests that the key is stored and shown nowhere.
    `FakeAnthropic(api_key="k")` also rejects any other key.

Models and windows
------------------
    FakeAnthropic(models=[ModelSpec("tiny", max_input_tokens=500, max_tokens=200)])  # replaces DEFAULT_MODELS
    fake.add_model(ModelSpec("claude-haiku-4-5", max_input_tokens=1_000))          # add or replace one
    Tokens are counted by `count_request_tokens(body, chars_per_token)`: every text segment of the system
    prompt and of the messages (text blocks, tool_use inputs as JSON, tool_result text) counts
    ceil(len / chars_per_token) (3.0 unless the ModelSpec says otherwise). Tools and schemas do not count.
    /v1/messages answers 400 invalid_request_error "prompt is too long: N tokens > M maximum" when N >
    max_input_tokens, and 400 when max_tokens exceeds the model's max_tokens; count_tokens just counts.
    An answer longer than the request's max_tokens is cut there with stop_reason "max_tokens".
    Also 400: temperature/top_p/top_k (removed in API 2026-10-21), structured output on a model with
    `structured_outputs=False`, a forced tool on a model with `forced_tool_choice=False` (the 5.5 models).

Prompt caching
--------------
    cache_control on system/message blocks (or the top-level `cache_control`, which marks the last block)
    marks breakpoints. The first request with a given prefix reports cache_creation_input_tokens, later ones
    with the same model and prefix report cache_read_input_tokens; input_tokens is the rest.
    `ModelSpec.min_cacheable_tokens` (default 0) models the minimum; `fake.reset_cache()` forgets all.

Answers (the responder)
-----------------------
    The default responder (`default_responder`) parses the transcript chunk rendered by
    checkpoint.extract.prompt (turn headers "[<label> <role> part i/n files: a.py, b.py]", the last two
    optional) and returns one item per sentence "We'll use marker-<hex> ..." (the decisions synth.py plants):
        {"kind": "decision", "statement": <sentence>, "rationale": None, "confidence": 0.9,
         "turn_ids": [<label of that turn>], "files": [<files of that turn header>]}
    plus "same_as" when the request's schema has that property: the id of the item listed under
    "Already recorded" (`- (<id>) <kind>: <statement>`, before the first turn header) naming the same
    marker, else null. Text before the first turn header is never a source of items.
    The answer {"items": [...]} goes out as
        - JSON text in a text block, stop_reason "end_turn", when the request has
          output_config.format.type == "json_schema" (or no tool is forced);
        - the `input` of a tool_use block, stop_reason "tool_use", when tool_choice forces a tool
          ({"type": "tool", "name": ...}, or {"type": "any"}: the first tool);
        - the same, unforced, when the request offers a tool named "StructuredOutput": what Claude Code
          (`claude -p --json-schema`) offers the model instead of output_config. Once the request carries
          that call's tool_result, the turn ends with a short text block, stop_reason "end_turn" (an
          agent's loop: answering every request with a tool call would never end).
    Replace it: `fake.responder = fn`, fn(MessageRequest) returning
        - a list of item dicts (wrapped as above),
        - a str (sent verbatim as one text block, stop_reason "end_turn"), or
        - a dict with "content" (a full Message; id/type/role/model/usage/stop_reason are filled if absent).

Faults
------
    Only requests that pass validation (auth, request shape, model, window) take a fault.
    Queue, consumed in order by the next requests to an endpoint (default /v1/messages):
        fake.script(529, Fault("rate_limit", retry_after=1), "drop")
        fake.script("api_error", endpoint="count_tokens")          # endpoints: messages, count_tokens, models
    Seeded random rates, drawn once per /v1/messages request when its queue is empty:
        fake.set_rates({"overloaded": 0.1, "rate_limit": 0.05, "drop": 0.02}, seed=7, retry_after=0.01)
    `fake.clear_faults()` empties queues and rates. Kinds (ints 400/429/500/503/529 are shorthands):
        rate_limit         429 rate_limit_error + retry-after (whole s, rounded up) and retry-after-ms
                           (retry_after=1.0 by default; 0 sends neither header)
        api_error          500 api_error             unavailable   503 api_error
        overloaded         529 overloaded_error      prompt_too_long  400 "prompt is too long: N > M"
        slow               wait `delay` seconds (default 3; cut short when the fake stops) then answer
        drop               close the connection without a response
        drop_mid_body      send status + headers + half the body, then close; a stream: half the events,
                           then close without the last chunk
        malformed_json     a text block that is not JSON (a Python repr), stop_reason "end_turn" (also when
                           a tool is forced: then there is no tool_use block)
        schema_invalid     valid JSON against the schema's shape but invalid values (kind "verdict",
                           confidence 7.5, turn_ids []), in the request's mode
        max_tokens         stop_reason "max_tokens"; text mode: the JSON cut at 60 %; tool mode: input {}
        refusal            stop_reason "refusal", a short text block, stop_details {"type": "refusal"}
        context_window_exceeded  like max_tokens, with stop_reason "model_context_window_exceeded"
    What the SDK (2.14) raises: 429 RateLimitError, 500 InternalServerError, 503 ServiceUnavailableError,
    529 OverloadedError (those two subclass InternalServerError), 400 BadRequestError (not retried);
    slow -> APITimeoutError (a subclass of APIConnectionError); drop, drop_mid_body -> APIConnectionError;
    drop_mid_body on a stream -> APIConnectionError from 2.17 (2.16 let httpx2.RemoteProtocolError out raw).
    Body faults rewrite the items of the responder; a responder returning a str or full Message is bypassed
    (the default responder's items are used).

Request log and hook
--------------------
    fake.requests / fake.message_requests: snapshots of RequestRecord (seq, endpoint, path, model, body,
    headers with the key redacted, auth scheme, retry_count, fault, status, response JSON, stop_reason, usage).
    A record is in the log before the client receives any byte of its answer.
    fake.on_request = fn(record): called in the server thread after each /v1/messages request is answered
    (response written or connection dropped; the client may be processing it concurrently). Its
    exceptions are collected and re-raised when the fake stops. fake.wait_idle() waits for in-flight requests.
    A "slow" request that is still waiting when the fake stops is abandoned: no answer, no hook call.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import math
import random
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Self, cast, get_args
from urllib.parse import unquote, urlsplit

import pytest

from tests.support.fake_http import (
    FakeHandler,
    FakeServer,
    halves,
    hard_close,
    read_body,
    sse_event,
    write_json,
    write_sse,
)

JSON = dict[str, Any]

FaultKind = Literal[
    "rate_limit",
    "api_error",
    "unavailable",
    "overloaded",
    "prompt_too_long",
    "slow",
    "drop",
    "drop_mid_body",
    "malformed_json",
    "schema_invalid",
    "max_tokens",
    "refusal",
    "context_window_exceeded",
]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
Endpoint = Literal["messages", "count_tokens", "models"]
Mode = Literal["json_schema", "tool", "text"]

_STATUS_FAULTS: dict[str, tuple[int, str, str]] = {
    "rate_limit": (429, "rate_limit_error", "This request would exceed your organization's rate limit."),
    "api_error": (500, "api_error", "Internal server error"),
    "unavailable": (503, "api_error", "Service unavailable"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
}
_BODY_FAULTS = frozenset({"malformed_json", "schema_invalid", "max_tokens", "refusal", "context_window_exceeded"})
STRUCTURED_OUTPUT_TOOL = "StructuredOutput"  # the tool Claude Code offers for --json-schema
_STATUS_SHORTHANDS: dict[int, FaultKind] = {
    400: "prompt_too_long", 429: "rate_limit", 500: "api_error", 503: "unavailable", 529: "overloaded",
}


@dataclass
class ModelSpec:
    """One model the fake serves: its window, output limit, tokenizer ratio and capabilities."""

    id: str
    max_input_tokens: int = 200_000
    max_tokens: int = 64_000
    display_name: str | None = None
    chars_per_token: float = 3.0
    structured_outputs: bool = True
    forced_tool_choice: bool = True
    min_cacheable_tokens: int = 0
    created_at: str = "2025-10-01T00:00:00Z"
    lifecycle: Literal["active", "deprecated", "retired"] = "active"
    line: str | None = None

    def info(self) -> JSON:
        """The ModelInfo JSON for GET /v1/models/{id} (every field the SDK's type requires)."""

        def cap(ok: bool) -> JSON:
            return {"supported": ok}

        return {
            "type": "model",
            "id": self.id,
            "display_name": self.display_name or self.id,
            "created_at": self.created_at,
            "lifecycle": self.lifecycle,
            "deprecated_at": None,
            "retires_at": None,
            "line": self.line,
            "max_input_tokens": self.max_input_tokens,
            "max_tokens": self.max_tokens,
            "capabilities": {
                "batch": cap(True),
                "citations": cap(True),
                "code_execution": cap(False),
                "context_management": {"supported": False},
                "effort": {"supported": True, "low": cap(True), "medium": cap(True), "high": cap(True),
                           "max": cap(True), "xhigh": cap(False)},
                "image_input": cap(True),
                "pdf_input": cap(True),
                "server_tools": {"supported": False, "code_execution": cap(False), "web_search": cap(False)},
                "structured_outputs": cap(self.structured_outputs),
                "thinking": {"supported": True, "types": {"adaptive": cap(False), "between_tools": cap(False),
                                                          "disabled": cap(True), "enabled": cap(True)}},
            },
        }


DEFAULT_MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("claude-haiku-4-5", 200_000, 64_000, "Claude Haiku 4.5", line="haiku"),
    ModelSpec("claude-haiku-4-5-20251001", 200_000, 64_000, "Claude Haiku 4.5", line="haiku"),
    ModelSpec("claude-haiku-5-5", 1_000_000, 128_000, "Claude Haiku 5.5", line="haiku"),
    ModelSpec("claude-sonnet-4-5", 200_000, 64_000, "Claude Sonnet 4.5", line="sonnet", lifecycle="deprecated"),
    ModelSpec("claude-sonnet-4-6", 1_000_000, 128_000, "Claude Sonnet 4.6", line="sonnet"),
    ModelSpec("claude-sonnet-5", 1_000_000, 128_000, "Claude Sonnet 5", line="sonnet"),
    ModelSpec("claude-sonnet-5-5", 1_000_000, 128_000, "Claude Sonnet 5.5", line="sonnet", forced_tool_choice=False),
    ModelSpec("claude-opus-4-5", 200_000, 64_000, "Claude Opus 4.5", line="opus", lifecycle="deprecated"),
    ModelSpec("claude-opus-4-6", 1_000_000, 128_000, "Claude Opus 4.6", line="opus"),
    ModelSpec("claude-opus-4-7", 1_000_000, 128_000, "Claude Opus 4.7", line="opus"),
    ModelSpec("claude-opus-4-8", 1_000_000, 128_000, "Claude Opus 4.8", line="opus"),
)


@dataclass(frozen=True)
class Fault:
    """One injected fault. `retry_after` applies to status faults, `delay` to "slow"."""

    kind: FaultKind
    retry_after: float | None = None  # seconds; rate_limit defaults to 1.0 (0 sends no header)
    delay: float = 3.0

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; one of {', '.join(FAULT_KINDS)}")

    @classmethod
    def of(cls, spec: Fault | FaultKind | int) -> Fault:
        if isinstance(spec, Fault):
            return spec
        if isinstance(spec, int):
            if spec not in _STATUS_SHORTHANDS:
                raise ValueError(f"no fault for status {spec}; use one of {sorted(_STATUS_SHORTHANDS)}")
            return cls(_STATUS_SHORTHANDS[spec])
        return cls(spec)


@dataclass(frozen=True)
class MessageRequest:
    """What a responder gets: the parsed /v1/messages body plus what the fake read from it."""

    body: JSON
    model: str
    mode: Mode  # "json_schema": output_config format; "tool": a forced tool; "text": neither
    tool_name: str | None  # the forced tool's name (mode "tool")
    schema: JSON | None  # output_config.format.schema, or the forced tool's input_schema
    system: str  # the system prompt's text
    prompt: str  # the text of the user messages, joined by blank lines
    seq: int
    after_tool_result: bool = False  # the last message returns the StructuredOutput call: end the turn


@dataclass
class RequestRecord:
    """One request as the fake saw and answered it. The API key's value is never stored."""

    seq: int
    method: str
    path: str
    endpoint: str  # "messages", "count_tokens", "models" or "other"
    headers: dict[str, str]  # lower-cased names; authorization / x-api-key values redacted
    auth: str | None  # "bearer", "x-api-key" or None
    retry_count: int  # the SDK's x-stainless-retry-count
    body: JSON | None = None
    model: str | None = None
    fault: FaultKind | None = None
    status: int | None = None  # None when the connection was dropped before a status line
    response: JSON | None = None  # the JSON answer (in full, even when cut mid-body)
    error_type: str | None = None
    stop_reason: str | None = None
    usage: JSON | None = None
    started: float = 0.0
    finished: float | None = None


ResponderResult = list[JSON] | JSON | str
Responder = Callable[[MessageRequest], ResponderResult]


# ---------------------------------------------------------------------------------------------- responder

_HEADER_RE = re.compile(r"^\[(?P<label>t\d+) (?P<role>user|assistant|tool)(?: part (?P<part>\d+)/(?P<parts>\d+))?"
                        r"(?: files: (?P<files>.*))?\]$", re.MULTILINE)
DECISION_RE = re.compile(r"We(?:'|’)ll use marker-[0-9a-f]+\b[^.!?\n]*[.!?]?")
_MARKER_RE = re.compile(r"marker-[0-9a-f]+\b")
_KNOWN_RE = re.compile(r"^- \((?P<id>[^)\n]+)\) (?P<kind>\w+): (?P<statement>.*)$", re.MULTILINE)


@dataclass(frozen=True)
class ParsedTurn:
    label: str  # what a model cites in turn_ids: the header's label, never the turn's id
    role: str
    files: tuple[str, ...]
    part: int
    parts: int
    text: str


def parse_turns(prompt: str) -> list[ParsedTurn]:
    """The turns of a chunk rendered by checkpoint.extract.prompt.render_chunk, in order."""
    headers = list(_HEADER_RE.finditer(prompt))
    turns: list[ParsedTurn] = []
    for i, m in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(prompt)
        files = tuple(m.group("files").split(", ")) if m.group("files") else ()
        part, parts = (int(m.group("part")), int(m.group("parts"))) if m.group("part") else (1, 1)
        text = prompt[m.end() + 1:end].rstrip("\n")
        turns.append(ParsedTurn(m.group("label"), m.group("role"), files, part, parts, text))
    return turns


def known_items(prompt: str) -> dict[str, str]:
    """marker -> item id, from the "Already recorded" lines (`- (<id>) <kind>: <statement>`) before the
    first turn header (checkpoint.extract.prompt.render_known_items)."""
    first = _HEADER_RE.search(prompt)
    head = prompt[: first.start()] if first else prompt
    known: dict[str, str] = {}
    for m in _KNOWN_RE.finditer(head):
        for marker in _MARKER_RE.findall(m.group("statement")):
            known.setdefault(marker, m.group("id"))
    return known


def planted_decisions(prompt: str, *, same_as: bool = False) -> list[JSON]:
    """One decision item per "We'll use marker-<hex> ..." sentence, cited to the turn holding it.

    With `same_as`, every item has a "same_as" key: the id of the "Already recorded" item naming the same
    marker, else None (what a model told about known items would answer)."""
    known = known_items(prompt) if same_as else {}
    items: list[JSON] = []
    for turn in parse_turns(prompt):
        for m in DECISION_RE.finditer(turn.text):
            item: JSON = {"kind": "decision", "statement": m.group(0).strip(), "rationale": None,
                          "confidence": 0.9, "turn_ids": [turn.label], "files": list(turn.files)}
            if same_as:
                marker = _MARKER_RE.search(m.group(0))
                item["same_as"] = known.get(marker.group(0)) if marker else None
            items.append(item)
    return items


def default_responder(request: MessageRequest) -> list[JSON]:
    """planted_decisions of the user text; items carry "same_as" when the request's schema has it."""
    return planted_decisions(request.prompt, same_as='"same_as"' in json.dumps(request.schema or {}))


def last_user_turn(body: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The text of the request's last user message and the tool_use ids its tool results answer: what
    a scripted responder driving an agent CLI goes by."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content, []
        blocks = [b for b in content if isinstance(b, dict)]
        texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        return "\n".join(texts), [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
    return "", []


def tool_use(name: str, tool_id: str, tool_input: JSON) -> JSON:
    """A responder's answer that calls one tool: a Message's content and stop_reason."""
    return {"content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
            "stop_reason": "tool_use"}


# ---------------------------------------------------------------------------------------------- tokens

def _text_of(content: Any) -> list[str]:
    """The text segments of a message's or a system prompt's content."""
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                out.append(str(block.get("text", "")))
            elif kind == "tool_use":
                out.append(json.dumps(block.get("input", {}), sort_keys=True))
            elif kind == "tool_result":
                out.extend(_text_of(block.get("content", "")))
    return out


def _segments(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(text, cache_control) for every countable block of system then messages, in prompt order."""
    segs: list[tuple[str, Any]] = []
    system = body.get("system")
    if isinstance(system, str):
        segs.append((system, None))
    elif isinstance(system, list):
        for block in system:
            if isinstance(block, dict):
                segs.extend((t, block.get("cache_control")) for t in _text_of([block]))
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        if isinstance(content, str):
            segs.append((content, None))
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    segs.extend((t, block.get("cache_control")) for t in _text_of([block]))
    return segs


def tokens_for(text: str, chars_per_token: float = 3.0) -> int:
    return math.ceil(len(text) / chars_per_token)


def count_request_tokens(body: Mapping[str, Any], chars_per_token: float = 3.0) -> int:
    """The fake's token count of a request: what count_tokens answers and what the window check uses."""
    return sum(tokens_for(text, chars_per_token) for text, _ in _segments(body))


# ---------------------------------------------------------------------------------------------- server

class _Stop(Exception):
    """The fake is stopping: abandon this request without answering."""


class _TrackedHandler(FakeHandler):
    """Keeps its connection in the fake's set while it is open, so stop() can cut what is left open."""

    def setup(self) -> None:
        super().setup()
        cast(FakeAnthropic, self.server.fake)._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        cast(FakeAnthropic, self.server.fake)._track(self.connection, add=False)


class _Answer:
    """What the handler will write: JSON (maybe cut mid-body), SSE, or nothing (dropped)."""

    def __init__(self, status: int | None, body: JSON | None = None, headers: Mapping[str, str] | None = None,
                 *, cut: bool = False, stream: bool = False) -> None:
        self.status = status
        self.body = body
        self.headers = dict(headers or {})
        self.cut = cut
        self.stream = stream


class FakeAnthropic(FakeServer[RequestRecord]):
    """The fake API server. See the module docstring for the whole public surface."""

    thread_name = "fake-anthropic"
    handler = _TrackedHandler

    def __init__(self, models: Iterable[ModelSpec] | None = None, *, api_key: str | None = None,
                 responder: Responder | None = None,
                 on_request: Callable[[RequestRecord], None] | None = None, latency: float = 0.0,
                 echo_key: bool = False) -> None:
        super().__init__()
        self.latency = latency
        # Some gateways quote the credential they were given in a 400/404 error: with echo_key every
        # 400 and 404 message ends with the key the request presented.
        self.echo_key = echo_key  # seconds every /v1/messages answer waits, as a model would
        self._models: dict[str, ModelSpec] = {m.id: m for m in (DEFAULT_MODELS if models is None else models)}
        self.api_key = api_key
        self.responder: Responder = responder or default_responder
        self.on_request = on_request
        self._idle = threading.Condition(self._lock)
        self._active = 0
        self._logged: set[int] = set()
        self._queues: dict[str, deque[Fault]] = {"messages": deque(), "count_tokens": deque(), "models": deque()}
        self._rates: dict[FaultKind, float] = {}
        self._rate_fault: dict[str, float] = {}
        self._rng = random.Random(0)
        self._cache: set[str] = set()
        self._conns: set[socket.socket] = set()
        self._stopping = threading.Event()

    # ------------------------------------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        if self._server is None:
            self._stopping.clear()
        return super().start()

    def stop(self) -> None:
        if self._server is not None:
            self._stopping.set()  # a "slow" request still waiting gives up, unanswered
        super().stop()

    def _drain(self) -> None:
        """Let the requests in flight end, then cut the connections still open (clients keep them alive)."""
        self.wait_idle(timeout=5.0)
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    @property
    def base_url(self) -> str:
        return self.origin

    def env(self, api_key: str = "test-key") -> dict[str, str]:
        """Environment for code that builds its own client: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY."""
        return {"ANTHROPIC_BASE_URL": self.base_url, "ANTHROPIC_API_KEY": self.api_key or api_key}

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until no request is being handled; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._active:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    # ------------------------------------------------------------------------------------------ config

    @property
    def models(self) -> dict[str, ModelSpec]:
        with self._lock:
            return dict(self._models)

    def add_model(self, spec: ModelSpec) -> None:
        with self._lock:
            self._models[spec.id] = spec

    def remove_model(self, model_id: str) -> None:
        with self._lock:
            self._models.pop(model_id, None)

    def script(self, *faults: Fault | FaultKind | int, endpoint: Endpoint = "messages") -> None:
        """Queue faults for the next requests to `endpoint`, one per request, in order."""
        parsed = [Fault.of(f) for f in faults]
        if endpoint != "messages":
            bad = [f.kind for f in parsed if f.kind in _BODY_FAULTS or f.kind == "prompt_too_long"]
            if bad:
                raise ValueError(f"{bad} only make sense on /v1/messages")
        with self._lock:
            self._queues[endpoint].extend(parsed)

    def set_rates(self, rates: Mapping[FaultKind, float], *, seed: int, retry_after: float | None = None,
                  delay: float = 3.0) -> None:
        """Random faults for /v1/messages: each request takes kind k with probability rates[k]."""
        for kind in rates:
            Fault(kind)
        if sum(rates.values()) > 1.0 + 1e-9:
            raise ValueError("fault rates add up to more than 1")
        with self._lock:
            self._rates = dict(rates)
            self._rate_fault = {"retry_after": -1.0 if retry_after is None else retry_after, "delay": delay}
            self._rng = random.Random(seed)

    def clear_faults(self) -> None:
        with self._lock:
            for q in self._queues.values():
                q.clear()
            self._rates = {}

    def pending_faults(self, endpoint: Endpoint = "messages") -> int:
        with self._lock:
            return len(self._queues[endpoint])

    def reset_cache(self) -> None:
        with self._lock:
            self._cache.clear()

    def count_tokens(self, body: Mapping[str, Any]) -> int:
        """The count the fake gives `body` (its model's chars_per_token; 3.0 for unknown models)."""
        spec = self.models.get(str(body.get("model")))
        return count_request_tokens(body, spec.chars_per_token if spec else 3.0)

    # ------------------------------------------------------------------------------------------ log

    @property
    def message_requests(self) -> list[RequestRecord]:
        return [r for r in self.requests if r.endpoint == "messages"]

    # ------------------------------------------------------------------------------------------ internals

    def _append(self, rec: RequestRecord) -> None:
        with self._lock:
            if rec.seq not in self._logged:
                self._logged.add(rec.seq)
                self._log.append(rec)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _next_fault(self, endpoint: str) -> Fault | None:
        with self._lock:
            queue = self._queues.get(endpoint)
            if queue:
                return queue.popleft()
            if endpoint != "messages" or not self._rates:
                return None
            u = self._rng.random()
            acc = 0.0
            for kind in FAULT_KINDS:
                acc += self._rates.get(kind, 0.0)
                if u < acc:
                    ra = self._rate_fault.get("retry_after", -1.0)
                    return Fault(kind, retry_after=None if ra < 0 else ra,
                                 delay=self._rate_fault.get("delay", 3.0))
            return None

    def _handle(self, h: FakeHandler) -> None:
        with self._idle:
            self._active += 1
            self._seq += 1
            seq = self._seq
        record: RequestRecord | None = None
        try:
            record = self._new_record(h, seq)
            answer = self._route(h, record)
            if self.echo_key:
                self._quote_key(h, answer)
            self._deliver(h, record, answer)
            if record.endpoint == "messages":
                hook = self.on_request
                if hook is not None:
                    try:
                        hook(record)
                    except BaseException as exc:  # re-raised in the test thread by check()
                        self._failed(exc)
        except _Stop:
            h.close_connection = True
        except Exception as exc:
            self._failed(exc)
            h.close_connection = True
            with contextlib.suppress(OSError):
                write_json(h, 500, _error("api_error", f"fake server error: {exc!r}", seq))
        finally:
            if record is not None and record.finished is None:
                record.finished = time.monotonic()
            with self._idle:
                self._active -= 1
                self._idle.notify_all()

    def _new_record(self, h: FakeHandler, seq: int) -> RequestRecord:
        path = urlsplit(h.path).path
        headers: dict[str, str] = {}
        auth: str | None = None
        for name, value in h.headers.items():
            low = name.lower()
            if low == "authorization":
                auth = "bearer" if value.lower().startswith("bearer ") else auth
                value = value.split(" ", 1)[0] + " <redacted>"
            elif low == "x-api-key":
                auth = auth or "x-api-key"
                value = "<redacted>"
            headers[low] = value
        try:
            retry_count = int(h.headers.get("x-stainless-retry-count", "0"))
        except ValueError:
            retry_count = 0
        if path.rstrip("/") == "/v1/messages":
            endpoint = "messages"
        elif path.rstrip("/") == "/v1/messages/count_tokens":
            endpoint = "count_tokens"
        elif path.startswith("/v1/models"):
            endpoint = "models"
        else:
            endpoint = "other"
        record = RequestRecord(seq=seq, method=h.command, path=path, endpoint=endpoint, headers=headers,
                               auth=auth, retry_count=retry_count, started=time.monotonic())
        raw = read_body(h)
        if raw:
            try:
                parsed = json.loads(raw)
                record.body = parsed if isinstance(parsed, dict) else {"_": parsed}
            except ValueError:
                record.body = None
                record.error_type = "unparsable"
        if record.body is not None and isinstance(record.body.get("model"), str):
            record.model = record.body["model"]
        return record

    @staticmethod
    def _presented_key(h: FakeHandler) -> str:
        authz = h.headers.get("authorization", "")
        key = authz[7:].strip() if authz.lower().startswith("bearer ") else ""
        return key or (h.headers.get("x-api-key") or "").strip()

    def _quote_key(self, h: FakeHandler, answer: _Answer) -> None:
        error = answer.body.get("error") if answer.status in (400, 404) and answer.body else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            error["message"] += f" (request authenticated with key {self._presented_key(h)})"

    def _key_ok(self, h: FakeHandler) -> bool:
        key = self._presented_key(h)
        if not key:
            return False
        return self.api_key is None or key == self.api_key

    def _route(self, h: FakeHandler, rec: RequestRecord) -> _Answer:
        if rec.endpoint == "other" or (rec.endpoint == "models" and h.command != "GET") or (
                rec.endpoint in ("messages", "count_tokens") and h.command != "POST"):
            return _Answer(404, _error("not_found_error", f"Not found: {h.command} {rec.path}", rec.seq))
        if not self._key_ok(h):
            has_key = bool(h.headers.get("authorization") or h.headers.get("x-api-key"))
            msg = "invalid x-api-key" if has_key else "x-api-key header is required"
            return _Answer(401, _error("authentication_error", msg, rec.seq))
        if rec.endpoint == "models":
            return self._models_answer(rec)
        if rec.error_type == "unparsable" or rec.body is None:
            return _Answer(400, _error("invalid_request_error", "Request body is not valid JSON", rec.seq))
        body = rec.body
        model = body.get("model")
        if not isinstance(model, str):
            return _Answer(400, _error("invalid_request_error", "model: Field required", rec.seq))
        spec = self.models.get(model)
        if spec is None:
            return _Answer(404, _error("not_found_error", f"model: {model}", rec.seq))
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _Answer(400, _error("invalid_request_error", "messages: Field required", rec.seq))
        for key in ("temperature", "top_p", "top_k"):
            if key in body:
                return _Answer(400, _error("invalid_request_error", f"{key}: Extra inputs are not permitted",
                                           rec.seq))
        counted = count_request_tokens(body, spec.chars_per_token)
        if rec.endpoint == "count_tokens":
            fault = self._next_fault("count_tokens")
            if fault is not None:
                rec.fault = fault.kind
                status_answer = self._transport_or_status(fault, rec, counted, spec)
                if status_answer is not None:
                    return status_answer
            return _Answer(200, {"input_tokens": counted}, cut=fault is not None and fault.kind == "drop_mid_body")
        request = self._parse_request(body, spec, rec.seq)
        if isinstance(request, _Answer):
            return request
        if counted > spec.max_input_tokens:
            return _Answer(400, _error("invalid_request_error",
                                       f"prompt is too long: {counted} tokens > {spec.max_input_tokens} maximum",
                                       rec.seq))
        fault = self._next_fault("messages")
        rec.fault = fault.kind if fault else None
        stream = bool(body.get("stream"))
        if fault is not None:
            status_answer = self._transport_or_status(fault, rec, counted, spec)
            if status_answer is not None:
                return status_answer
        if self.latency > 0 and self._stopping.wait(self.latency):
            raise _Stop
        message = self._message(request, spec, counted, fault)
        answer = _Answer(200, message, stream=stream)
        if fault is not None and fault.kind == "drop_mid_body":
            answer.cut = True
        return answer

    def _transport_or_status(self, fault: Fault, rec: RequestRecord, counted: int, spec: ModelSpec) -> _Answer | None:
        """The answer for a status or transport fault; None when the fault shapes the body instead."""
        if fault.kind in _STATUS_FAULTS:
            status, etype, msg = _STATUS_FAULTS[fault.kind]
            headers: dict[str, str] = {}
            retry_after = fault.retry_after
            if retry_after is None and fault.kind == "rate_limit":
                retry_after = 1.0
            if retry_after:
                headers["retry-after"] = str(max(1, math.ceil(retry_after)))
                headers["retry-after-ms"] = str(round(retry_after * 1000))
            return _Answer(status, _error(etype, msg, rec.seq), headers)
        if fault.kind == "prompt_too_long":
            n = max(counted, spec.max_input_tokens + 1)
            return _Answer(400, _error("invalid_request_error",
                                       f"prompt is too long: {n} tokens > {spec.max_input_tokens} maximum", rec.seq))
        if fault.kind == "drop":
            return _Answer(None)
        if fault.kind == "slow":
            # interruptible wait; the record is logged first so a test sees it while the client times out
            self._append(rec)
            if self._stopping.wait(fault.delay):
                raise _Stop
            return None
        return None  # drop_mid_body (the caller cuts its normal answer) and body faults

    def _parse_request(self, body: JSON, spec: ModelSpec, seq: int) -> MessageRequest | _Answer:
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or max_tokens < 1:
            return _Answer(400, _error("invalid_request_error", "max_tokens: Field required", seq))
        if max_tokens > spec.max_tokens:
            return _Answer(400, _error(
                "invalid_request_error",
                f"max_tokens: {max_tokens} > {spec.max_tokens}, which is the maximum allowed number of output "
                f"tokens for {spec.id}", seq))
        schema: JSON | None = None
        mode: Mode = "text"
        tool_name: str | None = None
        fmt = (body.get("output_config") or {}).get("format") or body.get("output_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            if not spec.structured_outputs:
                return _Answer(400, _error("invalid_request_error",
                                           f"output_config.format: structured output is not supported for "
                                           f"model {spec.id}", seq))
            mode, schema = "json_schema", cast(JSON, fmt.get("schema") or {})
        tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
        choice = body.get("tool_choice") or {}
        if isinstance(choice, dict) and choice.get("type") in ("tool", "any"):
            if choice["type"] == "tool":
                tool = next((t for t in tools if t.get("name") == choice.get("name")), None)
                if tool is None:
                    return _Answer(400, _error("invalid_request_error",
                                               f"tool_choice: tool {choice.get('name')!r} not found in tools", seq))
            else:
                if not tools:
                    return _Answer(400, _error("invalid_request_error", "tool_choice: no tools given", seq))
                tool = tools[0]
            if not spec.forced_tool_choice:
                return _Answer(400, _error("invalid_request_error",
                                           f"tool_choice: forcing tool use is not supported for model {spec.id}",
                                           seq))
            mode, tool_name, schema = "tool", str(tool.get("name")), cast(JSON, tool.get("input_schema") or {})
        after_tool_result = False
        offered = next((t for t in tools if t.get("name") == STRUCTURED_OUTPUT_TOOL), None)
        if mode == "text" and offered is not None:
            mode, tool_name, schema = "tool", STRUCTURED_OUTPUT_TOOL, cast(JSON, offered.get("input_schema") or {})
            last = body["messages"][-1]
            after_tool_result = isinstance(last, dict) and last.get("role") == "user" and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in last.get("content") or [])
        system = "\n\n".join(t for t, _ in _segments({"system": body.get("system")}))
        prompt = "\n\n".join(
            t for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"
            for t in _text_of(m.get("content")))
        return MessageRequest(body=body, model=spec.id, mode=mode, tool_name=tool_name, schema=schema,
                              system=system, prompt=prompt, seq=seq, after_tool_result=after_tool_result)

    def _usage(self, body: JSON, spec: ModelSpec, counted: int, output_tokens: int) -> JSON:
        segs = _segments(body)
        top = body.get("cache_control")
        if isinstance(top, dict) and segs:
            segs[-1] = (segs[-1][0], top)
        read = created = 0
        ttl_1h = False
        breakpoints = [i for i, (_, cc) in enumerate(segs) if isinstance(cc, dict)]
        if breakpoints:
            sizes = [tokens_for(t, spec.chars_per_token) for t, _ in segs]
            digest = hashlib.sha256(spec.id.encode())
            keys: dict[int, str] = {}
            prefix: dict[int, int] = {}
            running = 0
            for i, (text, _) in enumerate(segs):
                digest.update(len(text).to_bytes(8, "big") + text.encode())
                running += sizes[i]
                if i in breakpoints:
                    keys[i], prefix[i] = digest.hexdigest(), running
            last = breakpoints[-1]
            if prefix[last] >= spec.min_cacheable_tokens:
                with self._lock:
                    hits = [prefix[i] for i in breakpoints if keys[i] in self._cache]
                    read = max(hits, default=0)
                    created = prefix[last] - read
                    self._cache.update(keys[i] for i in breakpoints if prefix[i] >= spec.min_cacheable_tokens)
                ttl_1h = segs[last][1].get("ttl") == "1h"
        return {
            "input_tokens": counted - read - created,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": 0 if ttl_1h else created,
                               "ephemeral_1h_input_tokens": created if ttl_1h else 0},
            "service_tier": "standard",
        }

    def _message(self, req: MessageRequest, spec: ModelSpec, counted: int, fault: Fault | None) -> JSON:
        if req.after_tool_result:
            result: ResponderResult = {"content": [{"type": "text", "text": "Recorded."}], "stop_reason": "end_turn"}
        else:
            result = self.responder(req)
        body_fault = fault.kind if fault is not None and fault.kind in _BODY_FAULTS else None
        full: JSON | None = None
        raw_text: str | None = None
        items: list[JSON]
        if isinstance(result, dict):
            full, items = result, []
        elif isinstance(result, str):
            raw_text, items = result, []
        else:
            items = list(result)
        if body_fault and (full is not None or raw_text is not None):
            full = raw_text = None
            items = default_responder(req)
        max_tokens = int(req.body["max_tokens"])
        cpt = spec.chars_per_token
        stop_details: JSON | None = None
        msg: JSON = {}

        def block_for(answer: JSON) -> tuple[JSON, str]:
            if req.mode == "tool":
                return ({"type": "tool_use", "id": f"toolu_fake{req.seq:012d}", "name": req.tool_name,
                         "input": answer}, "tool_use")
            return {"type": "text", "text": json.dumps(answer, ensure_ascii=False)}, "end_turn"

        content: list[JSON]
        if full is not None:
            msg = copy.deepcopy(full)
            content = list(msg.get("content") or [])
            out_tokens = sum(tokens_for(json.dumps(b), cpt) for b in content)
            stop_reason = msg.get("stop_reason", "tool_use" if any(
                b.get("type") == "tool_use" for b in content if isinstance(b, dict)) else "end_turn")
        elif raw_text is not None:
            content, stop_reason = [{"type": "text", "text": raw_text}], "end_turn"
            out_tokens = tokens_for(raw_text, cpt)
        else:
            answer: JSON = {"items": items}
            if body_fault == "schema_invalid":
                statement = items[0]["statement"] if items else "We decided something."
                answer = {"items": [{"kind": "verdict", "statement": statement, "rationale": None,
                                     "confidence": 7.5, "turn_ids": [], "files": []}]}
            block, stop_reason = block_for(answer)
            content = [block]
            out_tokens = tokens_for(json.dumps(answer), cpt)
            if body_fault == "malformed_json":
                text = repr(answer)
                content, stop_reason, out_tokens = [{"type": "text", "text": text}], "end_turn", tokens_for(text, cpt)
            elif body_fault in ("max_tokens", "context_window_exceeded") or out_tokens > max_tokens:
                full_text = json.dumps(answer, ensure_ascii=False)
                keep = (len(full_text) * 6 // 10 if body_fault else int(max_tokens * cpt))
                keep = max(1, min(keep, len(full_text) - 1))
                if req.mode == "tool":
                    content = [dict(block, input={})]
                else:
                    content = [{"type": "text", "text": full_text[:keep]}]
                stop_reason = "model_context_window_exceeded" if body_fault == "context_window_exceeded" \
                    else "max_tokens"
                out_tokens = max_tokens if stop_reason == "max_tokens" else tokens_for(full_text[:keep], cpt)
            elif body_fault == "refusal":
                text = "I can't help with that request."
                content, stop_reason, out_tokens = [{"type": "text", "text": text}], "refusal", tokens_for(text, cpt)
                stop_details = {"type": "refusal", "category": None, "explanation": None}
        message: JSON = {
            "id": f"msg_fake{req.seq:016d}",
            "type": "message",
            "role": "assistant",
            "model": req.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "stop_details": stop_details,
            "usage": self._usage(req.body, spec, counted, out_tokens),
        }
        message.update({k: v for k, v in msg.items() if k != "content"})
        return message

    # ------------------------------------------------------------------------------------------ writing

    def _deliver(self, h: FakeHandler, rec: RequestRecord, answer: _Answer) -> None:
        rec.status = answer.status
        rec.response = answer.body
        if answer.body is not None:
            err = answer.body.get("error")
            if isinstance(err, dict):
                rec.error_type = str(err.get("type"))
            rec.stop_reason = answer.body.get("stop_reason")
            usage = answer.body.get("usage")
            rec.usage = usage if isinstance(usage, dict) else None
        self._append(rec)
        headers = dict(answer.headers)
        headers["request-id"] = f"req_fake{rec.seq:016d}"
        try:
            if answer.status is None:  # dropped: close without a status line
                hard_close(h)
            elif answer.stream and answer.status == 200 and answer.body is not None:
                self._write_sse(h, answer.body, headers, cut=answer.cut)
            else:
                write_json(h, answer.status, answer.body or {}, headers, cut=answer.cut)
        except OSError:
            h.close_connection = True  # the client went away (e.g. it timed out first)
        rec.finished = time.monotonic()

    def _write_sse(self, h: FakeHandler, message: JSON, headers: Mapping[str, str], *, cut: bool) -> None:
        """The message as server-sent events in a chunked body, as the API streams; cut: half the events, then
        the connection closes mid-body (no terminating chunk)."""
        usage = dict(message["usage"])
        start = dict(message, content=[], stop_reason=None, stop_sequence=None, stop_details=None,
                     usage=dict(usage, output_tokens=1))
        events: list[JSON] = [{"type": "message_start", "message": start}]
        for i, block in enumerate(message["content"]):
            if block.get("type") == "tool_use":
                events.append({"type": "content_block_start", "index": i, "content_block": dict(block, input={})})
                raw = json.dumps(block.get("input", {}), ensure_ascii=False)
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in halves(raw)]
            else:
                events.append({"type": "content_block_start", "index": i, "content_block": dict(block, text="")})
                deltas = [{"type": "text_delta", "text": p} for p in halves(str(block.get("text", "")))]
            events += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
            events.append({"type": "content_block_stop", "index": i})
        events.append({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                          "stop_sequence": None,
                                                          "stop_details": message.get("stop_details")},
                       "usage": {"output_tokens": usage["output_tokens"]}})
        events.append({"type": "message_stop"})
        if cut:
            events = events[: max(1, len(events) // 2)]
        write_sse(h, (sse_event(ev["type"], ev) for ev in events), {"Cache-Control": "no-cache", **headers},
                  content_type="text/event-stream; charset=utf-8", cut=cut)

    def _models_answer(self, rec: RequestRecord) -> _Answer:
        fault = self._next_fault("models")
        if fault is not None:
            rec.fault = fault.kind
            ans = self._transport_or_status(fault, rec, 0, ModelSpec("none"))
            if ans is not None:
                return ans
        answer = self._models_body(rec)
        answer.cut = fault is not None and fault.kind == "drop_mid_body"
        return answer

    def _models_body(self, rec: RequestRecord) -> _Answer:
        rest = rec.path.rstrip("/")[len("/v1/models"):]
        models = self.models
        if not rest:
            data = [m.info() for m in models.values()]
            return _Answer(200, {"data": data, "has_more": False,
                                 "first_id": data[0]["id"] if data else None,
                                 "last_id": data[-1]["id"] if data else None})
        model_id = unquote(rest.lstrip("/"))
        spec = models.get(model_id)
        if spec is None:
            return _Answer(404, _error("not_found_error", f"model: {model_id}", rec.seq))
        return _Answer(200, spec.info())


def _error(etype: str, message: str, seq: int) -> JSON:
    return {"type": "error", "error": {"type": etype, "message": message}, "request_id": f"req_fake{seq:016d}"}


@contextlib.contextmanager
def serve(**kwargs: Any) -> Iterator[FakeAnthropic]:
    """`with serve(latency=0.05) as fake:` a running FakeAnthropic(**kwargs); errors re-raised at exit."""
    with FakeAnthropic(**kwargs) as fake:
        yield fake


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A running FakeAnthropic with DEFAULT_MODELS; errors from its threads fail the test at teardown.

    To use it in a test module (ruff-clean; a bare import of the fixture trips F811):
        from tests.support import fake_anthropic as fa
        fake_anthropic = fa.fake_anthropic
    """
    with FakeAnthropic() as fake:
        yield fake
