"""The retry policy every model extractor follows: how many attempts one model gets for one chunk,
how long to wait between them, and which failures are worth another attempt.

The extractors turn off their transport's own retries (the SDK's max_retries=0, Claude Code's
CLAUDE_CODE_MAX_RETRIES=0) so that every attempt passes through here: counted, budgeted, its cause kept.
"""

from __future__ import annotations

import contextvars
import random
import threading
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
    timed_out: bool = False  # no answer within request_timeout: a server this slow is tried once more at most

    @property
    def retried(self) -> bool:
        return self.kind in RETRIED


# Timed-out attempts of one model for one chunk before it fails: against a slow local server the
# defaults (request_timeout 120 s, max_attempts 4) would spend 8 minutes on a chunk; this caps it at
# 2 x request_timeout. A timeout is seldom a passing fault: the next attempt is as slow.
TIMEOUTS_TRIED = 2


class RequestAllowance:
    """The requests a run may still send (its max_requests), shared by every chunk in flight. The run
    takes one for each chunk it sends (its first attempt); a retry takes one of its own, or is not made."""

    def __init__(self, left: int) -> None:
        self._left = left
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self._left <= 0:
                return False
            self._left -= 1
            return True

    def refund(self, requests: int) -> None:
        """Taken but never sent (a chunk re-split before it left): the run may still send them."""
        with self._lock:
            self._left += max(0, requests)


class ChunkRequests:
    """One chunk's share of the run's allowance: its first attempt was taken when it was sent."""

    def __init__(self, allowance: RequestAllowance) -> None:
        self.allowance = allowance
        self.first = True
        self.taken = 1  # the first attempt's, taken by the run

    def admit(self) -> bool:
        if self.first:
            self.first = False
            return True
        if self.allowance.take():
            self.taken += 1
            return True
        return False


# Set by the runner around one chunk's extraction (in the worker thread's context): None, no run budget.
CHUNK_REQUESTS: contextvars.ContextVar[ChunkRequests | None] = contextvars.ContextVar("chunk_requests", default=None)
BUDGET_SPENT = "the run's request budget is spent"


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
        timeouts = 0
        gate = CHUNK_REQUESTS.get()
        for n in range(1, self.attempts + 1):
            if gate is not None and not gate.admit():
                return Failed(failure.kind, f"{failure.cause} after {_attempts(n - 1)} ({BUDGET_SPENT})")
            outcome = attempt()
            if not isinstance(outcome, Failed):
                return outcome
            failure = outcome
            if not failure.retried:
                return failure
            timeouts += failure.timed_out
            if timeouts >= TIMEOUTS_TRIED:
                return Failed(failure.kind, f"{failure.cause} after {_attempts(n)} ({timeouts} timed out: the "
                                            "server is too slow for request_timeout)")
            if n < self.attempts:
                sleep(self.delay(n, failure.retry_after))
        return Failed(failure.kind, f"{failure.cause} after {self.attempts} attempts")


def _attempts(n: int) -> str:
    return "1 attempt" if n == 1 else f"{n} attempts"
