"""Daemon settings. Engine settings (db, sources, extractor, budgets ...) come from config.load()
(defaults < config file < environment < flags) with the editor's options as the top layer; the
daemon's own settings (scope, extraction policy, diagnostics) come from the editor alone.

The editor sends them as initializationOptions and again with workspace/didChangeConfiguration,
either bare or under a "checkpoint" key, in camelCase (VS Code) or snake_case.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from lsprotocol import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from checkpoint import config

SeverityName = Literal["error", "warning", "information", "hint", "off"]

SEVERITIES: dict[str, types.DiagnosticSeverity | None] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
    "off": None,
}


def _default_severity() -> dict[str, SeverityName]:
    return {"decision": "information", "constraint": "information", "question": "hint"}


class ServerSettings(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True)

    scope: Literal["workspace", "all"] = "workspace"
    """Which sessions status, extraction and items cover: those whose cwd is inside a workspace
    folder, or every session in the database."""
    extraction: Literal["auto", "manual"] = "auto"
    """auto: extract in the background when a session is idle or has many pending turns;
    manual: only on checkpoint.now."""
    idle_seconds: float = Field(default=20.0, ge=0)
    max_pending_turns: int = Field(default=50, ge=0)
    rescan_seconds: float = Field(default=15.0, gt=0)
    """Period of the light rescan that backs up the file watcher (new roots, missed events)."""
    diagnostics: bool = True
    severity: dict[str, SeverityName] = Field(default_factory=_default_severity)

    @field_validator("severity", mode="before")
    @classmethod
    def _merge_severity(cls, value: Any) -> Any:
        # A client that sets one kind keeps the defaults of the others.
        if isinstance(value, dict):
            return {**_default_severity(), **{str(k): str(v).lower() for k, v in value.items()}}
        return value

    def severity_of(self, kind: str) -> types.DiagnosticSeverity | None:
        return SEVERITIES.get(self.severity.get(kind, "information"))


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def section(options: Any) -> dict[str, Any]:
    """The checkpoint settings inside whatever the client sent."""
    if not isinstance(options, dict):
        return {}
    inner = options.get("checkpoint")
    return dict(inner) if isinstance(inner, dict) else dict(options)


def engine_overrides(options: dict[str, Any]) -> dict[str, Any]:
    """Keys of config.Settings, as the top layer for config.load. Empty strings and lists (a VS Code
    setting left at its empty default) mean "not set here"."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        name = _snake(key)
        if name in config.NAMES and value not in ("", [], None):
            out[name] = value
    return out


def resolve(
    options: Any, flags: dict[str, Any] | None = None, environ: dict[str, str] | None = None
) -> tuple[config.Settings, ServerSettings, list[str]]:
    """Engine and daemon settings from the client's options over `checkpoint serve`'s flags. A
    layer that does not validate is dropped and named in the returned warnings, so the daemon
    still starts on the others."""
    raw = section(options)
    base = {k: v for k, v in (flags or {}).items() if v is not None}
    warnings: list[str] = []
    try:
        engine = config.load({**base, **engine_overrides(raw)}, environ)
    except (ValidationError, ValueError, OSError) as exc:
        warnings.append(f"ignoring the editor's engine settings: {_brief(exc)}")
        engine = config.load(base, environ)
    try:
        daemon = ServerSettings.model_validate(raw)
    except ValidationError as exc:
        warnings.append(f"ignoring the editor's daemon settings: {_brief(exc)}")
        daemon = ServerSettings()
    return engine, daemon, warnings


def _brief(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return str(exc)
