"""Which extractor a run uses, and the sentence that says which and why. Shared by every front end
(the CLI prints the sentence, the daemon logs it or shows it once); nothing here prints."""

from __future__ import annotations

import os
from dataclasses import dataclass

from checkpoint.config import Settings
from checkpoint.extract import Extractor
from checkpoint.redact.outside import hide_secrets

OFFLINE = "the offline heuristic extractor (phrase rules, no network)"


@dataclass(frozen=True)
class ExtractorChoice:
    extractor: Extractor
    sentence: str  # which extractor runs, and why
    fallback: bool  # the offline extractor stands in for Claude (no credentials): worth telling the user


def credentials_variable() -> str | None:
    """Which variable holds the credentials the SDK will use (never its value)."""
    return next((v for v in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if os.environ.get(v)), None)


def choose_extractor(settings: Settings) -> ExtractorChoice:
    """Claude through the SDK when credentials are set (or asked for); else Claude through the user's
    `claude` CLI when it runs and is logged in (or asked for); else the offline heuristic."""
    from checkpoint.extract.heuristic import HeuristicExtractor  # loads pydantic: not for scan or status

    wanted = settings.extractor
    credentials = credentials_variable()
    if wanted == "heuristic":
        return ExtractorChoice(HeuristicExtractor(), f"Using {OFFLINE}, as configured.", fallback=False)
    if wanted == "codex":  # only when asked for: never part of the automatic choice
        from checkpoint.extract.codex import CodexExtractor, codex_unavailable

        missing = codex_unavailable(settings)
        if missing is not None:
            why = (f"The Codex extractor was asked for, but {missing}: using the offline heuristic extractor "
                   f"instead (phrase rules, no network).")
            return ExtractorChoice(HeuristicExtractor(), why, fallback=True)
        codex = CodexExtractor(settings)
        return ExtractorChoice(codex, f"Using {codex.description} (as configured).", fallback=False)
    if wanted == "claude-code" or (wanted is None and credentials is None):
        from checkpoint.extract.claude_code import ClaudeCodeExtractor, cli_status

        status = cli_status(settings.claude_command)
        if status.usable:
            cli = ClaudeCodeExtractor(settings)
            why = "as configured" if wanted else "no ANTHROPIC_API_KEY set; the claude CLI is logged in"
            return ExtractorChoice(cli, f"Using {cli.description}: {status.cause} ({why}).",
                                   fallback=False)
        if wanted == "claude-code":
            why = (f"The claude-code extractor was asked for, but {status.cause}: using the offline heuristic "
                   "extractor instead (phrase rules, no network).")
            return ExtractorChoice(HeuristicExtractor(), why, fallback=True)
        return ExtractorChoice(HeuristicExtractor(), f"No ANTHROPIC_API_KEY set and {status.cause}: using {OFFLINE}.",
                               fallback=True)
    if credentials is None:  # "anthropic" asked for: every other case without credentials is above
        why = ("The Claude extractor was asked for, but neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is "
               "set: using the offline heuristic extractor instead (phrase rules, no network).")
        return ExtractorChoice(HeuristicExtractor(), why, fallback=True)
    from checkpoint.extract.anthropic import AnthropicExtractor  # the SDK loads only when it is used

    extractor = AnthropicExtractor(settings)
    why = "as configured" if wanted == "anthropic" else f"{credentials} is set"
    where = f" at {hide_secrets(os.environ['ANTHROPIC_BASE_URL'])}" if os.environ.get("ANTHROPIC_BASE_URL") else ""
    return ExtractorChoice(extractor, f"Using {extractor.description}{where} ({why}).", fallback=False)
