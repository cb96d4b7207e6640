"""The fallback walk (invariant 5 in docs/architecture.md): a chunk goes to the primary model, then to
each fallback model in order, and to a model only after its request was measured against that model's
window. A chunk that does not fit a model is never sent to it: the primary's misfit re-splits the chunk
at once; a fallback's is kept as the true cause and, when no model answers, the chunk is re-split to
fit the first fallback it could fit after a split, or refused with every model's cause.

Shared by every extractor with fallback models (the SDK's, the Claude Code CLI's); how a model is
measured and asked is theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from checkpoint.extract import ExtractionError
from checkpoint.extract.model_windows import Fit
from checkpoint.extract.retry import Failed
from checkpoint.model import ChunkInput, Usage

if TYPE_CHECKING:
    from checkpoint.answer import Extraction
    from checkpoint.config import Settings


def model_order(settings: Settings) -> list[str]:
    """The primary model, then the fallback models (the primary not twice)."""
    return [settings.model, *[m for m in settings.fallback_models if m != settings.model]]


def models_said(models: list[str]) -> str:
    """"claude-haiku-4-5, falling back to claude-sonnet-4-6": how a description names the models."""
    return models[0] + (f", falling back to {', '.join(models[1:])}" if len(models) > 1 else "")


def through_models(
    models: list[str],
    chunk: ChunkInput,
    usage: Usage,
    measure: Callable[[str], Fit],
    ask: Callable[[str, Fit], Extraction | Failed],
) -> Extraction:
    """The first answer of `models` in order, each asked (its attempts: `ask`) only when `measure`
    found the chunk's request fits its window. Raises ExtractionError with every model's cause and
    `usage` (what the attempts cost): too_large to re-split, retryable=False when a failure is fatal."""
    causes: list[str] = []
    resplit: tuple[str, int] | None = None  # the first fallback a smaller chunk would fit, and that size
    for i, model in enumerate(models):
        role = "primary" if i == 0 else "fallback"
        fit = measure(model)
        if not fit.ok:
            target = fit.fit_tokens(chunk.token_estimate)
            if i == 0:
                raise ExtractionError(f"{model}: {fit.describe()}; re-splitting", too_large=True,
                                      fit_tokens=target, usage=usage)
            causes.append(f"fallback {model} refused: {fit.describe()}")
            if resplit is None and target is not None:
                resplit = (model, target)
            continue
        outcome = ask(model, fit)
        if not isinstance(outcome, Failed):
            return outcome
        said = f"{role} {model} {outcome.cause}" if i else f"{model}: {outcome.cause}"
        if outcome.kind == "too_large":
            raise ExtractionError("; ".join([*causes, said + "; re-splitting"]), too_large=True, usage=usage)
        if outcome.kind == "fatal":
            raise ExtractionError("; ".join([*causes, said]), retryable=False, usage=usage)
        causes.append(f"{role} {model} {outcome.cause}")
    if resplit is not None:
        model, target = resplit
        raise ExtractionError("; ".join(causes) + f"; re-splitting to fit {model}", too_large=True,
                              fit_tokens=target, usage=usage)
    raise ExtractionError("; ".join(causes), usage=usage)
