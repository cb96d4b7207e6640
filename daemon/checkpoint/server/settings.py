"""Daemon settings. Engine settings (db, sources, extractor, budgets ...) come from config.load()
(defaults < config file < environment < flags) with the editor's options as the top layer; the
daemon's own settings (scope, extraction policy, diagnostics) come from the editor alone.

The editor sends them as initializationOptions and again with workspace/didChangeConfiguration,
either bare or under a "checkpoint" key, in camelCase (VS Code) or snake_case.

The daemon is the one validator of the editor's values: each of its own options is a field below,
typed (a Literal's values are the allowed ones) with its default and, for a number, its bound, and
that field is what checks it; the VS Code extension passes values on unchecked. Each feature reads
its own section: extraction `auto`, diagnostics `diagnostics`, the watcher `rescan_seconds`.
What the editor shows of them (package.json, settingsSchema.ts) is generated from these fields by
server/editor_settings.py.
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from lsprotocol import types

from checkpoint import config

Scope = Literal["workspace", "all"]
Policy = Literal["auto", "manual"]
SeverityName = Literal["error", "warning", "information", "hint", "off"]
# How an item that asks nothing of the user is shown: a CodeLens above its lines (held items and
# code changed under a decision stay diagnostics, which ask for action), or a diagnostic like the rest.
MarksName = Literal["diagnostics", "codelens"]

SEVERITIES: dict[str, types.DiagnosticSeverity | None] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
    "off": None,
}


def _default_severity() -> dict[str, SeverityName]:
    return {"decision": "information", "constraint": "information", "question": "hint"}


def _option(name: str | None = None, *, minimum: float | None = None, above: float | None = None) -> dict[str, Any]:
    """A field's metadata: the option's name as sent when it differs from the field's, and the
    bound of a number (`minimum`: at least; `above`: more than)."""
    return {"option": name, "minimum": minimum, "above": above}


@dataclass(frozen=True)
class AutoExtraction:
    """The extraction feature's section: when the daemon extracts on its own."""

    extraction: Policy = "auto"
    """auto: extract in the background when a session is idle or has many pending turns;
    manual: only on checkpoint.now."""
    idle_seconds: float = field(default=20.0, metadata=_option(minimum=0))
    max_pending_turns: int = field(default=50, metadata=_option(minimum=0))


@dataclass(frozen=True)
class DiagnosticsSettings:
    """The diagnostics feature's section."""

    enabled: bool = field(default=True, metadata=_option("diagnostics"))
    severity: dict[str, SeverityName] = field(default_factory=_default_severity)
    # Any LSP editor gets every item as a diagnostic (Neovim shows no CodeLens unless asked to); the
    # VS Code extension asks for "codelens" (its own default, editor_settings.py).
    marks: MarksName = field(default="diagnostics", metadata=_option("marks"))

    def severity_of(self, kind: str) -> types.DiagnosticSeverity | None:
        return SEVERITIES.get(self.severity.get(kind, "information"))


@dataclass(frozen=True)
class ServerSettings:
    """The daemon's own settings. Typed by hand, not by pydantic: the daemon's start is measured."""

    scope: Scope = "workspace"
    """Which sessions status, extraction and items cover: those whose cwd is inside a workspace
    folder, or every session in the database."""
    rescan_seconds: float = field(default=15.0, metadata=_option(above=0))
    """Period of the light rescan that backs up the file watcher (new roots, missed events)."""
    auto: AutoExtraction = field(default_factory=AutoExtraction)
    diagnostics: DiagnosticsSettings = field(default_factory=DiagnosticsSettings)

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
        values: dict[str | None, dict[str, Any]] = {}  # section (None: top level) -> field -> value
        refused: list[str] = []
        for key, value in options.items():
            where = OPTIONS.get(_snake(key))
            if where is None:
                continue
            if where.field.name == "severity":
                values.setdefault(where.section, {})["severity"], said = _severities(key, value)
                refused += said
                continue
            try:
                values.setdefault(where.section, {})[where.field.name] = where.check(value)
            except ValueError as exc:
                refused.append(f"{key}: {exc}, got {value!r}; keeping {_shown(where.field.default)}")
        top = values.pop(None, {})
        sections = {name: _SECTIONS[name](**fields) for name, fields in values.items() if name is not None}
        return cls(**top, **sections), refused


