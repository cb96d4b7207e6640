"""Claude models as the extractors see them: published windows, output reserves and prices, and the
fit of one chunk's request into one model's window. Shared by every extractor that sends to a Claude
model (the SDK's, the Claude Code CLI's); pure, with no SDK import.

Windows here are used when the API cannot say (`models.retrieve` unavailable, or the Claude Code CLI,
which reports nothing before a request); prices always (no API reports them).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace

from checkpoint.chunker import MIN_CHUNK_TOKENS
from checkpoint.model import Usage


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


# Published figures (notes/anthropic.md, 2026-11-30). Haiku 5.5 is priced in its <=100K-token band,
# which every chunk stays in.
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


# -- windows and fit --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    max_input_tokens: int
    max_output_tokens: int
    source: str  # "models.retrieve", "published figures", or "assumed (unknown model)"
    structured_outputs: bool = True  # False: the model says it lacks them; a forced tool carries the schema


def published_window(model: str) -> Window:
    """The model's window by the published figures (the smallest published one for an unknown model)."""
    facts, known = model_facts(model)
    return Window(facts.max_input_tokens, facts.max_output_tokens,
                  "published figures" if known else "assumed (unknown model)")


def output_reserve(window: Window, output_tokens: int) -> int:
    """The tokens kept free in the window for the answer: the configured answer size, within the model's."""
    return max(1, min(output_tokens, window.max_output_tokens))


def chunk_budget(window: Window, reserve: int, overhead: int) -> int:
    """The largest chunk (in the chunker's estimate) the window takes beside the reserve and the
    request's other tokens. The estimate over-counts, so a chunk of this size fits."""
    return max(MIN_CHUNK_TOKENS, window.max_input_tokens - reserve - overhead)


@dataclass(frozen=True)
class Fit:
    """One chunk's request measured against one model's window."""

    model: str
    tokens: int  # the whole request, counted (or estimated)
    window: Window
    reserve: int
    counted: bool  # False: the model's own count was unavailable and the local estimate stood in
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


# -- cost estimates ---------------------------------------------------------------------------------


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


class Calibration:
    """What this run's answers cost against their estimated size, so that the estimate of the rest
    (a budget's stop, the price of finishing) follows what the model really counts and charges.
    Answers arrive on worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._estimate = 0
        self._usage = Usage()

    def record(self, estimated_tokens: int, spent: Usage) -> None:
        """An answer: its request's tokens by the chunker's estimate, and what it cost."""
        with self._lock:
            self._estimate += estimated_tokens
            self._usage.add(spent)

    def estimate(self, price: Price, sent: int, chunks: int, output_tokens: int) -> Usage:
        """calibrated_estimate on what has been recorded so far."""
        with self._lock:
            seen_estimate, seen = self._estimate, replace(self._usage)
        return calibrated_estimate(price, sent, chunks, output_tokens, seen_estimate, seen)
