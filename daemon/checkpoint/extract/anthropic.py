"""Extraction with Claude through the official SDK (2.x).

One chunk, one request: a cached system prompt, the chunk with every turn labelled (prompt.py), and
structured output (`output_config` json_schema from pydantic models via `transform_schema`). The
answer counts only when the request ended normally (`end_turn`) and the JSON validates; a truncated
answer (`max_tokens`, `model_context_window_exceeded`) is a failure that asks for a smaller chunk.

Before a request the chunk is measured (`count_tokens`, or the chunker's conservative estimate when
that is unavailable) against the model's window (`models.retrieve`, cached per model) less the
output reserve (models.py). Transient errors (429, 5xx, 529, timeouts, dropped connections) back off
and retry, honouring `retry-after`, a bounded number of times (retry.py); then the chunk goes to the
fallback models in order, each one only after its own window was checked (fallback.py). The SDK's own
retries are off so that every request is counted and every cause is kept.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import anthropic
from anthropic.types import MessageParam, TextBlockParam

from checkpoint.answer import Extraction
from checkpoint.chunker import estimate_tokens
from checkpoint.config import Settings
from checkpoint.extract.answer_schema import SCHEMA, MalformedAnswer, read_answer
from checkpoint.extract.fallback import model_order, models_said, through_models
from checkpoint.extract.model_windows import (
    Calibration,
    Fit,
    Window,
    chunk_budget,
    output_reserve,
    price_of,
    published_window,
)
from checkpoint.extract.prompt import SYSTEM_PROMPT, render_request
from checkpoint.extract.retry import Failed, RetryPolicy, Sleep
from checkpoint.model import ChunkInput, Usage
from checkpoint.redact.outside import hide_secrets


def usage_from(model: str, raw: Any) -> Usage:
    """Our Usage from the SDK's (its cache fields may be None), priced for `model`."""
    usage = Usage(
        input_tokens=int(getattr(raw, "input_tokens", 0) or 0),
        output_tokens=int(getattr(raw, "output_tokens", 0) or 0),
        cache_creation_input_tokens=int(getattr(raw, "cache_creation_input_tokens", 0) or 0),
        cache_read_input_tokens=int(getattr(raw, "cache_read_input_tokens", 0) or 0),
        requests=1,
    )
    usage.cost_usd = price_of(model).cost(usage)
    return usage


OUTPUT_CONFIG: Any = {"format": {"type": "json_schema", "schema": SCHEMA}}
TOOL_NAME = "record_items"
# For a model without structured outputs: the same schema as the input of a tool it must call.
TOOL_MODE: Any = {
    "tools": [{"name": TOOL_NAME, "description": "Record the items of this chunk.", "input_schema": SCHEMA}],
    "tool_choice": {"type": "tool", "name": TOOL_NAME},
}


