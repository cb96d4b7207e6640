"""Extraction with Claude through the official SDK (2.x).

One chunk, one request: a cached system prompt, the chunk with every turn labelled (prompt.py), and
structured output (`output_config` json_schema from pydantic models via `transform_schema`). The
answer counts only when the request ended normally (`end_turn`) and the JSON validates; a truncated
answer (`max_tokens`, `model_context_window_exceeded`) is a failure that asks for a smaller chunk.

Before a request the chunk is measured (`count_tokens`, or the chunker's conservative estimate when
that is unavailable) against the model's window (`models.retrieve`, cached per model) less the
output reserve. Transient errors (429, 5xx, 529, timeouts, dropped connections) back off and retry,
honouring `retry-after`, a bounded number of times; then the chunk goes to the fallback models in
order, each one only after its own window was checked. The SDK's own retries are off so that every
request is counted and every cause is kept.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

import anthropic
from anthropic.types import MessageParam, TextBlockParam

from checkpoint.answer import Extraction
from checkpoint.chunker import MIN_CHUNK_TOKENS, estimate_tokens
from checkpoint.config import Settings
from checkpoint.extract import ExtractionError
from checkpoint.extract.prompt import SYSTEM_PROMPT, render_request
from checkpoint.extract.schema import SCHEMA, MalformedAnswer, read_answer
from checkpoint.model import ChunkInput, Usage
from checkpoint.redact.outside import hide_secrets

# -- prices and windows -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens. Cache writes are the 5-minute kind (1.25x input)."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_creation_input_tokens * self.cache_write
            + usage.cache_read_input_tokens * self.cache_read
        ) / 1e6


@dataclass(frozen=True)
class ModelFacts:
    max_input_tokens: int
    max_output_tokens: int
    price: Price


# Published figures (notes/anthropic.md, 2026-11-30). Windows are used only when models.retrieve is
# unavailable; prices always (the API does not report them). Haiku 5.5 is priced in its <=100K-token
# band, which every chunk stays in.
_HAIKU_45 = Price(1.0, 5.0, 1.25, 0.10)
_SONNET = Price(3.0, 15.0, 3.75, 0.30)
_OPUS = Price(5.0, 25.0, 6.25, 0.50)
KNOWN_MODELS: dict[str, ModelFacts] = {
    "claude-haiku-4-5": ModelFacts(200_000, 64_000, _HAIKU_45),
    "claude-haiku-5-5": ModelFacts(1_000_000, 128_000, Price(0.10, 0.50, 0.125, 0.01)),
    "claude-sonnet-4-5": ModelFacts(200_000, 64_000, _SONNET),
    "claude-sonnet-4-6": ModelFacts(1_000_000, 128_000, _SONNET),
    "claude-sonnet-5": ModelFacts(1_000_000, 128_000, Price(2.0, 10.0, 2.5, 0.20)),
    "claude-sonnet-5-5": ModelFacts(1_000_000, 128_000, Price(2.0, 10.0, 2.5, 0.10)),
    "claude-opus-4-5": ModelFacts(200_000, 64_000, _OPUS),
    "claude-opus-4-6": ModelFacts(1_000_000, 128_000, _OPUS),
    "claude-opus-4-7": ModelFacts(1_000_000, 128_000, _OPUS),
    "claude-opus-4-8": ModelFacts(1_000_000, 128_000, _OPUS),
    "claude-opus-5": ModelFacts(1_000_000, 128_000, _OPUS),
    "claude-opus-5-5": ModelFacts(1_000_000, 128_000, Price(4.0, 20.0, 5.0, 0.40)),
}
# An unknown model is budgeted at the dearest published rate and the smallest published window, so
# that a budget errs towards stopping early and a fit check towards splitting.
UNKNOWN_MODEL = ModelFacts(200_000, 8_192, _OPUS)
_DATED = re.compile(r"-\d{8}$")


def model_facts(model: str) -> tuple[ModelFacts, bool]:
    """(facts, known): a dated snapshot id falls back to its alias."""
    facts = KNOWN_MODELS.get(model) or KNOWN_MODELS.get(_DATED.sub("", model))
    return (facts, True) if facts else (UNKNOWN_MODEL, False)


def price_of(model: str) -> Price:
    return model_facts(model)[0].price


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


def calibrated_estimate(price: Price, sent: int, chunks: int, output_tokens: int, seen_estimate: int,
                        seen: Usage) -> Usage:
    """The expected usage of `chunks` chunks whose requests total `sent` tokens (the chunker's estimate):
    scaled from what this run's answers so far cost against their estimate (`seen_estimate` -> `seen`)
    when there are some, else from the price table (all input at the uncached rate, output at a sixth
    of input, which errs high for extraction). A reported cost (Claude Code's) scales as it is."""
    if seen_estimate and seen.requests:
        scale = sent / seen_estimate
        usage = Usage(
            input_tokens=int(seen.input_tokens * scale),
            output_tokens=int(seen.output_tokens * scale),
            cache_creation_input_tokens=int(seen.cache_creation_input_tokens * scale),
            cache_read_input_tokens=int(seen.cache_read_input_tokens * scale),
            requests=max(chunks, int(seen.requests * scale)),
        )
        usage.cost_usd = seen.cost_usd * scale if seen.cost_usd else price.cost(usage)
        return usage
    output = min(chunks * output_tokens, max(chunks * 200, sent // 6))
    usage = Usage(input_tokens=sent, output_tokens=output, requests=chunks)
    usage.cost_usd = price.cost(usage)
    return usage


@dataclass(frozen=True)
class Window:
    max_input_tokens: int
    max_output_tokens: int
    source: str  # "models.retrieve", "published figures", or "assumed (unknown model)"
    structured_outputs: bool = True  # False: the model says it lacks them; a forced tool carries the schema


OUTPUT_CONFIG: Any = {"format": {"type": "json_schema", "schema": SCHEMA}}
TOOL_NAME = "record_items"
# For a model without structured outputs: the same schema as the input of a tool it must call.
TOOL_MODE: Any = {
    "tools": [{"name": TOOL_NAME, "description": "Record the items of this chunk.", "input_schema": SCHEMA}],
    "tool_choice": {"type": "tool", "name": TOOL_NAME},
}


# -- outcomes of one model's attempts ---------------------------------------------------------------


@dataclass
class _Failed:
    """Why a model gave no usable answer. `kind` decides what happens next:
    transient/malformed/refused/rejected -> the next fallback; too_large -> re-split; fatal -> stop."""

    kind: Literal["transient", "malformed", "refused", "rejected", "too_large", "fatal"]
    cause: str


@dataclass(frozen=True)
class Fit:
    model: str
    tokens: int  # the whole request, counted (or estimated)
    window: Window
    reserve: int
    counted: bool  # False: count_tokens was unavailable and the local estimate stood in
    overhead: int  # the request's tokens besides the transcript (system prompt, schema, known items)

    @property
    def allowed(self) -> int:
        return self.window.max_input_tokens - self.reserve

    @property
    def ok(self) -> bool:
        return self.tokens <= self.allowed

    def describe(self) -> str:
        how = "" if self.counted else " (estimated locally; count_tokens unavailable)"
        return (
            f"chunk is {self.tokens:,} tokens{how}, its window allows "
            f"{self.window.max_input_tokens:,} - {self.reserve:,} reserve"
        )

    def fit_tokens(self, chunk_estimate: int) -> int | None:
        """The chunk size, in the chunker's estimate, that would fit; None when no chunk can."""
        room = self.allowed - self.overhead
        transcript = max(1, self.tokens - self.overhead)
        if room < MIN_CHUNK_TOKENS:
            return None
        # Scale by how the model counts this text relative to the estimate, with a margin.
        return max(MIN_CHUNK_TOKENS, int(chunk_estimate * room / transcript * 0.9))


Sleep = Callable[[float], None]


class AnthropicExtractor:
    name = "anthropic"

    def __init__(
        self,
        settings: Settings,
        client: anthropic.Anthropic | None = None,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.settings = settings
        self.models = [settings.model, *[m for m in settings.fallback_models if m != settings.model]]
        fallbacks = f", falling back to {', '.join(self.models[1:])}" if len(self.models) > 1 else ""
        self.description = f"Claude ({self.models[0]}{fallbacks})"
        # max_retries=0: retries are ours, so each request is counted, budgeted and its cause kept.
        self.client = client or anthropic.Anthropic(max_retries=0, timeout=settings.request_timeout)
        self.sleep = sleep
        self._windows: dict[str, Window] = {}
        self._lock = threading.Lock()
        # Calibration from answers seen this run: estimated chunk tokens -> real tokens and cost.
        self._seen_estimate = 0
        self._seen_usage = Usage()

    # -- windows and sizes ------------------------------------------------------------------------

    def window(self, model: str) -> Window:
        with self._lock:
            cached = self._windows.get(model)
        if cached is not None:
            return cached
        facts, known = model_facts(model)
        window = Window(facts.max_input_tokens, facts.max_output_tokens,
                        "published figures" if known else "assumed (unknown model)")
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
        return self._reserve(self.window(model))

    def _reserve(self, window: Window) -> int:
        return max(1, min(self.settings.output_tokens, window.max_output_tokens))

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
        reserve = self._reserve(window)
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
        and prompt aside. The estimate over-counts, so a chunk of this size fits."""
        window = self.window(self.models[0])
        return max(MIN_CHUNK_TOKENS, window.max_input_tokens - self._reserve(window) - self.overhead_estimate())

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
                    self.sleep(self._delay(1, exc))
        return None

    # -- cost estimates ---------------------------------------------------------------------------

    def estimate(self, chunk_tokens: int, chunks: int = 1) -> Usage:
        """What `chunks` chunks totalling `chunk_tokens` (estimated) should cost on the primary model."""
        sent = chunk_tokens + chunks * self.overhead_estimate()
        with self._lock:
            seen_est, seen = self._seen_estimate, replace(self._seen_usage)
        return calibrated_estimate(price_of(self.models[0]), sent, chunks, self.settings.output_tokens, seen_est, seen)

    # -- extraction -------------------------------------------------------------------------------

    def extract(self, chunk: ChunkInput) -> Extraction:
        usage = Usage()
        primary, fallbacks = self.models[0], self.models[1:]
        fit = self.measure(primary, chunk)
        if not fit.ok:
            raise ExtractionError(
                f"{primary}: {fit.describe()}; re-splitting", too_large=True,
                fit_tokens=fit.fit_tokens(chunk.token_estimate), usage=usage,
            )
        outcome = self._ask(primary, chunk, usage, fit)
        if isinstance(outcome, Extraction):
            return outcome
        if outcome.kind == "too_large":
            raise ExtractionError(f"{primary}: {outcome.cause}; re-splitting", too_large=True, usage=usage)
        if outcome.kind == "fatal":
            raise ExtractionError(f"{primary}: {outcome.cause}", retryable=False, usage=usage)
        causes = [f"primary {primary} {outcome.cause}"]
        resplit: tuple[str, int] | None = None
        for model in fallbacks:
            fit = self.measure(model, chunk)
            if not fit.ok:
                causes.append(f"fallback {model} refused: {fit.describe()}")
                target = fit.fit_tokens(chunk.token_estimate)
                if resplit is None and target is not None:
                    resplit = (model, target)
                continue
            outcome = self._ask(model, chunk, usage, fit)
            if isinstance(outcome, Extraction):
                return outcome
            if outcome.kind == "too_large":
                raise ExtractionError("; ".join([*causes, f"fallback {model} {outcome.cause}; re-splitting"]),
                                      too_large=True, usage=usage)
            if outcome.kind == "fatal":
                raise ExtractionError("; ".join([*causes, f"fallback {model} {outcome.cause}"]),
                                      retryable=False, usage=usage)
            causes.append(f"fallback {model} {outcome.cause}")
        if resplit is not None:
            model, target = resplit
            raise ExtractionError("; ".join(causes) + f"; re-splitting to fit {model}", too_large=True,
                                  fit_tokens=target, usage=usage)
        raise ExtractionError("; ".join(causes), usage=usage)

    def _ask(self, model: str, chunk: ChunkInput, usage: Usage, fit: Fit) -> Extraction | _Failed:
        """Up to max_attempts requests to one model. Returns the extraction, or why there is none."""
        failure = _Failed("transient", "gave no answer")
        attempts = max(1, self.settings.max_attempts)
        for attempt in range(1, attempts + 1):
            error: Exception | None = None
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
                error = exc
                failure = _classify(exc)
            else:
                spent = usage_from(model, response.usage)
                usage.add(spent)
                outcome = self._read(model, chunk, response, spent)
                if isinstance(outcome, Extraction):
                    return outcome.model_copy(update={"usage": usage})
                failure = outcome
            if failure.kind in ("too_large", "fatal", "refused", "rejected"):
                return failure
            if attempt < attempts:
                self.sleep(self._delay(attempt, error))
        return _Failed(failure.kind, f"{failure.cause} after {attempts} attempts")

    def _read(self, model: str, chunk: ChunkInput, response: Any, spent: Usage) -> Extraction | _Failed:
        stop = response.stop_reason
        if stop in ("max_tokens", "model_context_window_exceeded"):
            return _Failed("too_large", f"answer truncated (stop_reason {stop})")
        if stop == "refusal":
            return _Failed("refused", "refused to answer (stop_reason refusal)")
        # Blocks by type: a thinking block may come first; a tool call carries the answer in tool mode.
        tool = next((b for b in response.content if getattr(b, "type", None) == "tool_use"), None)
        text = "".join(block.text for block in response.content if getattr(block, "type", None) == "text")
        try:
            items = read_answer(tool.input if tool is not None else text)
        except MalformedAnswer as exc:
            return _Failed("malformed", str(exc))
        with self._lock:
            self._seen_estimate += chunk.token_estimate + self.overhead_estimate(chunk)
            self._seen_usage.add(spent)
        return Extraction(chunk_id=chunk.chunk_id, items=items, extractor=self.name, model=model)

    def _delay(self, attempt: int, error: Exception | None) -> float:
        cap = self.settings.retry_max_delay
        after = _retry_after(error)
        if after is not None:
            return min(cap, after)
        base = self.settings.retry_delay * 2 ** (attempt - 1)
        return float(min(cap, base * (1 + random.random() / 4)))


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


def _classify(exc: Exception) -> _Failed:
    if isinstance(exc, anthropic.APITimeoutError):
        return _Failed("transient", "timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return _Failed("transient", "connection failed")
    assert isinstance(exc, anthropic.APIStatusError)
    status = exc.status_code
    message = hide_secrets((exc.api_message or "").strip())  # before cutting: half a key matches nothing
    detail = f": {message[:200]}" if message else ""
    if status == 529:
        return _Failed("transient", "overloaded (529)")
    if status == 429:
        return _Failed("transient", "rate limited (429)")
    if status >= 500 or status in (408, 409):
        return _Failed("transient", f"server error ({status})")
    if status == 413 or (status == 400 and (_TOO_LONG.search(message) or "too_long" in (exc.error_code or ""))):
        return _Failed("too_large", f"prompt too long ({status}){detail}")
    if status in (401, 403):
        return _Failed("fatal", f"authentication failed ({status}): check ANTHROPIC_API_KEY")
    if status == 402:
        return _Failed("fatal", f"billing error ({status}){detail}")
    if status == 404:
        return _Failed("rejected", f"model not found (404){detail}")
    return _Failed("rejected", f"request rejected ({status}){detail}")
