"""What the editor shows of the settings: VS Code's `contributes.configuration` and the extension's
settingsSchema.ts, derived from the Python settings so that each setting is written once.

The design: a setting's type, default, allowed values and bound are declared once, in the field
that holds it (engine settings: `config.Settings` and its ranges, the extractors with their
descriptions in `extract.registry`; the daemon's own: the sections of `server.settings.ServerSettings`). This module
adds only what the editor alone needs: each editor setting's id, the daemon option it feeds, and
the sentence VS Code shows. `python -m scripts.vscode_settings` writes package.json's properties and the
TypeScript module from here; tests/unit/server/test_editor_settings.py fails when they differ. The
extension checks no value: it sends what the user wrote, and the daemon, the one validator, refuses
a bad one by name (server/settings.py, config.py).

An engine setting's editor default is "not set here" ("", [], null, or "auto" for the extractor):
the daemon's own layers (config file, environment, config's default) then apply. A daemon setting's
editor default is the daemon's default. A setting at its editor default is not sent.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkpoint import config
from checkpoint.extract import registry
from checkpoint.server.settings import OPTIONS, SEVERITIES, ServerSettings

AUTO_EXTRACTOR = registry.AUTOMATIC  # the editor's name for "extractor unset: chosen automatically"


@dataclass(frozen=True)
class EditorSetting:
    """One `checkpoint.<id>` setting of the editor."""

    id: str
    option: str | None
    """The daemon's option it is sent as ("severity.decision": a key inside `severity`); None: the
    extension's own (never sent)."""
    description: str
    enum_descriptions: tuple[str, ...] = ()
    machine: bool = False  # VS Code's "scope": "machine": a path or program of this computer
    own_schema: dict[str, Any] | None = None  # the extension's own settings: their schema, here
    # The editor's default when it is not the daemon's (sent even at its default, then): VS Code
    # shows CodeLens, which any LSP editor does not show unasked.
    editor_default: str | None = None


_BUDGET = "What is left stays pending and is shown, never dropped. Null: no cap."

SETTINGS: tuple[EditorSetting, ...] = (
    EditorSetting(
        "command", None,
        "Leave unset to use the daemon the extension brings (installed on first start into a private environment"
        " with the Python the Python extension selected, or python3 on PATH), or a checkpoint on PATH of the same"
        " version. Set it to run another daemon: its command line (argv), started over stdio, e.g."
        " [\"/path/to/.venv/bin/checkpoint\", \"serve\"].",
        machine=True,
        own_schema={"type": "array", "items": {"type": "string"}, "default": ["checkpoint", "serve"], "minItems": 1},
    ),
    EditorSetting("sources", "sources", "Transcript folders to watch. Empty: the daemon's default"
                  " (CHECKPOINT_SOURCES, else ~/.claude/projects and ~/.codex/sessions).", machine=True),
    EditorSetting("database", "db", "Database file. Empty: the daemon's default (CHECKPOINT_DB, else"
                  " ~/.local/share/checkpoint/checkpoint.db).", machine=True),
    EditorSetting("scope", "scope", "Which sessions the panel, the status bar counts and the diagnostics cover.",
                  ("Sessions whose folder is in this workspace.", "Every session in the transcript folders.")),
    EditorSetting("extractor", "extractor", "Which extractor turns transcript chunks into items.",
                  (registry.AUTOMATIC_DESCRIPTION, *(entry.description for entry in registry.ENTRIES))),
    EditorSetting("model", "model", "Claude model for extraction. Empty: the daemon's default."),
    EditorSetting("fallbackModels", "fallback_models", "Models to fall back to, in order. A chunk goes to a fallback"
                  " only if it fits that model's window; otherwise the fallback is refused and the cause shown."),
    EditorSetting("openai.baseUrl", "openai_base_url", "With the openai extractor: the OpenAI-compatible server"
                  " (Ollama, llama.cpp, LM Studio, vLLM). Empty: the daemon's default (CHECKPOINT_OPENAI_BASE_URL,"
                  " else Ollama's http://127.0.0.1:11434/v1). Chosen automatically only when set and answering.",
                  machine=True),
    EditorSetting("openai.model", "openai_model", "With the openai extractor: the model to ask. Empty: the first"
                  " model the server lists."),
    EditorSetting("openai.contextTokens", "openai_context_tokens", "With the openai extractor: the server's real"
                  " context window in tokens (Ollama's default is small and drops what does not fit without an"
                  " error). Chunks are cut to fit it, never trimmed. Null: as the server says it (vLLM, llama.cpp,"
                  " Ollama, LM Studio), else 4,096."),
    EditorSetting("budget.maxRequests", "max_requests", f"Most model requests in one checkpoint run. {_BUDGET}"),
    EditorSetting("budget.maxTokens", "max_tokens", f"Most input tokens sent in one checkpoint run. {_BUDGET}"),
    EditorSetting("budget.maxCost", "max_cost", f"Most US dollars spent in one checkpoint run. {_BUDGET}"),
    EditorSetting("extraction", "extraction", "Auto-checkpoint policy: when the daemon extracts on its own.", (
        "Extract in the background once a session has been quiet for checkpoint.idleSeconds or holds more than"
        " checkpoint.maxPendingTurns pending turns.",
        "Extract only when you run Checkpoint Now.",
    )),
    EditorSetting("idleSeconds", "idle_seconds", "With extraction \"auto\": seconds a session's transcript must"
                  " stay untouched before its new turns are extracted."),
    EditorSetting("maxPendingTurns", "max_pending_turns", "With extraction \"auto\": extract a busy session anyway"
                  " once it holds more than this many pending turns."),
    EditorSetting("agentReminders", "agent_reminders", "Before a coding agent started from this editor's terminals"
                  " edits a file, remind it of the decisions and constraints recorded about that file (Claude Code's"
                  " PreToolUse hook of the Checkpoint plugin; sets CHECKPOINT_AGENT_REMINDERS for the terminals)."
                  " Off: no reminder; the session-start context stays."),
    EditorSetting("decisionsDir", "decisions_dir", "Where decision records shared with the team (Share with the"
                  " Team) are written and read in each repository, relative to its top folder. Empty: the"
                  " daemon's default (CHECKPOINT_DECISIONS_DIR, else docs/decisions)."),
    EditorSetting("diagnostics.enabled", "diagnostics", "Show captured items inline, as diagnostics on the files"
                  " they concern (source \"checkpoint\", listed in the Problems panel)."),
    EditorSetting("diagnostics.marks", "marks", "How an item that asks nothing of you is shown on the code it"
                  " concerns. Items held for review and code changed under a decision are diagnostics either way.",
                  ("As a diagnostic (a squiggle, listed in the Problems panel), like the items that need action.",
                   "As a CodeLens, one short line above the lines it concerns (hover them for the card)."),
                  editor_default="codelens"),
    EditorSetting("diagnostics.severity.decision", "severity.decision",
                  "Severity of decision diagnostics (\"off\" hides them)."),
    EditorSetting("diagnostics.severity.constraint", "severity.constraint",
                  "Severity of constraint diagnostics (\"off\" hides them)."),
    EditorSetting("diagnostics.severity.question", "severity.question",
                  "Severity of open-question diagnostics (\"off\" hides them)."),
)