class AnthropicExtractor:
    name = "anthropic"

    def __init__(
        self,
        settings: Settings,
        client: anthropic.Anthropic | None = None,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.settings = settings
        self.models = model_order(settings)
        self.description = f"Claude ({models_said(self.models)})"
        # max_retries=0: retries are ours, so each request is counted, budgeted and its cause kept.
        self.client = client or anthropic.Anthropic(max_retries=0, timeout=settings.request_timeout)
        self.sleep = sleep
        self.retry = RetryPolicy.from_settings(settings)
        self._windows: dict[str, Window] = {}
        self._lock = threading.Lock()
        # Calibration from answers seen this run: estimated chunk tokens -> real tokens and cost.
        self._calibration = Calibration()

    # -- windows and sizes ------------------------------------------------------------------------

    def window(self, model: str) -> Window:
        with self._lock:
            cached = self._windows.get(model)
        if cached is not None:
            return cached
        window = published_window(model)
        info = self._call(lambda: self.client.models.retrieve(model, timeout=self.settings.request_timeout))
        if info is not None and info.max_input_tokens:
            caps = getattr(info, "capabilities", None)
            structured = getattr(getattr(caps, "structured_outputs", None), "supported", True) is not False
            window = Window(info.max_input_tokens, info.max_tokens or window.max_output_tokens, "models.retrieve",
                            structured)
            with self._lock:  # only an answer from the API is worth keeping for the whole run
                self._windows[model] = window
        return window

    def reserve(self, model: str) -> int:
        return output_reserve(self.window(model), self.settings.output_tokens)

    def _system(self) -> list[TextBlockParam]:
        return [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}]

    @staticmethod
    def _shape(window: Window) -> dict[str, Any]:
        """How the answer's schema is imposed: structured output, or a forced tool where unsupported."""
        return {"output_config": OUTPUT_CONFIG} if window.structured_outputs else TOOL_MODE

    def _messages(self, chunk: ChunkInput) -> list[MessageParam]:
        return [{"role": "user", "content": [{"type": "text", "text": part} for part in render_request(chunk)]}]

    def overhead_estimate(self, chunk: ChunkInput | None = None) -> int:
        """Tokens a request carries besides the transcript, by the chunker's conservative estimate."""
        known = render_request(chunk)[0] if chunk is not None else ""
        return estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(str(SCHEMA)) + estimate_tokens(known) + 16

    def measure(self, model: str, chunk: ChunkInput) -> Fit:
        window = self.window(model)
        reserve = output_reserve(window, self.settings.output_tokens)
        local = self.overhead_estimate(chunk) + chunk.token_estimate
        count = self._call(lambda: self.client.messages.count_tokens(
            model=model, system=self._system(), messages=self._messages(chunk),
            timeout=self.settings.request_timeout, **self._shape(window),
        ))
        if count is None:
            return Fit(model, local, window, reserve, False, self.overhead_estimate(chunk))
        tokens = int(count.input_tokens)
        # The model's own count of the overhead, in proportion: what it counts, scaled to our estimate.
        overhead = int(tokens * self.overhead_estimate(chunk) / max(1, local))
        return Fit(model, tokens, window, reserve, True, overhead)

    def chunk_budget(self) -> int:
        """The largest chunk (in the chunker's estimate) the primary model's window takes, reserve
        and prompt aside."""
        window = self.window(self.models[0])
        return chunk_budget(window, output_reserve(window, self.settings.output_tokens), self.overhead_estimate())

    def _call(self, fn: Callable[[], Any]) -> Any:
        """A free side request (window, count): a couple of quick tries, then None (use what we know)."""
        for attempt in range(2):
            try:
                return fn()
            except (anthropic.APIConnectionError, anthropic.APIStatusError) as exc:
                if isinstance(exc, anthropic.APIStatusError) and exc.status_code < 500 \
                        and exc.status_code not in (408, 409, 429):
                    return None
                if attempt == 0:
                    self.sleep(self.retry.delay(1, _retry_after(exc)))
        return None

    # -- cost estimates ---------------------------------------------------------------------------

    def estimate(self, chunk_tokens: int, chunks: int = 1) -> Usage:
        """What `chunks` chunks totalling `chunk_tokens` (estimated) should cost on the primary model."""
        sent = chunk_tokens + chunks * self.overhead_estimate()
        return self._calibration.estimate(price_of(self.models[0]), sent, chunks, self.settings.output_tokens)

    # -- extraction -------------------------------------------------------------------------------

    def extract(self, chunk: ChunkInput) -> Extraction:
        usage = Usage()
        return through_models(self.models, chunk, usage, lambda model: self.measure(model, chunk),
                              lambda model, fit: self._ask(model, chunk, usage, fit))

    def _ask(self, model: str, chunk: ChunkInput, usage: Usage, fit: Fit) -> Extraction | Failed:
        """One model's attempts (the retry policy's). Returns the extraction, or why there is none."""
        return self.retry.run(lambda: self._once(model, chunk, usage, fit), self.sleep)

    def _once(self, model: str, chunk: ChunkInput, usage: Usage, fit: Fit) -> Extraction | Failed:
        try:
            response = self.client.messages.create(
                model=model,
                max_tokens=fit.reserve,
                system=self._system(),
                messages=self._messages(chunk),
                timeout=self.settings.request_timeout,
                **self._shape(fit.window),
            )
        except (anthropic.APIStatusError, anthropic.APIConnectionError) as exc:
            usage.requests += 1
            return replace(_classify(exc), retry_after=_retry_after(exc))
        spent = usage_from(model, response.usage)
        usage.add(spent)
        outcome = self._read(model, chunk, response, spent)
        if isinstance(outcome, Extraction):
            return outcome.model_copy(update={"usage": usage})
        return outcome

    def _read(self, model: str, chunk: ChunkInput, response: Any, spent: Usage) -> Extraction | Failed:
        stop = response.stop_reason
        if stop in ("max_tokens", "model_context_window_exceeded"):
            return Failed("too_large", f"answer truncated (stop_reason {stop})")
        if stop == "refusal":
            return Failed("refused", "refused to answer (stop_reason refusal)")
        # Blocks by type: a thinking block may come first; a tool call carries the answer in tool mode.
        tool = next((b for b in response.content if getattr(b, "type", None) == "tool_use"), None)
        text = "".join(block.text for block in response.content if getattr(block, "type", None) == "text")
        try:
            items = read_answer(tool.input if tool is not None else text)
        except MalformedAnswer as exc:
            return Failed("malformed", str(exc))
        self._calibration.record(chunk.token_estimate + self.overhead_estimate(chunk), spent)
        return Extraction(chunk_id=chunk.chunk_id, items=items, extractor=self.name, model=model)


def _retry_after(error: Exception | None) -> float | None:
    response = getattr(error, "response", None)
    if response is None:
        return None
    headers = response.headers
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw) / scale
        except ValueError:
            continue  # an HTTP date: rare from this API; our own backoff is good enough
        if value > 0:
            return value
    return None


_TOO_LONG = re.compile(r"prompt is too long|too many (input )?tokens|context (window|length)", re.IGNORECASE)


def _classify(exc: Exception) -> Failed:
    if isinstance(exc, anthropic.APITimeoutError):
        return Failed("transient", "timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return Failed("transient", "connection failed")
    assert isinstance(exc, anthropic.APIStatusError)
    status = exc.status_code
    message = hide_secrets((exc.api_message or "").strip())  # before cutting: half a key matches nothing
    detail = f": {message[:200]}" if message else ""
    if status == 529:
        return Failed("transient", "overloaded (529)")
    if status == 429:
        return Failed("transient", "rate limited (429)")
    if status >= 500 or status in (408, 409):
        return Failed("transient", f"server error ({status})")
    if status == 413 or (status == 400 and (_TOO_LONG.search(message) or "too_long" in (exc.error_code or ""))):
        return Failed("too_large", f"prompt too long ({status}){detail}")
    if status in (401, 403):
        return Failed("fatal", f"authentication failed ({status}): check ANTHROPIC_API_KEY")
    if status == 402:
        return Failed("fatal", f"billing error ({status}){detail}")
    if status == 404:
        return Failed("rejected", f"model not found (404){detail}")
    return Failed("rejected", f"request rejected ({status}){detail}")
