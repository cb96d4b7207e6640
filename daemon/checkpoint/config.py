"""Settings: defaults < config file < environment < command-line flags (< LSP options, later)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from checkpoint.chunker import DEFAULT_CHUNK_TOKENS
from checkpoint.sources.tailer import DEFAULT_MAX_LINE_BYTES


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def default_db() -> Path:
    return _data_home() / "checkpoint" / "checkpoint.db"


def default_sources() -> list[Path]:
    home = Path.home()
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    codex = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else home / ".codex"
    return [claude / "projects", codex / "sessions"]


def config_file() -> Path:
    if os.environ.get("CHECKPOINT_CONFIG"):
        return Path(os.environ["CHECKPOINT_CONFIG"])
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "checkpoint" / "config.toml"


class Settings(BaseModel):
    db: Path = Field(default_factory=default_db)
    sources: list[Path] = Field(default_factory=default_sources)
    extractor: str | None = None  # "anthropic" | "heuristic"; None: anthropic when a key is set
    model: str = "claude-haiku-4-5"
    fallback_models: list[str] = Field(default_factory=list)
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    concurrency: int = 2
    # run budgets: what is left when one is reached stays pending and is reported
    max_requests: int | None = None
    max_tokens: int | None = None  # every billed token: input, cache and output
    max_cost: float | None = None  # US dollars
    # the Claude extractor
    output_tokens: int = 4096  # the answer's max_tokens, reserved in the model's window
    max_attempts: int = 4  # requests per model per chunk before the next fallback (or failure)
    retry_delay: float = 1.0  # seconds before the first retry; doubles each time
    retry_max_delay: float = 30.0  # cap on any wait, retry-after included
    request_timeout: float = 120.0  # seconds per request
    known_items: int = 30  # the session's latest items shown with each chunk, so restatements merge
    # How long a run holds a chunk it sent before another run may take it. A live run renews its
    # leases while it waits (every third of this); a killed run's chunks are due again after it.
    lease_seconds: float = Field(default=300.0, gt=0)
    # Secrets are replaced by typed placeholders before a turn is stored and before a chunk is sent
    # (checkpoint.redact); `redact_patterns` adds detectors: name -> regex (a group named `secret`,
    # if any, is what goes).
    redact: bool = True
    redact_patterns: dict[str, str] = Field(default_factory=dict)
    # A Claude Code session whose transcript is this close to being deleted (cleanupPeriodDays in
    # ~/.claude/settings.json, by file mtime) while turns are pending is flagged and extracted first.
    at_risk_days: float = Field(default=7.0, ge=0)

    @field_validator("redact_patterns")
    @classmethod
    def _patterns_compile(cls, value: dict[str, str]) -> dict[str, str]:
        from checkpoint.redact import custom_detectors

        for detector in custom_detectors(value):
            _ = detector.pattern  # a name or a regex that is no good is said when the settings load
        return value


_ENV: dict[str, str] = {
    "CHECKPOINT_DB": "db",
    "CHECKPOINT_SOURCES": "sources",
    "CHECKPOINT_EXTRACTOR": "extractor",
    "CHECKPOINT_MODEL": "model",
    "CHECKPOINT_FALLBACK_MODELS": "fallback_models",
    "CHECKPOINT_CHUNK_TOKENS": "chunk_tokens",
    "CHECKPOINT_MAX_LINE_BYTES": "max_line_bytes",
    "CHECKPOINT_CONCURRENCY": "concurrency",
    "CHECKPOINT_MAX_REQUESTS": "max_requests",
    "CHECKPOINT_MAX_TOKENS": "max_tokens",
    "CHECKPOINT_MAX_COST": "max_cost",
    "CHECKPOINT_LEASE_SECONDS": "lease_seconds",
    "CHECKPOINT_REDACT": "redact",
    "CHECKPOINT_AT_RISK_DAYS": "at_risk_days",
}


def _from_env(environ: dict[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for var, key in _ENV.items():
        raw = environ.get(var)
        if not raw:
            continue
        if key == "sources":
            values[key] = [Path(p).expanduser() for p in raw.split(os.pathsep) if p]
        elif key == "fallback_models":
            values[key] = [m.strip() for m in raw.split(",") if m.strip()]
        elif key == "db":
            values[key] = Path(raw).expanduser()
        else:
            values[key] = raw
    return values


def load(overrides: dict[str, Any] | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Merge every layer; `overrides` (flags) win. None values in overrides are ignored."""
    values: dict[str, Any] = {}
    path = config_file()
    if path.is_file():
        with path.open("rb") as fh:
            values.update(tomllib.load(fh))
    values.update(_from_env(dict(os.environ) if environ is None else environ))
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    if "sources" in values:
        values["sources"] = [Path(p).expanduser() for p in values["sources"]]
    return Settings(**values)


CLAUDE_CLEANUP_DAYS = 30  # Claude Code's default cleanupPeriodDays


def claude_cleanup_days() -> float:
    """How old (by mtime) a Claude Code transcript gets before Claude Code deletes it: cleanupPeriodDays
    from its settings.json (in $CLAUDE_CONFIG_DIR or ~/.claude), else its default of 30 days."""
    base = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") else Path.home() / ".claude"
    try:
        with (base / "settings.json").open("rb") as fh:
            days = json.load(fh).get("cleanupPeriodDays")
    except (OSError, ValueError, AttributeError):
        return CLAUDE_CLEANUP_DAYS
    if isinstance(days, bool) or not isinstance(days, int | float) or days <= 0:
        return CLAUDE_CLEANUP_DAYS
    return float(days)
