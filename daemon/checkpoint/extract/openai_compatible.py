"""Extraction through any OpenAI-compatible chat-completions server: Ollama, llama.cpp's server,
LM Studio, vLLM, and hosted ones (OpenRouter, OpenAI) with OPENAI_API_KEY. The `openai` extractor.

One chunk, one `POST {openai_base_url}/chat/completions`: the system prompt and the request of
prompt.py, and the answer's schema as `response_format` json_schema (strict, schema.STRICT_SCHEMA).
A server that refuses the schema (a 400 naming json_schema, a grammar or response_format: some
llama.cpp builds) is asked again in JSON mode (`json_object`, the schema written into the system
prompt) for the rest of the run, said once in the log; either way the answer is read by
schema.read_answer, and nothing else counts.

The window is the setting `openai_context_tokens`, else what the server says of itself (Ollama's,
llama.cpp's, vLLM's and LM Studio's conventions: openai_window.py), else a safe 4,096 tokens; which
one, and why, is said with the extractor. Each request is measured against it before it is sent, by
the chunker's conservative estimate. The prompt's own parts give way before a chunk does: the known
items (most relevant first, as the store chose them) take a bounded share of the window and are cut
to what fits beside the chunk, so a chunk of at least the smallest size always fits; a chunk larger
than the rest of the window is re-split (never trimmed); only a window too small for the instructions
and schema alone is refused, with that cause and the fix, and nothing is sent. An answer
cut off (`finish_reason: length`) or not the schema's JSON is a failed attempt, retried by the retry
policy (retry.py); the chunk stays due when the attempts run out. Usage is the server's own count; the
cost is 0 (no price is known for a self-hosted model; the description says so).

The HTTP requests are openai_http.py's (the standard library's urllib): one deadline for the whole
request (request_timeout), an answer over openai_answer_bytes refused unread, and no redirect to
another origin followed (the key would go with it): each a failed attempt, the chunk left due.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import replace
from typing import Any

from checkpoint.answer import Extraction
from checkpoint.chunker import MIN_CHUNK_TOKENS, estimate_tokens
from checkpoint.config import OPENAI_CONTEXT_TOKENS, Settings
from checkpoint.extract import ExtractionError
from checkpoint.extract.answer_schema import STRICT_SCHEMA, MalformedAnswer, read_answer
from checkpoint.extract.model_windows import Fit, Window, output_reserve
from checkpoint.extract.openai_http import (
    KEY_VARIABLE,
    Reply,
    base_url,
    host_of,
    is_local,
    listed_models,
    on_this_machine,
    request,
    said,
)
from checkpoint.extract.openai_window import PROBE_TIMEOUT, ServerWindow, server_window
from checkpoint.extract.prompt import (
    KNOWN_ITEMS_HEAD,
    SYSTEM_PROMPT,
    known_item_line,
    render_known_items,
    render_request,
)
from checkpoint.extract.retry import Failed, RetryPolicy, Sleep
from checkpoint.model import ChunkInput, Usage
from checkpoint.redact.outside import hide_secrets

log = logging.getLogger(__name__)

SCHEMA_NAME = "checkpoint_items"
JSON_SCHEMA_FORMAT: dict[str, Any] = {
    "type": "json_schema", "json_schema": {"name": SCHEMA_NAME, "schema": STRICT_SCHEMA, "strict": True},
}
JSON_MODE_FORMAT: dict[str, Any] = {"type": "json_object"}
# In JSON mode the server enforces only "some JSON object": the schema travels in the instructions.
JSON_MODE_SYSTEM = SYSTEM_PROMPT + "\nThe JSON schema of the answer:\n" + json.dumps(STRICT_SCHEMA) + "\n"

_SCHEMA_REFUSED = re.compile(r"json_schema|grammar|response_format|structured output", re.IGNORECASE)
_TOO_LARGE = re.compile(r"context[_ ]length|context (window|size)|maximum context|too many (input )?tokens|"
                        r"prompt is too long|exceeds? the (available )?context", re.IGNORECASE)
_FENCE = re.compile(r"^```(?:json)?\s*\n(?P<body>.*)\n```\s*$", re.DOTALL)
# "Session <id> (<agent>).": planned at this many tokens before a chunk (and so its session) is known.
SESSION_LINE_TOKENS = 48
# The known items' share of the prompt's room (the window less the reserve, instructions and schema):
# enough for the few a chunk most likely restates, never so much that a chunk cannot fit beside them.
KNOWN_SHARE = 4


def _error_message(reply: Reply) -> str:
    """The server's error message, as a cause may show it: the key it may echo (a 401 quoting the key
    presented) and any secret replaced before it is cut short."""
    error = reply.body.get("error") if isinstance(reply.body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    return said(str(message or reply.text))[:300]


def classify(reply: Reply) -> Failed:
    """What a failed request means for the chunk (and the run)."""
    status, message = reply.status, _error_message(reply)
    detail = f": {message}" if message else ""
    if reply.refused:  # a redirect to another origin: the same on every try, and nothing was sent there
        return Failed("fatal", reply.text)
    if status == 0:
        return Failed("transient", reply.text, timed_out=reply.text.startswith("timed out"))
    if 300 <= status < 400:
        return Failed("fatal", f"redirected ({status}) and not followed: set openai_base_url to the server's own "
                               "address")
    if status == 413 or (status == 400 and _TOO_LARGE.search(message)):
        return Failed("too_large", f"prompt too long ({status}){detail}")
    if status in (401, 403):
        return Failed("fatal", f"authentication failed ({status}){detail}: set {KEY_VARIABLE} for this server")
    if status == 404:
        return Failed("fatal", f"not found (404){detail}: check openai_base_url and openai_model")
    if status == 429:
        return Failed("transient", "rate limited (429)", reply.retry_after)
    if status >= 500 or status in (408, 409):
        return Failed("transient", f"server error ({status})", reply.retry_after)
    return Failed("rejected", f"request rejected ({status}){detail}")


class OpenAICompatibleExtractor:
    name = "openai"

    def __init__(self, settings: Settings, sleep: Sleep = time.sleep) -> None:
        self.settings = settings
        self.base_url = base_url(settings)
        self.model = settings.openai_model
        self.local = is_local(self.base_url)
        found = ServerWindow(OPENAI_CONTEXT_TOKENS, "assumed: the server did not answer to say its window")
        if settings.openai_context_tokens is None:
            # The window is the model's: the one asked is the first listed (as _model would choose). A
            # server that does not answer the listing is not probed further (the run says why it stops).
            models, _ = listed_models(self.base_url, min(PROBE_TIMEOUT, settings.request_timeout))
            if models is not None:
                self.model = self.model or (models[0] if models else None)
                found = server_window(settings, self.model)
        else:
            found = server_window(settings, self.model)
        context = found.tokens
        # The context holds the request and the answer: the answer gets up to a quarter of it.
        self.window = Window(context, max(1, context // 4), found.why)
        self.reserve = output_reserve(self.window, settings.output_tokens)
        cost = "a local server: no cost" if self.local else "cost not counted: no price is known for this server"
        if not on_this_machine(self.base_url):  # said wherever the extractor is named: the run line, the editor
            cost += f"; your transcripts, redacted, are sent to {hide_secrets(host_of(self.base_url))}"
        self.description = (f"an OpenAI-compatible server at {hide_secrets(self.base_url)} "
                            f"({self.model or 'its first listed model'}; {context:,}-token window {found.why}; "
                            f"{cost})")
        self.sleep = sleep
        self.retry = RetryPolicy.from_settings(settings)
        self._lock = threading.Lock()
        self._json_mode = False  # the server refused json_schema: JSON mode for the rest of the run

    # -- windows and sizes ------------------------------------------------------------------------

    def _parts(self, chunk: ChunkInput | None) -> int:
        """Tokens a request carries besides the transcript and the known items: the instructions and
        schema (JSON mode's prompt, which holds the schema, is the larger), the session line and the
        messages' framing, by the chunker's conservative estimate."""
        session = (estimate_tokens(f"Session {chunk.session_id} ({chunk.agent}).\n") if chunk is not None
                   else SESSION_LINE_TOKENS)
        return estimate_tokens(JSON_MODE_SYSTEM) + session + 32

    def room(self, chunk: ChunkInput | None = None) -> int:
        """What the window leaves for the transcript and the known items."""
        return self.window.max_input_tokens - self.reserve - self._parts(chunk)

    def known_budget(self) -> int:
        """The tokens new chunks leave for known items: a share of the room, never below the smallest chunk."""
        room = self.room()
        return max(0, min(room // KNOWN_SHARE, room - MIN_CHUNK_TOKENS))

    def overhead_estimate(self, chunk: ChunkInput | None = None) -> int:
        """Tokens a request carries besides the transcript: its parts and the known items it is sent with."""
        known = render_known_items(chunk) if chunk is not None else ""
        return self._parts(chunk) + (estimate_tokens(known) if known else 0)

    def chunk_budget(self) -> int:
        """The largest chunk (in the chunker's estimate) the window takes beside the prompt's parts, a
        share for known items, and the reserve."""
        return max(MIN_CHUNK_TOKENS, self.room() - self.known_budget())

    def fitted(self, chunk: ChunkInput) -> ChunkInput:
        """The chunk with as many of its known items, in the order given (the most relevant first), as
        the window takes beside it: the prompt's parts give way, the transcript never does."""
        if not chunk.known_items:
            return chunk
        room = self.room(chunk) - chunk.token_estimate
        used = estimate_tokens(KNOWN_ITEMS_HEAD) + 1
        kept = []
        for item in chunk.known_items:
            cost = estimate_tokens(known_item_line(item)) + 1  # each line with its newline
            if used + cost > room:
                break
            kept.append(item)
            used += cost
        return chunk if len(kept) == len(chunk.known_items) else replace(chunk, known_items=kept)

    def measure(self, model: str, chunk: ChunkInput) -> Fit:
        overhead = self.overhead_estimate(chunk)
        return Fit(model, overhead + chunk.token_estimate, self.window, self.reserve, False, overhead)

    def _refuse_small_window(self, chunk: ChunkInput) -> None:
        if self.room(chunk) >= MIN_CHUNK_TOKENS:
            return
        raise ExtractionError(
            f"openai: the window of {self.window.max_input_tokens:,} tokens ({self.window.source}) cannot hold "
            f"the prompt: its instructions and schema alone take ~{self._parts(chunk):,} tokens and the answer's "
            f"reserve {self.reserve:,}, leaving less than the smallest chunk ({MIN_CHUNK_TOKENS} tokens). Give the "
            f"server a larger context (Ollama: OLLAMA_CONTEXT_LENGTH; llama.cpp: --ctx-size) and set "
            f"openai_context_tokens to it",
            retryable=False)

    # -- the model --------------------------------------------------------------------------------

    def _model(self) -> str:
        """openai_model, else the first model the server lists (asked once)."""
        with self._lock:
            if self.model:
                return self.model
            models, why = listed_models(self.base_url, min(10.0, self.settings.request_timeout))
            if models is None:
                raise ExtractionError(f"openai: the server at {self.base_url} does not answer ({why}): start it, "
                                      "or set openai_base_url", retryable=False)
            if not models:
                raise ExtractionError(f"openai: the server at {self.base_url} lists no model: set openai_model",
                                      retryable=False)
            self.model = models[0]
            return self.model

    # -- extraction -------------------------------------------------------------------------------

    def extract(self, chunk: ChunkInput) -> Extraction:
        self._refuse_small_window(chunk)  # before any request: nothing is sent that cannot fit
        model = self._model()
        usage = Usage()
        chunk = self.fitted(chunk)
        fit = self.measure(model, chunk)
        if not fit.ok:  # never sent: re-split to what new chunks are planned at (beside the known items' share)
            raise ExtractionError(f"openai: {fit.describe()}; re-splitting", too_large=True,
                                  fit_tokens=max(MIN_CHUNK_TOKENS, int(self.chunk_budget() * 0.9)), usage=usage)
        outcome = self.retry.run(lambda: self._once(model, chunk, usage), self.sleep)
        if not isinstance(outcome, Failed):
            return outcome
        if outcome.kind == "too_large":
            raise ExtractionError(f"openai: {outcome.cause}; re-splitting", too_large=True, usage=usage)
        # fatal: no other chunk fares better (the key, the URL, the model); the rest: this chunk stays due
        raise ExtractionError(f"openai: {outcome.cause}", retryable=outcome.kind != "fatal", usage=usage)

    def payload(self, model: str, chunk: ChunkInput, json_mode: bool) -> dict[str, Any]:
        head, transcript = render_request(chunk)
        return {
            "model": model,
            "messages": [{"role": "system", "content": JSON_MODE_SYSTEM if json_mode else SYSTEM_PROMPT},
                         {"role": "user", "content": head + "\n" + transcript}],
            "response_format": JSON_MODE_FORMAT if json_mode else JSON_SCHEMA_FORMAT,
            "max_tokens": self.reserve,
            "temperature": 0,
            "stream": False,
        }

    def _once(self, model: str, chunk: ChunkInput, usage: Usage) -> Extraction | Failed:
        with self._lock:
            json_mode = self._json_mode
        reply = self._send(model, chunk, json_mode, usage)
        if reply.status == 400 and not json_mode and _SCHEMA_REFUSED.search(_error_message(reply)) \
                and not _TOO_LARGE.search(_error_message(reply)):
            self._to_json_mode(_error_message(reply))
            reply = self._send(model, chunk, True, usage)
        if reply.status != 200:
            return classify(reply)
        return self._read(model, chunk, reply, usage)

    def _send(self, model: str, chunk: ChunkInput, json_mode: bool, usage: Usage) -> Reply:
        reply = request(f"{self.base_url}/chat/completions", self.payload(model, chunk, json_mode),
                        self.settings.request_timeout, self.settings.openai_answer_bytes)
        usage.requests += 1
        if reply.status == 200 and isinstance(reply.body, dict):
            usage.add(usage_from(reply.body.get("usage")))
        return reply

    def _to_json_mode(self, message: str) -> None:
        with self._lock:
            if self._json_mode:
                return
            self._json_mode = True
        log.warning("The server at %s refused the answer's JSON schema (%s): asking in JSON mode instead, "
                    "with the schema in the instructions and every answer validated against it.",
                    self.base_url, message[:200])

    def _read(self, model: str, chunk: ChunkInput, reply: Reply, usage: Usage) -> Extraction | Failed:
        choices = reply.body.get("choices") if isinstance(reply.body, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        if choice is None:
            return Failed("malformed", "answered without a choice")
        finish = choice.get("finish_reason")
        raw_message = choice.get("message")
        message: dict[str, Any] = raw_message if isinstance(raw_message, dict) else {}
        if finish == "length":
            return Failed("malformed", f"answer cut off at its {self.reserve:,}-token limit (finish_reason length)")
        if finish == "content_filter" or message.get("refusal"):
            return Failed("refused", "refused to answer")
        content = message.get("content")
        if not isinstance(content, str) or not content.strip():
            return Failed("malformed", "gave no answer")
        fenced = _FENCE.match(content.strip())
        try:
            items = read_answer(fenced.group("body") if fenced else content)
        except MalformedAnswer as exc:
            return Failed("malformed", str(exc))
        return Extraction(chunk_id=chunk.chunk_id, items=items, extractor=self.name, model=model,
                          usage=usage)


def usage_from(raw: Any) -> Usage:
    """The server's token counts as ours (OpenAI's prompt_tokens include the cached ones). Cost 0."""
    if not isinstance(raw, dict):
        return Usage()

    def count(value: Any) -> int:
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    details = raw.get("prompt_tokens_details")
    cached = count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return Usage(input_tokens=max(0, count(raw.get("prompt_tokens")) - cached),
                 output_tokens=count(raw.get("completion_tokens")), cache_read_input_tokens=cached)
