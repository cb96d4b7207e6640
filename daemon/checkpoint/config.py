"""Settings: defaults < config file < environment < command-line flags (< LSP options, later)."""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

# The extractors' names, in a leaf module: every extractor imports config (every command's start is measured).
from checkpoint.extract import names as extractor_names

# The defaults, here and nowhere else (the layers below take them from here).
CHUNK_TOKENS = 16_000  # estimated tokens per chunk; a turn larger than this is cut into parts
MAX_LINE_BYTES = 16 << 20  # a longer transcript line is skipped (and said), never held in memory
# the head kept of each tool result (chosen by measurement: docs/performance.md, scripts/bench_tool_output.py)
TOOL_OUTPUT_CHARS = 1000
# How long a run holds a chunk it sent before another run may take it. A live run renews its leases
# while it waits (every third of this); a killed run's chunks are due again after it.
LEASE_SECONDS = 300.0
# A Claude Code session whose transcript is this close to being deleted (cleanupPeriodDays in
# ~/.claude/settings.json, by file mtime) while turns are pending is flagged and extracted first.
AT_RISK_DAYS = 7.0
OPENAI_DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1"  # Ollama's OpenAI-compatible API
OPENAI_CONTEXT_TOKENS = 4096  # Ollama's default context: the safe guess when neither the user nor the server says
OPENAI_ANSWER_BYTES = 8 << 20  # the most bytes one answer of the `openai` extractor may have


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def default_db() -> Path:
    return _data_home() / "checkpoint" / "checkpoint.db"


def default_sources() -> list[Path]:
    """Claude Code's projects, Codex's sessions and its archive (a rollout moved there keeps its
    turn ids), and Claude Desktop's local agent mode, whose sessions are Claude Code transcripts
    under `<session folders>/.claude/projects/` (the Claude reader claims only those there); Gemini
    CLI's chats (`<project>/chats/` under its tmp folder, in $GEMINI_CLI_HOME or HOME); GitHub
    Copilot CLI's session state ($COPILOT_HOME, documented by `copilot help environment`, else
    ~/.copilot); opencode's data folder (its SQLite database)."""
    home = Path.home()
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    codex = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else home / ".codex"
    gemini = Path(os.environ["GEMINI_CLI_HOME"]) if os.environ.get("GEMINI_CLI_HOME") else home
    copilot = Path(os.environ["COPILOT_HOME"]) if os.environ.get("COPILOT_HOME") else home / ".copilot"
    return [claude / "projects", codex / "sessions", codex / "archived_sessions",
            claude_desktop_dir() / "local-agent-mode-sessions", gemini / ".gemini" / "tmp",
            copilot / "session-state", _data_home() / "opencode"]


def claude_desktop_dir() -> Path:
    """Claude Desktop's data folder on this platform."""
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"


def extractor_workdir(db: Path) -> Path:
    """The working directory of Checkpoint's own agent CLI runs (the claude-code extractor): its own,
    beside the database, so that a run's transcript, were one ever written, lands under a project slug
    of no user project, which the sources then skip."""
    return db.parent / "extractor-runs"


def config_file() -> Path:
    if os.environ.get("CHECKPOINT_CONFIG"):
        return Path(os.environ["CHECKPOINT_CONFIG"])
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "checkpoint" / "config.toml"


# The extractors a user may ask for by name (`extractor`), as registered (extract/registry.py); unset
# (None): chosen automatically (extract/choose.py). Any other name is refused, never replaced by another.
EXTRACTORS = extractor_names.NAMES


DECISIONS_DIR = "docs/decisions"


class SettingsError(ValueError):
    """A setting that cannot be used: which one, where it came from, and why."""