_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", Path: "string"}


def _engine_schema(name: str) -> dict[str, Any]:
    """An engine setting (config.Settings) as the editor declares it: its type, "not set" as its
    default, the extractor names, a number's lowest value."""
    kind = typing.get_type_hints(config.Settings)[name]
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    optional = type(None) in typing.get_args(kind)
    if name == "extractor":
        return {"type": "string", "enum": [AUTO_EXTRACTOR, *config.EXTRACTORS], "default": AUTO_EXTRACTOR}
    if typing.get_origin(kind) is list:
        return {"type": "array", "items": {"type": _JSON_TYPES[args[0]]}, "default": []}
    if kind in (str, Path):
        return {"type": "string", "default": ""}
    # Anything else not set here is null (a number, a switch): the daemon's own layers then apply.
    base = args[0] if optional else kind
    schema: dict[str, Any] = {"type": [_JSON_TYPES[base], "null"]}
    low = config.lowest(name)
    if low is not None:
        schema["minimum"] = low if base is float else int(low)
    return {**schema, "default": None}


def _daemon_schema(option: str) -> dict[str, Any]:
    """One of the daemon's own options (server/settings.py) as the editor declares it: its type,
    the daemon's default, its allowed values, a number's bound."""
    if option.startswith("severity."):
        kind = option.removeprefix("severity.")
        return {"type": "string", "enum": list(SEVERITIES), "default": ServerSettings().diagnostics.severity[kind]}
    spec = OPTIONS[option]
    default = spec.field.default
    if spec.allowed:
        return {"type": "string", "enum": list(spec.allowed), "default": default}
    schema: dict[str, Any] = {"type": _JSON_TYPES[spec.kind]}
    if spec.bound is not None:
        low, inclusive = spec.bound
        schema["minimum" if inclusive else "exclusiveMinimum"] = int(low) if low.is_integer() else low
    return {**schema, "default": int(default) if isinstance(default, float) and default.is_integer() else default}


def schema(setting: EditorSetting) -> dict[str, Any]:
    """The setting's JSON schema, as package.json's `contributes.configuration` holds it."""
    if setting.option is None:
        assert setting.own_schema is not None, setting.id
        typed = dict(setting.own_schema)
    elif setting.option in config.NAMES:
        typed = _engine_schema(setting.option)
    else:
        typed = _daemon_schema(setting.option)
    if setting.editor_default is not None:
        typed["default"] = setting.editor_default
    if setting.enum_descriptions:
        assert len(setting.enum_descriptions) == len(typed["enum"]), setting.id
        typed = {**{k: v for k, v in typed.items() if k != "default"},
                 "enumDescriptions": list(setting.enum_descriptions), "default": typed["default"]}
    if setting.machine:
        typed["scope"] = "machine"
    return {**typed, "description": setting.description}


def properties() -> dict[str, Any]:
    """`contributes.configuration.properties` of package.json."""
    return {f"checkpoint.{s.id}": schema(s) for s in SETTINGS}


def is_path(setting: EditorSetting) -> bool:
    """Whether the daemon reads the setting as a path (or paths): the extension expands `~` and
    `${workspaceFolder}` in it first, as only the editor knows the folder."""
    if setting.option not in config.NAMES:
        return False
    kind = typing.get_type_hints(config.Settings)[setting.option]
    return kind is Path or typing.get_args(kind) == (Path,)
