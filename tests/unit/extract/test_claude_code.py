"""The claude-code extractor's failure mapping and probes, against a small fake `claude` script (the
real CLI is driven in tests/e2e/extract/test_claude_code.py). The script answers `--version`,
`auth status` and `-p` from a JSON plan file: a list of results, one per `-p` run, in order."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from checkpoint.config import Settings
from checkpoint.extract import ExtractionError, Priced, Windowed, claude_code
from checkpoint.extract.claude_cli import cli_status
from checkpoint.extract.claude_code import ClaudeCodeExtractor, classify_error, read_result
from checkpoint.model import ChunkInput, Role, TurnSlice

FAKE_CLAUDE = """\
#!{python}
import json, os, sys, time
from pathlib import Path
plan = Path(os.environ["FAKE_CLAUDE_PLAN"])
if sys.argv[1:] == ["--version"]:
    print(os.environ.get("FAKE_CLAUDE_VERSION", "2.1.328") + " (Claude Code)")
    sys.exit(0)
if sys.argv[1:3] == ["auth", "status"]:
    logged = os.environ.get("FAKE_CLAUDE_LOGGED_IN", "1") == "1"
    print(json.dumps({{"loggedIn": logged, "authMethod": "claude.ai" if logged else "none"}}))
    sys.exit(0 if logged else 1)
steps = json.loads(plan.read_text())
runs = Path(str(plan) + ".runs")
n = len(runs.read_text().splitlines()) if runs.exists() else 0
with runs.open("a") as fh:
    fh.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": sys.stdin.read(),
                         "retries": os.environ.get("CLAUDE_CODE_MAX_RETRIES")}}) + "\\n")
step = steps[min(n, len(steps) - 1)]
if step == "crash":
    os.kill(os.getpid(), 9)
if step == "hang":
    time.sleep(30)