@dataclass(frozen=True)
class Settings:
    db: Path = field(default_factory=default_db)
    sources: list[Path] = field(default_factory=default_sources)
    extractor: str | None = None  # one of EXTRACTORS; None: chosen automatically (extract/choose.py)
    model: str = "claude-haiku-4-5"
    fallback_models: list[str] = field(default_factory=list)
    chunk_tokens: int = CHUNK_TOKENS
    max_line_bytes: int = MAX_LINE_BYTES
    # Each tool result is stored and sent as its first characters, with its size and kind (policy
    # `tool_output`, counted and shown); 0 keeps all of it. What people say and edits are never cut.
    tool_output_chars: int = TOOL_OUTPUT_CHARS
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
    request_timeout: float = 120.0  # seconds per request, the whole of it (an answer dripped slowly ends there)
    # the Codex extractor (`extractor = "codex"`): the user's `codex` CLI and its login
    codex_command: str = "codex"
    codex_model: str | None = None  # None: Codex's default model for the login
    codex_config: list[str] = field(default_factory=list)  # `codex -c key=value` overrides, e.g. a provider
    claude_command: str = "claude"  # the Claude Code CLI the claude-code extractor runs (a name on PATH or a path)
    # the `openai` extractor: any OpenAI-compatible chat-completions server (Ollama, llama.cpp, LM Studio,
    # vLLM; OpenRouter or OpenAI with OPENAI_API_KEY). Unset base URL: Ollama's (OPENAI_DEFAULT_BASE_URL),
    # and the automatic choice does not look for a server; set, it takes one that answers.
    openai_base_url: str | None = None
    openai_model: str | None = None  # None: the first model the server lists (llama.cpp serves one)
    # The server's real context window, which each request is measured against before it is sent (Ollama
    # drops what does not fit without an error). None: as the server says it (extract/openai_window.py),
    # else OPENAI_CONTEXT_TOKENS.
    openai_context_tokens: int | None = None
    # The most bytes one answer may have: a chunk's items are a few KB; an endless or huge answer is
    # refused (a failed attempt) at this, never held in memory whole.
    openai_answer_bytes: int = OPENAI_ANSWER_BYTES
    known_items: int = 30  # the session's latest items shown with each chunk, so restatements merge
    lease_seconds: float = LEASE_SECONDS
    # Secrets are replaced by typed placeholders before a turn is stored and before a chunk is sent
    # (checkpoint.redact); `redact_patterns` adds detectors: name -> regex (a group named `secret`,
    # if any, is what goes).
    redact: bool = True
    redact_patterns: dict[str, str] = field(default_factory=dict)
    at_risk_days: float = AT_RISK_DAYS
    # the agent front ends (checkpoint.agent): the session-start context a Claude Code hook injects,
    # and the capture a Stop / PostCompact / SessionEnd hook asks for; the reminder a PreToolUse hook
    # gives before an edit of what was decided about that file
    agent_context: bool = True
    agent_capture: bool = True
    agent_reminders: bool = True
    # an edit that an accepted decision's check finds breaking it: the agent is told (always), and with
    # this on, the user is asked before the edit runs (PreToolUse permissionDecision "ask"; never a deny)
    agent_check_ask: bool = False
    # where shared decision records live in a repository (checkpoint.team), relative to its top folder
    decisions_dir: str = DECISIONS_DIR

    def __post_init__(self) -> None:
        if self.extractor is not None:
            _known_extractor(self.extractor)
        for name in _RANGES:
            _in_range(name, getattr(self, name))
        for root in self.sources:
            _not_everything(root)
        _inside_repository(self.decisions_dir)
        if self.redact_patterns:
            from checkpoint.redact import custom_detectors

            for detector in custom_detectors(self.redact_patterns):
                _ = detector.pattern  # a name or a regex that is no good is said when the settings load


def _known_extractor(name: str) -> str:
    if name not in EXTRACTORS:
        raise SettingsError(f"extractor: unknown extractor {name!r} (known: {', '.join(EXTRACTORS)};"
                            " leave it unset to choose automatically)")
    return name


# The numbers a setting may take, and how that reads in a refusal. A budget of -1 or a chunk of 0
# tokens would not fail: it would quietly extract nothing, so it is refused where it is read.
_RANGES: dict[str, tuple[float, float | None, str]] = {  # name: (lowest, highest or None, in words)
    "chunk_tokens": (100, None, "100 or more (tokens)"),
    "max_line_bytes": (1024, None, "1024 or more (bytes)"),
    "tool_output_chars": (0, None, "0 or more (characters kept of each tool result; 0: all)"),
    "concurrency": (1, 64, "from 1 to 64"),
    "max_requests": (0, None, "0 or more (unset: no limit)"),
    "max_tokens": (0, None, "0 or more (unset: no limit)"),
    "max_cost": (0, None, "0 or more (US dollars; unset: no limit)"),
    "output_tokens": (1, None, "1 or more"),
    "max_attempts": (1, None, "1 or more"),
    "retry_delay": (0, None, "0 or more (seconds)"),
    "retry_max_delay": (0, None, "0 or more (seconds)"),
    "request_timeout": (math.ulp(0.0), None, "more than 0 (seconds)"),
    "known_items": (0, None, "0 or more"),
    "openai_context_tokens": (512, None, "512 or more (tokens: the server's context window)"),
    "openai_answer_bytes": (4096, None, "4096 or more (bytes)"),
    "lease_seconds": (math.ulp(0.0), None, "more than 0 (seconds)"),
    "at_risk_days": (0, None, "0 or more (days)"),
}


