"""Extraction through the user's own Codex CLI: `codex exec`, headless, with their ChatGPT login.

One `codex exec` process per chunk (Codex CLI 0.169):

    codex exec --json --ephemeral --skip-git-repo-check --ignore-user-config --sandbox read-only
        --output-schema <answer-schema.json> --cd <Checkpoint's codex-work folder>
        -c model_instructions_file=<instructions.md> -c features.<tool>=false ... [-m MODEL]
        [-c <codex_config overrides>] -        (the request on stdin)

- `--ephemeral`: the run writes no rollout under $CODEX_HOME/sessions, so Checkpoint never reads its
  own extractions back as sessions.
- `model_instructions_file` replaces Codex's own base instructions (the "You are a coding agent"
  prompt) with prompt.SYSTEM_PROMPT: it reaches the model as the first developer message. The request
  (prompt.render_request: known items, then the transcript) is the user message, on stdin.
- `--ignore-user-config`: the user's config.toml (MCP servers, hooks, notify scripts, profiles) has no
  part in an extraction; their login in $CODEX_HOME still counts. A provider other than the login's
  (a proxy, a key-based provider, the tests' fake) is given as `-c` overrides in `codex_config`.
- No tools: the shell, sub-agents, web search, images, apps and plugins are switched off with
  `-c features.X=false` (an unknown feature name is ignored there, where `--disable X` would fail),
  and the sandbox is read-only in any case.

The answer is the last `agent_message` of the `--json` event stream, read by schema.read_answer; the
tokens are `turn.completed.usage`. Failures: `turn.failed`'s message, classified (auth, quota, size,
model, transient); transient ones and malformed answers retry with backoff up to max_attempts
processes. Codex retries within a process too: for a provider given in `codex_config` its
`request_max_retries`/`stream_max_retries` bound that; the built-in provider of a ChatGPT login cannot
be overridden ("Built-in providers cannot be overridden"), so Codex's defaults apply there, and each of
its visible reconnects ("Reconnecting... n/5") is counted as a request.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkpoint.answer import Extraction
from checkpoint.config import Settings
from checkpoint.extract import ExtractionError
from checkpoint.extract.answer_schema import STRICT_SCHEMA, MalformedAnswer, read_answer
from checkpoint.extract.missing_commands import CODEX_INSTALL_HINT, codex_not_found
from checkpoint.extract.prompt import SYSTEM_PROMPT, render_request
from checkpoint.extract.retry import Failed, RetryPolicy, Sleep
from checkpoint.model import ChunkInput, Usage
from checkpoint.redact.outside import hide_secrets

# Codex features that give the model tools or pull in context an extraction has no use for.
FEATURES_OFF = (
    "shell_tool", "unified_exec", "view_image", "multi_agent", "multi_agent_v2", "goals", "hooks", "plugins",
    "apps", "skill_search", "sleep_tool", "tool_suggest", "image_generation", "shell_snapshot", "browser_use",
    "computer_use", "memories", "in_app_browser",
)
SETTINGS_OFF = (
    'web_search="disabled"',
    'history.persistence="none"',  # no copy of the request in $CODEX_HOME/history.jsonl
    "skills.bundled.enabled=false",
    "include_apps_instructions=false",
    "include_collaboration_mode_instructions=false",
    "check_for_update_on_startup=false",
    "analytics.enabled=false",
    "project_doc_max_bytes=0",  # no AGENTS.md (the global one in $CODEX_HOME included) in the request
    "include_environment_context=false",
)


@dataclass
class _Events:
    """What one `codex exec --json` run said."""

    answer: str | None = None  # the last agent_message
    usage: Usage = field(default_factory=Usage)
    failure: str | None = None  # turn.failed's message (or the last error event's)
    started: bool = False  # a turn began: the failure, if any, is the model's or the network's
    reconnects: int = 0


_RECONNECT = re.compile(r"^Reconnecting\.\.\. \d+/\d+")


def read_events(stdout: str) -> _Events:
    events = _Events()
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # not an event (Codex prints only JSONL here; a stray line is no answer)
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "turn.started":
            events.started = True
        elif kind == "item.completed":
            item = event.get("item") or {}
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                events.answer = item["text"]
        elif kind == "turn.completed":
            events.usage.add(_usage(event.get("usage") or {}))
        elif kind == "turn.failed":
            events.failure = str((event.get("error") or {}).get("message") or "turn failed")
        elif kind == "error":
            message = str(event.get("message") or "")
            if _RECONNECT.match(message):
                events.reconnects += 1
            elif events.failure is None:
                events.failure = message
    return events


def _usage(raw: dict[str, Any]) -> Usage:
    """Codex's usage (OpenAI's: input_tokens includes the cached ones) as ours (input is the uncached
    rest). Cost 0: the user's ChatGPT plan pays, not a per-token price Checkpoint knows."""
    def count(key: str) -> int:
        value = raw.get(key)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    cached, written = count("cached_input_tokens"), count("cache_write_input_tokens")
    return Usage(input_tokens=max(0, count("input_tokens") - cached - written), output_tokens=count("output_tokens"),
                 cache_creation_input_tokens=written, cache_read_input_tokens=cached)