@dataclass(frozen=True)
class Option:
    """One option the client may send: the section holding it (None: ServerSettings itself), the
    field, and its type as declared there."""

    name: str
    section: str | None
    field: dataclasses.Field[Any]
    kind: Any

    @property
    def allowed(self) -> tuple[str, ...]:
        """A Literal's values (for severity: the severity names), else ()."""
        if self.field.name == "severity":
            return tuple(SEVERITIES)
        return tuple(get_args(self.kind)) if typing.get_origin(self.kind) is Literal else ()

    @property
    def bound(self) -> tuple[float, bool] | None:
        """(the bound, whether the bound itself is taken) of a number, else None."""
        meta = self.field.metadata
        if meta.get("minimum") is not None:
            return float(meta["minimum"]), True
        if meta.get("above") is not None:
            return float(meta["above"]), False
        return None

    def check(self, value: Any) -> Any:
        """The value as this option's type, or a ValueError saying what is expected."""
        if self.allowed:
            if value in self.allowed:
                return value
            raise ValueError(f"unknown value (allowed: {', '.join(self.allowed)})")
        if self.kind is bool:
            if isinstance(value, bool):
                return value
            raise ValueError("expected true or false")
        low, inclusive = self.bound or (-math.inf, True)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        in_range = number and (value >= low if inclusive else value > low)
        relation = f"{'>=' if inclusive else '>'} {low:g}"
        if self.kind is int:
            if in_range and float(value).is_integer():
                return int(value)
            raise ValueError(f"expected a whole number {relation}")
        if in_range:
            return float(value)
        raise ValueError(f"expected a number {relation}")


_SECTIONS: dict[str, type[Any]] = {"auto": AutoExtraction, "diagnostics": DiagnosticsSettings}


def _options() -> dict[str, Option]:
    out: dict[str, Option] = {}
    for section, owner in [(None, ServerSettings), *_SECTIONS.items()]:
        kinds = typing.get_type_hints(owner)
        for f in dataclasses.fields(owner):
            if f.name in _SECTIONS and owner is ServerSettings:
                continue
            name = f.metadata.get("option") or f.name
            out[name] = Option(name, section, f, kinds[f.name])
    return out


OPTIONS: dict[str, Option] = _options()
"""The daemon's own options, by the name the client sends (snake_case)."""


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else str(value)


def _severities(key: str, value: Any) -> tuple[dict[str, SeverityName], list[str]]:
    """Each kind's severity; an unknown kind or severity name is said and the kind keeps its default."""
    merged = _default_severity()
    if not isinstance(value, dict):
        return merged, [f"{key}: expected kinds ({', '.join(merged)}) mapped to {', '.join(SEVERITIES)},"
                        f" got {value!r}; keeping {merged}"]
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


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def section(options: Any) -> dict[str, Any]:
    """The checkpoint settings inside whatever the client sent."""
    if not isinstance(options, dict):
        return {}
    inner = options.get("checkpoint")
    return dict(inner) if isinstance(inner, dict) else dict(options)


def engine_overrides(options: dict[str, Any]) -> dict[str, Any]:
    """Keys of config.Settings, as the top layer for config.load. Empty (or blank) strings and lists
    (a VS Code setting left at its empty default) mean "not set here"."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        name = _snake(key)
        if name in config.NAMES and value not in ([], None) and not (isinstance(value, str) and not value.strip()):
            out[name] = value
    return out


def layered_settings(
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
