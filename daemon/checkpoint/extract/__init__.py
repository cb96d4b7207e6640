"""Extractors read one chunk and propose items. The pipeline validates and commits what they return."""

from __future__ import annotations

from typing import Protocol

from checkpoint.model import ChunkInput, Extraction


class ExtractionError(Exception):
    """A chunk could not be extracted this time. The chunk stays due; `cause` is shown to the user.

    `too_large` asks the pipeline to re-split the chunk smaller before the next attempt.
    """

    def __init__(self, cause: str, *, retryable: bool = True, too_large: bool = False) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retryable = retryable
        self.too_large = too_large


class Extractor(Protocol):
    name: str
    description: str  # said aloud to the user: which extractor runs, and why

    def extract(self, chunk: ChunkInput) -> Extraction:
        """Return the chunk's items, or raise ExtractionError. Called from worker threads."""
        ...