print(json.dumps(step))
sys.exit(1 if step.get("is_error") else 0)
"""


def ok(items: list[dict[str, Any]], cost: float = 0.002) -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": False, "stop_reason": "tool_use",
            "structured_output": {"items": items}, "total_cost_usd": cost,
            "usage": {"input_tokens": 10, "output_tokens": 20, "cache_creation_input_tokens": 1000,
                      "cache_read_input_tokens": 0}}


def api_error(status: int | None, text: str, terminal: str = "api_error") -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": True, "api_error_status": status,
            "terminal_reason": terminal, "result": text, "total_cost_usd": 0, "usage": {}}


ITEM = {"kind": "decision", "statement": "We'll use marker-abc for the parser.", "rationale": None,
        "confidence": 0.9, "turn_ids": ["t1"], "files": []}


class Fake:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        self.script = bin_dir / "claude"
        self.script.write_text(FAKE_CLAUDE.format(python=sys.executable))
        self.script.chmod(self.script.stat().st_mode | stat.S_IXUSR)
        self.plan = tmp_path / "plan.json"
        monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
        monkeypatch.setenv("FAKE_CLAUDE_PLAN", str(self.plan))
        self.settings = Settings(db=tmp_path / "data" / "checkpoint.db", sources=[], max_attempts=3,
                                 retry_delay=0.0, retry_max_delay=0.0, request_timeout=1.0)
        self.sleeps: list[float] = []

    def steps(self, *steps: Any) -> None:
        self.plan.write_text(json.dumps(list(steps)))

    def runs(self) -> list[dict[str, Any]]:
        runs = Path(str(self.plan) + ".runs")
        return [json.loads(line) for line in runs.read_text().splitlines()] if runs.exists() else []

    def extractor(self, **changes: Any) -> ClaudeCodeExtractor:
        settings = Settings(**{**self.settings.__dict__, **changes})
        return ClaudeCodeExtractor(settings, sleep=self.sleeps.append)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fake:
    return Fake(tmp_path, monkeypatch)


CHUNK = ChunkInput(chunk_id=1, session_id="s1", agent="claude", cwd=None, token_estimate=20,
                   turns=[TurnSlice(turn_id="u1", seq=1, role=Role.USER, text="We'll use marker-abc for the parser.")])


def test_an_answer_is_read_with_its_usage_cost_and_flags(fake: Fake) -> None:
    fake.steps(ok([ITEM], cost=0.0125))
    extraction = fake.extractor().extract(CHUNK)
    assert [d.statement for d in extraction.items] == [ITEM["statement"]]
    assert (extraction.extractor, extraction.model) == ("claude-code", "claude-haiku-4-5")
    assert (extraction.usage.requests, extraction.usage.cost_usd, extraction.usage.cache_creation_input_tokens) \
        == (1, 0.0125, 1000)
    [run] = fake.runs()
    argv = run["argv"]
    for flag in ("-p", "--no-session-persistence", "--safe-mode"):
        assert flag in argv
    assert argv[argv.index("--output-format") + 1] == "json"
    assert argv[argv.index("--tools") + 1] == ""
    assert argv[argv.index("--model") + 1] == "claude-haiku-4-5"
    assert "StructuredOutput" not in argv and json.loads(argv[argv.index("--json-schema") + 1])["type"] == "object"
    assert "[t1 user]" in run["stdin"] and run["retries"] == "0"
    assert Path(run["cwd"]) == fake.settings.db.parent / "extractor-runs"


def test_transient_failures_retry_with_backoff_and_every_attempt_counts(fake: Fake) -> None:
    fake.steps(api_error(529, "API Error: 529 Overloaded."), "crash", api_error(500, "API Error: 500"), ok([ITEM]))
    with pytest.raises(ExtractionError) as failed:
        fake.extractor().extract(CHUNK)  # 3 attempts: 529, a killed process, 500
    assert failed.value.retryable and not failed.value.too_large
    assert failed.value.cause == "primary claude-haiku-4-5 server error (500) after 3 attempts"
    assert failed.value.usage.requests == 3 and len(fake.sleeps) == 2
    assert len(fake.extractor().extract(CHUNK).items) == 1  # the next run's first attempt answers


def test_a_fallback_model_takes_the_chunk_after_the_primary_gives_up(fake: Fake) -> None:
    fake.steps(api_error(529, "Overloaded"), api_error(529, "Overloaded"), api_error(529, "Overloaded"), ok([ITEM]))
    extraction = fake.extractor(fallback_models=["claude-sonnet-4-6"]).extract(CHUNK)
    assert extraction.model == "claude-sonnet-4-6" and extraction.usage.requests == 4


def test_a_hung_process_is_killed_and_retried(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.steps("hang", ok([ITEM]))
    monkeypatch.setattr(claude_code, "START_SECONDS", 0.5)
    extraction = fake.extractor(request_timeout=0.5).extract(CHUNK)
    assert extraction.usage.requests == 2 and len(fake.runs()) == 2


def test_a_prompt_too_long_asks_for_a_re_split(fake: Fake) -> None:
    fake.steps(api_error(400, "Prompt is too long", terminal="prompt_too_long"))
    with pytest.raises(ExtractionError) as failed:
        fake.extractor().extract(CHUNK)
    assert failed.value.too_large and failed.value.usage.requests == 1


@pytest.mark.parametrize(("result", "kind", "says"), [
    (api_error(401, "Invalid API key · Fix external API key"), "fatal", "run `claude auth login`"),
    (api_error(None, "Not logged in · Please run /login"), "fatal", "run `claude auth login`"),
    (api_error(402, "Your credit balance is too low"), "fatal", "billing error"),
    (api_error(404, "There's an issue with the selected model"), "rejected", "model not found (404)"),
    (api_error(429, "rate limited"), "transient", "rate limited (429)"),
    ({"is_error": True, "subtype": "error_max_structured_output_retries"}, "malformed", "schema"),
    ({"is_error": False, "subtype": "success", "stop_reason": "max_tokens", "structured_output": None},
     "too_large", "truncated"),
    ({"is_error": False, "subtype": "success", "structured_output": {"items": "no"}}, "malformed", "schema"),
])
def test_results_map_onto_the_extraction_semantics(result: dict[str, Any], kind: str, says: str) -> None:
    failed = read_result(result)
    assert not isinstance(failed, list)
    assert failed.kind == kind and says in failed.cause


def test_an_auth_failure_stops_the_run_at_once(fake: Fake) -> None:
    fake.steps(api_error(401, "Invalid API key · Fix external API key"))
    with pytest.raises(ExtractionError) as failed:
        fake.extractor().extract(CHUNK)
    assert not failed.value.retryable and len(fake.runs()) == 1


def test_a_key_quoted_in_an_error_is_not_repeated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "Zq7" * 20)
    failed = classify_error(api_error(500, "bad key sk-ant-api03-" + "Zq7" * 20))
    assert "Zq7Zq7" not in failed.cause


def test_claude_missing_or_too_old_is_a_fatal_cause_naming_the_fix(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ExtractionError) as missing:
        fake.extractor(claude_command="claude-nowhere").extract(CHUNK)
    assert not missing.value.retryable and "npm install -g @anthropic-ai/claude-code" in missing.value.cause
    monkeypatch.setenv("FAKE_CLAUDE_VERSION", "2.0.9")
    with pytest.raises(ExtractionError) as old:
        fake.extractor().extract(CHUNK)
    assert not old.value.retryable and "older than 2.1.0" in old.value.cause and "claude update" in old.value.cause
    assert fake.runs() == []  # nothing was sent


def test_the_login_probe_calls_no_model_and_is_cached(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    fake.steps(ok([ITEM]))
    assert cli_status("claude").usable and cli_status("claude").cause == "Claude Code 2.1.328, claude.ai login"
    assert fake.runs() == []
    monkeypatch.setenv("FAKE_CLAUDE_LOGGED_IN", "0")
    assert cli_status("claude").usable  # cached for this process and environment
    monkeypatch.setenv("HOME", str(fake.plan.parent / "other-home"))
    status = cli_status("claude")
    assert not status.usable and status.cause == "Claude Code is not logged in (run `claude auth login`)"


def test_it_is_windowed_and_priced(fake: Fake) -> None:
    extractor = fake.extractor()
    assert isinstance(extractor, Windowed) and isinstance(extractor, Priced)
    assert 150_000 < extractor.chunk_budget() < 200_000  # haiku 4.5: 200k less the reserve and the prompt
    assert extractor.estimate(10_000, 2).cost_usd > 0
