"""Every extractor a user may ask for by name, registered once: its name, a one-line description, the
settings it reads, how to build it and whether it can run here.

Config reads the names a setting may take from extract/names.py (config.EXTRACTORS, which the daemon's
and the CLI's settings are checked against), a leaf, so that config imports no extractor's registry.
Read by choose.py (building the one asked for, or saying why it cannot run), the CLI's help, and the
editor's `checkpoint.extractor` setting (its enum and descriptions are generated from this table into
vscode-extension/package.json by scripts/vscode_settings.py; tests/unit/extract/test_registry.py and
tests/unit/server/test_editor_settings.py check both).

Importing this module imports no extractor: the CLI's help reads it, and must come without the SDK,
pydantic or a subprocess. Each factory
and readiness check imports its extractor's module when called, and `shutil` (with bz2 and lzma,
~2 ms) only when a readiness check looks for a command.

A new extractor: its module in extract/, its name in extract/names.py, an entry here, its settings in
config.Settings; then `python -m scripts.vscode_settings` writes the editor's setting.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from checkpoint.extract import names
from checkpoint.extract.missing_commands import claude_not_found, codex_not_found

if TYPE_CHECKING:
    from checkpoint.config import Settings
    from checkpoint.extract import Extractor


@dataclass(frozen=True)
class Readiness:
    """Whether an extractor can run with these settings on this machine, found without calling a model."""

    ready: bool
    # Not ready: why not, as a clause naming the fix ("`codex` is not on PATH (...)"). Ready: what it
    # runs as, said after its description ("", " at https://gateway", ": Claude Code 2.1.328, claude.ai login").
    said: str = ""


@dataclass(frozen=True)
class ExtractorEntry:
    name: str  # the value of the `extractor` setting
    title: str  # how a sentence names it: "The {title} extractor was asked for, but ..."
    description: str  # one line for the CLI's help and the editor's setting
    settings: tuple[str, ...]  # the config.Settings fields it reads (besides the run's own: budgets, chunks)
    factory: Callable[[Settings], Extractor]
    readiness: Callable[[Settings], Readiness]


# -- the SDK extractor --------------------------------------------------------------------------------


def credentials_variable() -> str | None:
    """Which variable holds the credentials the Anthropic SDK will use (never its value)."""
    return next((v for v in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if os.environ.get(v)), None)


def _anthropic(settings: Settings) -> Extractor:
    from checkpoint.extract.anthropic import AnthropicExtractor  # the SDK loads only when it is used

    return AnthropicExtractor(settings)


def _anthropic_ready(settings: Settings) -> Readiness:
    if credentials_variable() is None:
        return Readiness(False, "neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set")
    base_url = os.environ.get("ANTHROPIC_BASE_URL")
    if not base_url:
        return Readiness(True)
    from checkpoint.redact.outside import hide_secrets  # a gateway's URL may carry its credentials

    return Readiness(True, f" at {hide_secrets(base_url)}")


# -- the Claude Code CLI extractor ----------------------------------------------------------------------


def _claude_code(settings: Settings) -> Extractor:
    from checkpoint.extract.claude_code import ClaudeCodeExtractor

    return ClaudeCodeExtractor(settings)


def _claude_code_ready(settings: Settings) -> Readiness:
    # Not installed: said without importing anything more; installed: asked through claude_cli, which
    # loads no SDK (the automatic choice runs at every `checkpoint now`).
    import shutil

    if shutil.which(settings.claude_command) is None:
        return Readiness(False, claude_not_found(settings.claude_command))
    from checkpoint.extract.claude_cli import cli_status

    status = cli_status(settings.claude_command)
    return Readiness(True, f": {status.cause}") if status.usable else Readiness(False, status.cause)


# -- the Codex CLI extractor ----------------------------------------------------------------------------


def _codex(settings: Settings) -> Extractor:
    from checkpoint.extract.codex import CodexExtractor

    return CodexExtractor(settings)


def _codex_ready(settings: Settings) -> Readiness:
    import shutil

    if shutil.which(settings.codex_command) is None:  # as for claude-code: no extractor import to say this
        return Readiness(False, codex_not_found(settings.codex_command))
    from checkpoint.extract.codex import codex_unavailable

    missing = codex_unavailable(settings)
    return Readiness(True) if missing is None else Readiness(False, missing)


# -- any OpenAI-compatible server (Ollama, llama.cpp, LM Studio, vLLM, ...) --------------------------------


def _openai(settings: Settings) -> Extractor:
    from checkpoint.extract.openai_compatible import OpenAICompatibleExtractor

    return OpenAICompatibleExtractor(settings)


def _openai_ready(settings: Settings) -> Readiness:
    from checkpoint.extract.openai_http import server_unavailable  # the standard library's HTTP only

    missing, said = server_unavailable(settings)
    return Readiness(True, said) if missing is None else Readiness(False, missing)


# -- the offline extractor ------------------------------------------------------------------------------


def _heuristic(settings: Settings) -> Extractor:
    from checkpoint.extract.heuristic import HeuristicExtractor  # loads pydantic: not for scan or status

    return HeuristicExtractor()


def _always_ready(settings: Settings) -> Readiness:
    return Readiness(True)


# The model extractors' common settings: the retry policy (retry.py) and each request's timeout.
_RETRIES = ("max_attempts", "retry_delay", "retry_max_delay", "request_timeout")
_CLAUDE = ("model", "fallback_models", "output_tokens", *_RETRIES)

ENTRIES: tuple[ExtractorEntry, ...] = (
    ExtractorEntry(
        "anthropic", "Claude",
        "Claude through the Anthropic API (needs an API key: ANTHROPIC_API_KEY, "
        "or Checkpoint: Set API Key in VS Code).",
        _CLAUDE, _anthropic, _anthropic_ready),
    ExtractorEntry(
        "claude-code", "claude-code",
        "Claude through your installed Claude Code CLI and its login (a Claude subscription works; no API key).",
        ("claude_command", "db", *_CLAUDE), _claude_code, _claude_code_ready),
    ExtractorEntry(
        "codex", "Codex",
        "OpenAI models through your installed Codex CLI and its login (codex exec).",
        ("codex_command", "codex_model", "codex_config", "db", *_RETRIES), _codex, _codex_ready),
    ExtractorEntry(
        "openai", "OpenAI-compatible",
        "A model on any OpenAI-compatible server: Ollama, llama.cpp, LM Studio, vLLM (openai_base_url, "
        "openai_model, openai_context_tokens; OPENAI_API_KEY for a hosted one).",
        ("openai_base_url", "openai_model", "openai_context_tokens", "openai_answer_bytes", "output_tokens",
         *_RETRIES), _openai,
        _openai_ready),
    ExtractorEntry(
        "heuristic", "heuristic",
        "The offline phrase-rule extractor; no network.",
        (), _heuristic, _always_ready),
)
BY_NAME: dict[str, ExtractorEntry] = {entry.name: entry for entry in ENTRIES}
NAMES = names.NAMES  # in the registry's order: tests/unit/extract/test_registry.py checks they agree
OFFLINE = names.OFFLINE
AUTOMATIC = names.AUTOMATIC
AUTOMATIC_DESCRIPTION = ("Claude through the API when an API key is set, else your logged-in Claude Code, else "
                         "your logged-in Codex, else the OpenAI-compatible server at openai_base_url when it is set "
                         "and answers, else the offline heuristic extractor (the daemon says which).")
