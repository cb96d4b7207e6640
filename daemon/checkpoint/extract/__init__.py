"""Extractors read one chunk and propose items. The pipeline validates and commits what they return."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from checkpoint.model import ChunkInput, Usage

if TYPE_CHECKING:
    from checkpoint.answer import Extraction


class ExtractionError(Exception):
    """A chunk could not be extracted this time. The chunk stays due; `cause` is shown to the user.

    `too_large` asks the pipeline to re-split the chunk smaller before the next attempt; `fit_tokens`,
    when known, is the chunk size (in the chunker's estimate) that would fit. `retryable=False` means
    no other chunk will fare better either (bad credentials, say), so the run stops sending.
    `usage` is what the failed attempts cost: a truncated answer is still billed.
    """

    def __init__(
        self,
        cause: str,
        *,
        retryable: bool = True,
        too_large: bool = False,
        fit_tokens: int | None = None,
        usage: Usage | None = None,
    ) -> None:
        # Imported here: config reads the extractors' names from this package (registry.py) at every
        # command's start, which needs no redaction tables.
        from checkpoint.redact.outside import hide_secrets

        cause = hide_secrets(cause)  # it is stored (chunks.cause) and shown: an API error may quote a key
        super().__init__(cause)
        self.cause = cause
        self.retryable = retryable
        self.too_large = too_large
        self.fit_tokens = fit_tokens
        self.usage = usage or Usage()


class Extractor(Protocol):
    name: str
    description: str  # said aloud to the user: which extractor runs, and why

    def extract(self, chunk: ChunkInput) -> Extraction:
        """Return the chunk's items, or raise ExtractionError. Called from worker threads."""
        ...


@runtime_checkable
class Priced(Protocol):
    """An extractor that costs money says what a chunk is expected to cost, so that a run budget
    can stop before it is exceeded and the rest can be reported with the price of finishing it."""

    def estimate(self, chunk_tokens: int, chunks: int = 1) -> Usage:
        """Expected usage (tokens and cost) of `chunks` chunks totalling `chunk_tokens` (estimated)."""
        ...


@runtime_checkable
class Windowed(Protocol):
    """An extractor whose model reads a bounded window says how large a chunk may be, so that new
    chunks are formed to fit it from the start (older ones are re-split when one is found too large)."""

    def chunk_budget(self) -> int:
        """The largest chunk, in the chunker's estimate, that the model's window takes."""
        ...


def fitted_chunk_tokens(extractor: Extractor, chunk_tokens: int) -> int:
    """The configured chunk size, shrunk to what the extractor's window takes."""
    if isinstance(extractor, Windowed):
        return min(chunk_tokens, int(extractor.chunk_budget()))
    return chunk_tokens
