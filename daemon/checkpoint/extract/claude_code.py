"""Extraction through the user's own Claude Code CLI (`claude -p`), so that a Claude subscription
(no API key) extracts with the same model, prompt and schema as the SDK extractor.

One process per chunk and per attempt:

    claude -p --output-format json --json-schema SCHEMA --no-session-persistence --tools "" \\
        --safe-mode --system-prompt SYSTEM_PROMPT --model MODEL          (the request on stdin)

- `--json-schema`: Claude Code offers the model a `StructuredOutput` tool with the answer's schema; the
  answer comes back as `structured_output` in the one JSON result of `--output-format json`, read by
  schema.read_answer like every other model answer.
- `--no-session-persistence`: the run writes no transcript, so it never becomes a session Checkpoint
  reads. As defence in depth the process runs in Checkpoint's own working directory
  (config.extractor_workdir), whose project slug the sources skip.
- `--tools ""`: the model reads a chunk, it needs no tool (and must not run one a transcript asks for).
- `--safe-mode`: the user's hooks, MCP servers, plugins and CLAUDE.md stay out of it (a SessionStart
  hook would run once per chunk), while the login works as usual. `--bare` would do the same but
  accepts only an API key, not the subscription login this extractor exists for.
- `--system-prompt`: prompt.SYSTEM_PROMPT replaces Claude Code's agent prompt.

Retries are ours (retry.py), as anthropic.py's: `CLAUDE_CODE_MAX_RETRIES=0` turns off Claude Code's own
(10 by default, with backoff, on 5xx/529/429 and dropped connections), so every attempt is counted,
backed off (settings.retry_delay .. retry_max_delay) and its cause kept. `API_TIMEOUT_MS` gives it our
request timeout; the process is killed after that plus a margin for its start.

Fallback models: the same order as the SDK extractor (settings.model, then settings.fallback_models),
driven here (fallback.py) rather than by `--fallback-model`, so that each model's window is checked
before it is sent a chunk and each attempt is counted. Windows and prices are the published ones
(models.py): the CLI reports neither before a request.

Cost: `total_cost_usd` as Claude Code reports it (list price). A subscription user is not billed by
the token: the figure is what the run would cost on the API, and what budgets count.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.chunker import estimate_tokens
from checkpoint.config import Settings, extractor_workdir
from checkpoint.extract import ExtractionError
from checkpoint.extract.answer_schema import SCHEMA, MalformedAnswer, read_answer
from checkpoint.extract.claude_cli import FIX_LOGIN, CliStatus, child_env, last_line, version_status
from checkpoint.extract.fallback import model_order, models_said, through_models
from checkpoint.extract.model_windows import Calibration, Fit, chunk_budget, output_reserve, price_of, published_window
from checkpoint.extract.prompt import SYSTEM_PROMPT, render_request
from checkpoint.extract.retry import Failed, RetryPolicy, Sleep
from checkpoint.model import ChunkInput, Usage
from checkpoint.redact.outside import hide_secrets

NAME = "claude-code"
# What Claude Code adds to a request besides our prompt and schema: its one-line identity, the
# environment <system-reminder>s and the StructuredOutput tool's wrapper (about 1,200 tokens seen).
CLI_OVERHEAD_TOKENS = 2_000
START_SECONDS = 30.0  # on top of the request timeout: the process's own start and shutdown
_TOO_LONG = re.compile(r"prompt is too long|too many (input )?tokens|context (window|length)", re.IGNORECASE)
_LOGIN = re.compile(r"not logged in|/login|invalid api key|oauth|authenticat|credential", re.IGNORECASE)


# -- the extractor -----------------------------------------------------------------------------------


class ClaudeCodeExtractor:
    name = NAME

    def __init__(self, settings: Settings, sleep: Sleep = time.sleep) -> None:
        self.settings = settings
        self.models = model_order(settings)
        self.description = f"Claude through the Claude Code CLI ({models_said(self.models)}; the CLI's own login)"
        self.sleep = sleep
        self.retry = RetryPolicy.from_settings(settings)
        self.workdir = extractor_workdir(settings.db)
        self._lock = threading.Lock()
        self._checked: CliStatus | None = None
        self._calibration = Calibration()

    # -- windows, sizes and prices ------------------------------------------------------------------

    def overhead_estimate(self, chunk: ChunkInput | None = None) -> int:
        known = render_request(chunk)[0] if chunk is not None else ""
        return (estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(json.dumps(SCHEMA)) + estimate_tokens(known)
                + CLI_OVERHEAD_TOKENS)

    def measure(self, model: str, chunk: ChunkInput) -> Fit:
        """The local estimate against the published window only: the CLI offers no count_tokens."""
        window = published_window(model)
        overhead = self.overhead_estimate(chunk)
        return Fit(model, overhead + chunk.token_estimate, window, output_reserve(window, self.settings.output_tokens),
                   False, overhead)

    def chunk_budget(self) -> int:
        window = published_window(self.models[0])
        return chunk_budget(window, output_reserve(window, self.settings.output_tokens), self.overhead_estimate())

    def estimate(self, chunk_tokens: int, chunks: int = 1) -> Usage:
        """As the SDK extractor's: calibrated on this run's answers, else from the price table."""
        sent = chunk_tokens + chunks * self.overhead_estimate()
        return self._calibration.estimate(price_of(self.models[0]), sent, chunks, self.settings.output_tokens)

    # -- extraction ----------------------------------------------------------------------------------

    def _ready(self, usage: Usage) -> None:
        """Once per run (per extractor): the CLI is there and recent enough; else a fatal cause."""
        with self._lock:
            status = self._checked
        if status is None:
            status = version_status(self.settings.claude_command)
            with self._lock:
                self._checked = status
        if not status.usable:
            raise ExtractionError(status.cause, retryable=False, usage=usage)

    def extract(self, chunk: ChunkInput) -> Extraction:
        usage = Usage()
        self._ready(usage)
        return through_models(self.models, chunk, usage, lambda model: self.measure(model, chunk),
                              lambda model, _fit: self._ask(model, chunk, usage))

    def _ask(self, model: str, chunk: ChunkInput, usage: Usage) -> Extraction | Failed:
        """One model's attempts (the retry policy's): one run of the CLI each."""
        def once() -> Extraction | Failed:
            outcome = self._run(model, chunk, usage)
            return outcome.model_copy(update={"usage": usage}) if isinstance(outcome, Extraction) else outcome

        return self.retry.run(once, self.sleep)

    def command(self, model: str) -> list[str]:
        return [shutil.which(self.settings.claude_command) or self.settings.claude_command, "-p",
                "--output-format", "json", "--json-schema", json.dumps(SCHEMA), "--no-session-persistence",
                "--tools", "", "--safe-mode", "--system-prompt", SYSTEM_PROMPT, "--model", model]

    def _run(self, model: str, chunk: ChunkInput, usage: Usage) -> Extraction | Failed:
        """One process: the request on stdin, one JSON result on stdout."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        usage.requests += 1  # a process that fails before its request is counted too: every attempt is
        try:
            proc = subprocess.Popen(self.command(model), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, cwd=self.workdir, env=child_env(self.settings))
        except OSError as exc:
            return Failed("fatal", f"`{self.settings.claude_command}` could not be started ({exc.strerror}): "
                                    "install Claude Code or set claude_command")
        try:
            out, err = proc.communicate("".join(render_request(chunk)),
                                        timeout=self.settings.request_timeout + START_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return Failed("transient", "timed out (the claude process was killed)")
        try:
            result = json.loads(out)
        except ValueError:
            result = None
        if not isinstance(result, dict):
            how = f"was killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exited {proc.returncode}"
            detail = last_line(err or out)
            return Failed("transient", f"claude {how} without a result" + (f" ({detail})" if detail else ""))
        spent = _usage_of(model, result)
        usage.add(replace(spent, requests=0))
        outcome = read_result(result)
        if isinstance(outcome, Failed):
            return outcome
        self._calibration.record(chunk.token_estimate + self.overhead_estimate(chunk), spent)
        return Extraction(chunk_id=chunk.chunk_id, items=outcome, extractor=self.name, model=model)


def _usage_of(model: str, result: Mapping[str, Any]) -> Usage:
    raw = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    assert isinstance(raw, dict)

    def count(name: str) -> int:
        value = raw.get(name)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    usage = Usage(input_tokens=count("input_tokens"), output_tokens=count("output_tokens"),
                  cache_creation_input_tokens=count("cache_creation_input_tokens"),
                  cache_read_input_tokens=count("cache_read_input_tokens"), requests=1)
    cost = result.get("total_cost_usd")
    usage.cost_usd = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) \
        else price_of(model).cost(usage)
    return usage