def lowest(name: str) -> float | None:
    """The lowest value a numeric setting takes (None: it has no bound), for what the editor shows."""
    return _RANGES[name][0] if name in _RANGES else None


def _in_range(name: str, value: Any) -> None:
    if value is None or name not in _RANGES:
        return
    low, high, words = _RANGES[name]
    if not (math.isfinite(value) and value >= low and (high is None or value <= high)):
        raise SettingsError(f"{name}: must be {words}, not {value!r}")


def _inside_repository(folder: str) -> None:
    """The decisions folder is a relative path inside the repository: never absolute, never `..`."""
    parts = Path(folder).parts
    if not folder.strip() or Path(folder).is_absolute() or ".." in parts:
        raise SettingsError(f"decisions_dir: must be a folder inside the repository, relative to its top"
                            f" (e.g. {DECISIONS_DIR!r}), not {folder!r}")


def _not_everything(root: Path) -> None:
    """A transcript root that is the whole disk or the home folder itself (a typo, a symlink to /)
    would have every file under it crawled and tailed: refused, by what it resolves to."""
    try:
        resolved, home = root.expanduser().resolve(), Path.home().resolve()
    except (OSError, RuntimeError):
        return  # a root that cannot be resolved is not read either: the sources say so
    if resolved == Path(resolved.anchor) or resolved == home:
        what = "the file system's root" if resolved == Path(resolved.anchor) else "the home folder itself"
        raise SettingsError(f"sources: {str(root)!r} is {what} ({resolved}); name the folder that holds"
                            " the transcripts, e.g. ~/.claude/projects")


NAMES = frozenset(f.name for f in fields(Settings))
_TRUE, _FALSE = frozenset({"1", "true", "yes", "on"}), frozenset({"0", "false", "no", "off"})


def _coerce(name: str, kind: str, value: Any) -> Any:
    """A value from TOML, the environment (a string) or an editor (JSON) as the field's type.
    Pydantic did this before; it is done by hand so that `checkpoint scan` starts without it."""
    optional = kind.endswith(" | None")
    base = kind.removesuffix(" | None")
    if value is None and optional:
        return None
    wrong = SettingsError(f"{name}: expected {base.replace('list[Path]', 'a list of paths')}, got {value!r}")
    if base == "Path" and isinstance(value, str | Path):
        return Path(value).expanduser()
    if base == "list[Path]" and isinstance(value, list | tuple) and all(isinstance(v, str | Path) for v in value):
        return [Path(v).expanduser() for v in value]
    if base == "list[str]" and isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    if base == "dict[str, str]" and isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return {str(k): v for k, v in value.items()}
    if base == "str" and isinstance(value, str):
        return value
    if base == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise wrong
    if base in ("int", "float") and not isinstance(value, bool):
        number = int if base == "int" else float
        if isinstance(value, int | float) and (base == "float" or float(value).is_integer()):
            return number(value)
        if isinstance(value, str):
            try:
                return number(value.strip())
            except ValueError:
                pass
    raise wrong


_KINDS: dict[str, str] = {f.name: str(f.type) for f in fields(Settings)}


def _with_likely(unknown: str) -> str:
    """An unknown setting's name, with the known one it most likely meant: "chunk_token (did you mean
    chunk_tokens?)"."""
    import difflib  # only on this error: every command's start is measured

    likely = difflib.get_close_matches(unknown, sorted(NAMES), n=1)
    return f"{unknown} (did you mean {likely[0]}?)" if likely else unknown