_TOO_LARGE = re.compile(r"context[_ ](length|window)|maximum context|too many (input )?tokens|prompt is too long",
                        re.IGNORECASE)
_AUTH = re.compile(r"\b401\b|unauthorized|not logged in|invalid_api_key|incorrect api key|\blog ?in\b|"
                   r"authenticat|token (has )?expired|refresh token", re.IGNORECASE)
_QUOTA = re.compile(r"usage limit|insufficient_quota|exceeded your current quota|\b402\b", re.IGNORECASE)
_MODEL = re.compile(r"model_not_found|model .{0,80}(does not exist|not found|not supported)", re.IGNORECASE)
_REFUSED = re.compile(r"\b40[03]\b|invalid_request_error|bad request", re.IGNORECASE)


def classify(message: str) -> Failed:
    """What a failed turn's message means for the chunk (and for the run)."""
    short = hide_secrets(" ".join(message.split()))[:300]  # before cutting: half a key matches nothing
    if _TOO_LARGE.search(message):
        return Failed("too_large", f"prompt too long ({short})")
    if _AUTH.search(message):
        return Failed("fatal", f"authentication failed ({short}): run `codex login`, or check the key of the "
                                f"provider in codex_config")
    if _QUOTA.search(message):
        return Failed("fatal", f"usage limit reached ({short}); the chunks stay due for a later run")
    if _MODEL.search(message):
        return Failed("fatal", f"model refused ({short}): check codex_model")
    if _REFUSED.search(message):  # the same request shape goes with every chunk: none would fare better
        return Failed("fatal", f"request refused ({short})")
    return Failed("transient", short or "turn failed")


