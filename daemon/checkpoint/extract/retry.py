"""The retry policy every model extractor follows: how many attempts one model gets for one chunk,
how long to wait between them, and which failures are worth another attempt.

The extractors turn off their transport's own retries (the SDK's max_retries=0, Claude Code's
CLAUDE_CODE_MAX_RETRIES=0) so that every attempt passes through here: counted, budgeted, its cause kept.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

if TYPE_CHECKING:
    from checkpoint.config import Settings

# What one attempt's failure means for the next step:
#   transient, malformed -> another attempt on the same model (then the next fallback);
#   refused, rejected    -> no further attempt on this model, the next fallback;
#   too_large            -> re-split the chunk;
#   fatal                -> stop the run: no other chunk will fare better.
FailureKind = Literal["transient", "malformed", "refused", "rejected", "too_large", "fatal"]
RETRIED: frozenset[FailureKind] = frozenset({"transient", "malformed"})

Sleep = Callable[[float], None]
T = TypeVar("T")


@dataclass(frozen=True)
class Failed:
    """Why an attempt (or a model's attempts) gave no usable answer."""

    kind: FailureKind
    cause: str
    retry_after: float | None = None  # seconds the server asked to wait before the next attempt

    @property
    def retried(self) -> bool:
        return self.kind in RETRIED


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int  # per model and chunk
    first_delay: float  # seconds before the first retry; doubles each time
    max_delay: float  # cap on any wait, retry-after included

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        return cls(max(1, settings.max_attempts), settings.retry_delay, settings.retry_max_delay)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """The wait after failed attempt `attempt` (from 1): what the server asked for, else an
        exponential backoff with up to a quarter of jitter; never more than max_delay."""
        if retry_after is not None:
            return min(self.max_delay, retry_after)
        base = self.first_delay * 2 ** (attempt - 1)
        return float(min(self.max_delay, base * (1 + random.random() / 4)))

    def run(self, attempt: Callable[[], T | Failed], sleep: Sleep) -> T | Failed:
        """Up to `attempts` calls of `attempt`, waiting between them, until one answers or fails in a
        way no further attempt helps. The last failure's cause says how many attempts were made."""
        failure = Failed("transient", "gave no answer")
        for n in range(1, self.attempts + 1):
            outcome = attempt()
            if not isinstance(outcome, Failed):
                return outcome
            failure = outcome
            if not failure.retried:
                return failure
            if n < self.attempts:
                sleep(self.delay(n, failure.retry_after))
        return Failed(failure.kind, f"{failure.cause} after {self.attempts} attempts")
