"""The retry policy (extract/retry.py) and the fallback walk (extract/fallback.py) on their own, with
scripted attempts: the extractors' own tests check them again through real requests and processes."""

from __future__ import annotations

import pytest

from checkpoint.answer import Extraction
from checkpoint.extract import ExtractionError
from checkpoint.extract.fallback import through_models
from checkpoint.extract.model_windows import Fit, Window
from checkpoint.extract.retry import Failed, RetryPolicy
from checkpoint.model import ChunkInput, Usage

POLICY = RetryPolicy(attempts=3, first_delay=1.0, max_delay=3.0)
ANSWER = Extraction(chunk_id=1, items=[], extractor="test", model="m")


def test_transient_failures_are_retried_with_backoff_until_an_answer() -> None:
    script = [Failed("transient", "overloaded (529)"), Failed("malformed", "not JSON", retry_after=2.5), ANSWER]
    sleeps: list[float] = []
    assert POLICY.run(lambda: script.pop(0), sleeps.append) == ANSWER
    assert script == [] and len(sleeps) == 2
    assert 1.0 <= sleeps[0] <= 1.25 and sleeps[1] == 2.5  # backoff with jitter; then what the server asked


def test_the_last_failure_says_how_many_attempts_and_no_wait_follows_it() -> None:
    sleeps: list[float] = []
    outcome = POLICY.run(lambda: Failed("transient", "timed out", retry_after=60.0), sleeps.append)
    assert outcome == Failed("transient", "timed out after 3 attempts")
    assert sleeps == [3.0, 3.0]  # retry-after capped at max_delay


@pytest.mark.parametrize("kind", ["refused", "rejected", "too_large", "fatal"])
def test_a_failure_no_attempt_helps_is_returned_at_once(kind: str) -> None:
    failure = Failed(kind, "why")  # type: ignore[arg-type]  # each kind of the Literal in turn
    calls: list[int] = []
    sleeps: list[float] = []

    def attempt() -> Extraction | Failed:
        calls.append(1)
        return failure

    assert POLICY.run(attempt, sleeps.append) == failure
    assert (len(calls), sleeps) == (1, [])


CHUNK = ChunkInput(chunk_id=1, session_id="s", agent="claude", cwd=None, turns=[], token_estimate=10_000)


def fit(model: str, window: int) -> Fit:
    return Fit(model, tokens=11_000, window=Window(window, 4_000, "published figures"), reserve=1_000, counted=False,
               overhead=1_000)


def test_a_fallback_too_small_is_never_asked_and_the_chunk_is_resplit_to_fit_it() -> None:
    windows = {"primary": 200_000, "small": 8_000}
    asked: list[str] = []

    def ask(model: str, _fit: Fit) -> Extraction | Failed:
        asked.append(model)
        return Failed("transient", "overloaded (529) after 3 attempts")

    usage = Usage(requests=3)
    with pytest.raises(ExtractionError) as info:
        through_models(["primary", "small"], CHUNK, usage, lambda m: fit(m, windows[m]), ask)
    assert asked == ["primary"]
    error = info.value
    assert (error.cause, error.too_large, error.fit_tokens, error.usage) == (
        "primary primary overloaded (529) after 3 attempts; fallback small refused: chunk is 11,000 tokens "
        "(estimated locally; count_tokens unavailable), its window allows 8,000 - 1,000 reserve; "
        "re-splitting to fit small", True, 5_400, usage)


def test_the_primary_that_does_not_fit_resplits_at_once_and_a_fallback_answers_otherwise() -> None:
    with pytest.raises(ExtractionError) as info:
        through_models(["tiny", "big"], CHUNK, Usage(), lambda m: fit(m, 8_000 if m == "tiny" else 200_000),
                       lambda m, f: ANSWER)
    assert info.value.too_large and info.value.cause.startswith("tiny: chunk is 11,000 tokens")
    outcomes: list[Extraction | Failed] = [Failed("rejected", "model not found (404)"), ANSWER]
    assert through_models(["a", "b"], CHUNK, Usage(), lambda m: fit(m, 200_000), lambda m, f: outcomes.pop(0)) \
        == ANSWER


def test_a_fatal_failure_stops_the_walk() -> None:
    with pytest.raises(ExtractionError) as info:
        through_models(["a", "b"], CHUNK, Usage(), lambda m: fit(m, 200_000),
                       lambda m, f: Failed("fatal", "authentication failed (401)"))
    assert (info.value.cause, info.value.retryable) == ("a: authentication failed (401)", False)