class CodexExtractor:
    name = "codex"

    def __init__(self, settings: Settings, sleep: Sleep = time.sleep) -> None:
        self.settings = settings
        self.command = settings.codex_command
        self.model = settings.codex_model
        self.overrides = list(settings.codex_config)
        self.workdir = settings.db.parent / "codex-work"
        model = self.model or "its default model"
        self.description = f"the Codex CLI ({model}, through `{self.command} exec`)"
        self.sleep = sleep
        self.retry = RetryPolicy.from_settings(settings)
        self._lock = threading.Lock()
        self._prepared = False
        self._logged_in = False

    # -- the command ------------------------------------------------------------------------------

    @property
    def schema_path(self) -> Path:
        return self.workdir / "answer-schema.json"

    @property
    def instructions_path(self) -> Path:
        return self.workdir / "instructions.md"

    def argv(self) -> list[str]:
        args = [self.command, "exec", "--json", "--ephemeral", "--skip-git-repo-check", "--ignore-user-config",
                "--sandbox", "read-only", "--color", "never", "--output-schema", str(self.schema_path),
                "--cd", str(self.workdir), "-c", f"model_instructions_file={json.dumps(str(self.instructions_path))}"]
        for setting in (*SETTINGS_OFF, *(f"features.{f}=false" for f in FEATURES_OFF)):
            args += ["-c", setting]
        if self.model:
            args += ["--model", self.model]
        for override in self.overrides:  # last: what the user gives wins
            args += ["-c", override]
        return [*args, "-"]  # the request comes on stdin: a chunk may be longer than one argument may be

    def _prepare(self) -> None:
        """Checkpoint's own working folder for Codex, with the schema and instructions it reads."""
        with self._lock:
            if self._prepared:
                return
            self.workdir.mkdir(parents=True, exist_ok=True)
            for path, text in ((self.schema_path, json.dumps(STRICT_SCHEMA, indent=1)),
                               (self.instructions_path, SYSTEM_PROMPT)):
                tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, path)  # whole, even while another Checkpoint process reads it
            self._prepared = True

    def _provider_given(self) -> bool:
        return any(o.split("=", 1)[0].strip() == "model_provider" for o in self.overrides)

    def _check_login(self) -> None:
        """A ChatGPT login is checked once, locally (`codex login status`): without it Codex would send
        requests without credentials and retry each one. A provider given in codex_config brings its
        own key, which `login status` does not see."""
        if self._logged_in or self._provider_given():
            return
        try:
            done = subprocess.run([self.command, "login", "status"], capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=30)
        except FileNotFoundError:
            raise ExtractionError(f"codex: `{self.command}` not found: {CODEX_INSTALL_HINT}", retryable=False) from None
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ExtractionError(f"codex: `{self.command} login status` failed ({exc})", retryable=False) from None
        if done.returncode != 0:
            said = _last_line(done.stdout + "\n" + done.stderr) or f"exit {done.returncode}"
            raise ExtractionError(f"codex: not logged in (`{self.command} login status`: {said}): run "
                                  f"`{self.command} login`", retryable=False)
        self._logged_in = True

    # -- extraction -------------------------------------------------------------------------------

    def extract(self, chunk: ChunkInput) -> Extraction:
        usage = Usage()
        try:
            self._prepare()
        except OSError as exc:
            raise ExtractionError(f"codex: cannot prepare its working folder {self.workdir}: {exc}",
                                  retryable=False) from None
        self._check_login()
        outcome = self.retry.run(lambda: self._once(chunk, usage), self.sleep)
        if not isinstance(outcome, Failed):
            return outcome
        if outcome.kind == "fatal":
            raise ExtractionError(f"codex: {outcome.cause}", retryable=False, usage=usage)
        if outcome.kind == "too_large":
            raise ExtractionError(f"codex: {outcome.cause}; re-splitting", too_large=True, usage=usage)
        raise ExtractionError(f"codex: {outcome.cause}", usage=usage)  # its cause says how many attempts

    def _once(self, chunk: ChunkInput, usage: Usage) -> Extraction | Failed:
        head, transcript = render_request(chunk)
        try:
            proc = subprocess.Popen(self.argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                                    cwd=self.workdir, start_new_session=True)
        except FileNotFoundError:
            return Failed("fatal", f"`{self.command}` not found: {CODEX_INSTALL_HINT}")
        except OSError as exc:
            return Failed("fatal", f"`{self.command}` could not start ({exc})")
        timeout = self.settings.request_timeout
        try:
            stdout, stderr = proc.communicate(head + "\n" + transcript, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            usage.requests += 1
            return Failed("transient", f"timed out after {timeout:g} s")
        events = read_events(stdout)
        spent = events.usage
        spent.requests = 1 + events.reconnects
        usage.add(spent)
        if proc.returncode == 0 and events.failure is None and events.answer is not None:
            try:
                items = read_answer(events.answer)
            except MalformedAnswer as exc:
                return Failed("malformed", str(exc))
            return Extraction(chunk_id=chunk.chunk_id, items=items, extractor=self.name, model=self.model,
                              usage=usage)
        if events.failure is not None and events.started:
            return classify(events.failure)
        if events.started and proc.returncode != 0:  # ended mid-turn (a signal, a crash): worth another try
            said = hide_secrets(_last_line(stderr) or "no message")[:200]
            return Failed("transient", f"`{self.command} exec` ended mid-turn (exit {proc.returncode}: {said})")
        # Codex stopped before a turn began: its config, its home or its arguments. No chunk fares better.
        said = events.failure or _last_line(stderr) or f"exit {proc.returncode}"
        if proc.returncode == 0:
            return Failed("malformed", "gave no answer")
        return Failed("fatal", f"`{self.command} exec` failed before the request ({hide_secrets(said)[:300]})")


def _last_line(text: str) -> str:
    """What Codex said went wrong: its first "Error ..." line, else its last line that says something
    (not its warning about PATH aliases)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("WARNING: proceeding")
             and not ln.startswith("Reading additional input")]
    errors = [ln for ln in lines if ln.startswith("Error")]
    return (errors or lines or [""])[0 if errors else -1]


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """The npm launcher (node) runs the native binary as its child: end both."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def codex_unavailable(settings: Settings) -> str | None:
    """Why the Codex extractor cannot run, said as a clause ("`codex` is not on PATH ..."), or None.
    Checked before a run when the extractor is chosen; the extractor checks again (a daemon runs long)."""
    command = settings.codex_command
    if shutil.which(command) is None:
        return codex_not_found(command)
    extractor = CodexExtractor(settings)
    try:
        extractor._check_login()
    except ExtractionError as exc:
        return exc.cause.removeprefix("codex: ")
    return None
