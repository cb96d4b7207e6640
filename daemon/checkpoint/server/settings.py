"""Daemon settings. Engine settings (db, sources, extractor, budgets ...) come from config.load()
(defaults < config file < environment < flags) with the editor's options as the top layer; the
daemon's own settings (scope, extraction policy, diagnostics) come from the editor alone.

The editor sends them as initializationOptions and again with workspace/didChangeConfiguration,
either bare or under a "checkpoint" key, in camelCase (VS Code) or snake_case.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from lsprotocol import types

from checkpoint import config

Scope = Literal["workspace", "all"]
Policy = Literal["auto", "manual"]
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


@dataclass(frozen=True)
class ServerSettings:
    """The daemon's own settings. Typed by hand, not by pydantic: the daemon's start is measured."""

    scope: Scope = "workspace"
    """Which sessions status, extraction and items cover: those whose cwd is inside a workspace
    folder, or every session in the database."""
    extraction: Policy = "auto"
    """auto: extract in the background when a session is idle or has many pending turns;
    manual: only on checkpoint.now."""
    idle_seconds: float = 20.0
    max_pending_turns: int = 50
    rescan_seconds: float = 15.0
    """Period of the light rescan that backs up the file watcher (new roots, missed events)."""
    diagnostics: bool = True
    severity: dict[str, SeverityName] = field(default_factory=_default_severity)

    def severity_of(self, kind: str) -> types.DiagnosticSeverity | None:
        return SEVERITIES.get(self.severity.get(kind, "information"))

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> ServerSettings:
        """From the client's options, camelCase or snake_case; keys of other settings are ignored.
        A value of the wrong type or out of range is a ValueError that names the option as sent."""
        settings, refused = cls.checked(options)
        if refused:
            raise ValueError(refused[0])
        return settings

    @classmethod
    def checked(cls, options: dict[str, Any]) -> tuple[ServerSettings, list[str]]:
        """The client's options, each bad one left at its default and said (one line each: the option
        as sent, the allowed values, the default kept), the good ones taken: a typo in one setting
        must not turn off another (`extraction: manual` with a misspelt scope stays manual)."""
        names = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        refused: list[str] = []
        for key, value in options.items():
            name = _snake(key)
            if name == "severity" and isinstance(value, dict):
                values[name], said = _severities(key, value)
                refused += said
            elif name in names:
                try:
                    values[name] = _checked(name, value)
                except ValueError as exc:
                    refused.append(f"{key}: {exc}, got {value!r}; keeping {_shown(getattr(cls(), name))}")
        return cls(**values), refused


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else str(value)


def _severities(key: str, value: dict[Any, Any]) -> tuple[dict[str, SeverityName], list[str]]:
    """Each kind's severity; an unknown kind or severity name is said and the kind keeps its default."""
    merged = _default_severity()
    refused: list[str] = []
    for kind, name in value.items():
        if kind not in merged:
            refused.append(f"{key}: unknown kind {kind!r} (allowed: {', '.join(merged)})")
        elif isinstance(name, str) and name.lower() in SEVERITIES:
            merged[kind] = cast(SeverityName, name.lower())
        else:
            refused.append(f"{key}: unknown severity {name!r} for {kind} (allowed: {', '.join(SEVERITIES)});"
                           f" keeping {merged[kind]}")
    return merged, refused


def _checked(name: str, value: Any) -> Any:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if name == "scope" and value in get_args(Scope):
        return value
    if name == "extraction" and value in get_args(Policy):
        return value
    if name == "idle_seconds" and number and value >= 0:
        return float(value)
    if name == "rescan_seconds" and number and value > 0:
        return float(value)
    if name == "max_pending_turns" and number and value >= 0 and float(value).is_integer():
        return int(value)
    if name == "diagnostics" and isinstance(value, bool):
        return value
    raise ValueError(_EXPECTED[name])


_EXPECTED = {
    "scope": "unknown value (allowed: workspace, all)", "extraction": "unknown value (allowed: auto, manual)",
    "idle_seconds": "expected a number >= 0", "rescan_seconds": "expected a number > 0",
    "max_pending_turns": "expected a whole number >= 0", "diagnostics": "expected true or false",
    "severity": "expected kinds (" + ", ".join(_default_severity()) + ") mapped to " + ", ".join(SEVERITIES),
}


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
    except (ValueError, OSError) as exc:
        warnings.append(f"ignoring the editor's engine settings: {exc}")
        engine = config.load(base, environ)
    daemon, refused = ServerSettings.checked(raw)
    warnings += [f"ignoring the editor's daemon settings: {line}" for line in refused]
    return engine, daemon, warnings