def read_result(result: Mapping[str, Any]) -> list[ItemDraft] | Failed:
    """The drafts of a successful result, or why there are none (the kind decides what happens next)."""
    stop = result.get("stop_reason")
    if result.get("is_error") is not True and result.get("subtype") == "success":
        if stop in ("max_tokens", "model_context_window_exceeded"):
            return Failed("too_large", f"answer truncated (stop_reason {stop})")
        answer = result.get("structured_output")
        if not isinstance(answer, dict):
            text = result.get("result")
            answer = text if isinstance(text, str) and text.strip() else None
        if answer is None:
            return Failed("malformed", "the result held no structured_output")
        try:
            return read_answer(answer)
        except MalformedAnswer as exc:
            return Failed("malformed", str(exc))
    return classify_error(result)


def classify_error(result: Mapping[str, Any]) -> Failed:
    status = result.get("api_error_status")
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    text = result.get("result")
    if not isinstance(text, str) or not text.strip():
        errors = result.get("errors")
        text = "; ".join(str(e) for e in errors) if isinstance(errors, list) else ""
    text = hide_secrets(" ".join(text.split()))[:200]
    detail = f": {text}" if text else ""
    subtype = str(result.get("subtype") or "")
    if result.get("terminal_reason") == "prompt_too_long" or status == 413 or _TOO_LONG.search(text):
        return Failed("too_large", f"prompt too long{detail}")
    if result.get("stop_reason") == "refusal":
        return Failed("refused", f"refused to answer{detail}")
    if status in (401, 403) or (status is None and _LOGIN.search(text)):
        return Failed("fatal", f"Claude Code's login was refused ({status or 'no login'}{detail}): {FIX_LOGIN}")
    if status == 402 or "credit balance" in text.lower():
        return Failed("fatal", f"billing error ({status or 'no credit'}{detail})")
    if status == 529 or "overloaded" in text.lower():
        return Failed("transient", "overloaded (529)")
    if status == 429:
        return Failed("transient", f"rate limited (429){detail}")
    if status is not None and (status >= 500 or status in (408, 409)):
        return Failed("transient", f"server error ({status})")
    if status == 404:
        return Failed("rejected", f"model not found (404){detail}")
    if status is not None:
        return Failed("rejected", f"request rejected ({status}){detail}")
    if subtype == "error_max_structured_output_retries":
        return Failed("malformed", f"gave no answer matching the schema ({subtype})")
    return Failed("transient", f"failed ({subtype or 'error'}{detail})")