def _typed(values: dict[str, Any], where: str) -> dict[str, Any]:
    """One layer's raw values as the fields' types; an unknown name or a value of the wrong type is
    a SettingsError that says where it came from."""
    unknown = sorted(set(values) - NAMES)
    if unknown:
        named = ", ".join(_with_likely(name) for name in unknown)
        raise SettingsError(f"{where}: unknown setting{'s' if len(unknown) > 1 else ''}: {named}")
    try:
        typed = {name: _coerce(name, _KINDS[name], value) for name, value in values.items()}
        if typed.get("extractor") is not None:
            _known_extractor(typed["extractor"])  # said here, with where it came from
        for name, value in typed.items():
            _in_range(name, value)
        for root in typed.get("sources", []):
            _not_everything(root)
        return typed
    except SettingsError as exc:
        raise SettingsError(f"{where}: {exc}") from None


_ENV: dict[str, str] = {
    "CHECKPOINT_DB": "db",
    "CHECKPOINT_SOURCES": "sources",
    "CHECKPOINT_EXTRACTOR": "extractor",
    "CHECKPOINT_MODEL": "model",
    "CHECKPOINT_FALLBACK_MODELS": "fallback_models",
    "CHECKPOINT_CHUNK_TOKENS": "chunk_tokens",
    "CHECKPOINT_MAX_LINE_BYTES": "max_line_bytes",
    "CHECKPOINT_TOOL_OUTPUT_CHARS": "tool_output_chars",
    "CHECKPOINT_CONCURRENCY": "concurrency",
    "CHECKPOINT_MAX_REQUESTS": "max_requests",
    "CHECKPOINT_MAX_TOKENS": "max_tokens",
    "CHECKPOINT_MAX_COST": "max_cost",
    "CHECKPOINT_LEASE_SECONDS": "lease_seconds",
    "CHECKPOINT_REDACT": "redact",
    "CHECKPOINT_AT_RISK_DAYS": "at_risk_days",
    "CHECKPOINT_CODEX_COMMAND": "codex_command",
    "CHECKPOINT_CODEX_MODEL": "codex_model",
    "CHECKPOINT_CLAUDE_COMMAND": "claude_command",
    "CHECKPOINT_OPENAI_BASE_URL": "openai_base_url",
    "CHECKPOINT_OPENAI_MODEL": "openai_model",
    "CHECKPOINT_OPENAI_CONTEXT_TOKENS": "openai_context_tokens",
    "CHECKPOINT_OPENAI_ANSWER_BYTES": "openai_answer_bytes",
    "CHECKPOINT_AGENT_CONTEXT": "agent_context",
    "CHECKPOINT_AGENT_CAPTURE": "agent_capture",
    "CHECKPOINT_AGENT_REMINDERS": "agent_reminders",
    "CHECKPOINT_AGENT_CHECK_ASK": "agent_check_ask",
    "CHECKPOINT_DECISIONS_DIR": "decisions_dir",
}


def _from_env(environ: dict[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for var, key in _ENV.items():
        raw = environ.get(var)
        if not raw:
            continue
        if key == "sources":
            value: Any = [p for p in raw.split(os.pathsep) if p]
        elif key == "fallback_models":
            value = [m.strip() for m in raw.split(",") if m.strip()]
        else:
            value = raw
        values.update(_typed({key: value}, f"environment variable {var}"))
    return values


def load(
    overrides: dict[str, Any] | None = None, environ: dict[str, str] | None = None, *, overrides_from: str = "options"
) -> Settings:
    """Merge every layer; `overrides` (flags) win. None values in overrides are ignored.
    `overrides_from` names them in an error (the command line, the editor's settings)."""
    values: dict[str, Any] = {}
    path = config_file()
    if os.environ.get("CHECKPOINT_CONFIG") and not path.is_file():  # asked for by name: never silently skipped
        what = "is not a file" if path.exists() else "does not exist"
        raise SettingsError(f"CHECKPOINT_CONFIG names {path}, which {what} (create it, or unset CHECKPOINT_CONFIG)")
    if path.is_file():
        import tomllib  # only when there is a file: every command's start is measured

        try:
            with path.open("rb") as fh:
                values.update(_typed(tomllib.load(fh), str(path)))
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    values.update(_from_env(dict(os.environ) if environ is None else environ))
    values.update(_typed({k: v for k, v in (overrides or {}).items() if v is not None}, overrides_from))
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
