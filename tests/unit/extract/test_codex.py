"""The Codex extractor with the real Codex CLI (0.169, pinned) against the fake Responses API: the
request it makes, the answer it reads, the tokens it counts, and how each failure maps onto the
extractor semantics (retry, re-split, stop the run with a cause that names the fix)."""

from __future__ import annotations

import json
import stat
import time
from dataclasses import replace
from pathlib import Path

import pytest

from checkpoint.config import Settings, load
from checkpoint.extract import ExtractionError
from checkpoint.extract.answer_schema import SCHEMA, STRICT_SCHEMA, read_answer, strict_schema
from checkpoint.extract.choose import choose_extractor
from checkpoint.extract.codex import CodexExtractor, classify
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.extract.prompt import SYSTEM_PROMPT, render_request
from checkpoint.model import ChunkInput, ItemKind, KnownItem, Role, TurnSlice
from tests.support.agent_clis import agent_cli, clean_env
from tests.support.fake_openai import FakeOpenAI, parse_request, provider_overrides, strict_schema_problem

CHUNK = ChunkInput(
    chunk_id=7, session_id="sess-1", agent="codex", cwd="/home/dev/proj",
    turns=[TurnSlice("u1", 1, Role.USER, "Hello. We'll use marker-abc123 for the cache layer.", ("src/a.py",)),
           TurnSlice("a1", 2, Role.ASSISTANT, "Fine. We'll use marker-def456 for the queue layer.")],
    token_estimate=100,
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The process environment an extractor inherits: a temp HOME and CODEX_HOME, nothing real."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    for name, value in clean_env(home, FAKE_KEY="fake-key").items():
        monkeypatch.setenv(name, value)
    return home


def settings(home: Path, fake: FakeOpenAI | None = None, **extra: object) -> Settings:
    values: dict[str, object] = {"db": home / "data" / "checkpoint.db", "codex_command": str(agent_cli("codex")),
                                 "codex_model": "fake-model", "retry_delay": 0.01, "max_attempts": 3}
    if fake is not None:
        values["codex_config"] = provider_overrides(fake.base_url)
    return Settings(**(values | extra))  # type: ignore[arg-type]


def rollouts(home: Path) -> list[Path]:
    return sorted(p for p in (home / ".codex").rglob("*") if p.is_file() and "sessions" in p.parts) + \
        sorted((home / ".codex").glob("history.jsonl"))


def test_extracts_the_chunk_through_codex_and_counts_its_tokens(home: Path) -> None:
    with FakeOpenAI() as fake:
        extraction = CodexExtractor(settings(home, fake)).extract(CHUNK)
    assert extraction.extractor == "codex" and extraction.model == "fake-model" and extraction.chunk_id == 7
    assert [(i.statement, i.turn_ids, i.files) for i in extraction.items] == [
        ("We'll use marker-abc123 for the cache layer.", ["t1"], ["src/a.py"]),
        ("We'll use marker-def456 for the queue layer.", ["t2"], []),
    ]
    [request] = fake.responses
    assert request.usage is not None
    assert extraction.usage.input_tokens == request.usage["input_tokens"]
    assert extraction.usage.output_tokens == request.usage["output_tokens"]
    assert extraction.usage.requests == 1 and extraction.usage.cost_usd == 0.0
    assert rollouts(home) == []  # --ephemeral, and no history.jsonl copy of the request


def test_the_request_carries_the_system_prompt_the_chunk_and_the_strict_schema_and_no_tools(home: Path) -> None:
    chunk = replace(CHUNK, known_items=[
        KnownItem(id="it-1", kind=ItemKind.DECISION, statement="We'll use marker-abc123 for the cache layer.")])
    with FakeOpenAI() as fake:
        extraction = CodexExtractor(settings(home, fake)).extract(chunk)
    body = fake.responses[0].body
    request = parse_request(body)
    assert request.model == "fake-model"
    assert request.instructions[0] == SYSTEM_PROMPT.strip()  # model_instructions_file replaced Codex's prompt
    assert not any("You are a coding agent" in text for text in request.instructions)
    head, transcript = render_request(chunk)
    assert request.prompt == head + "\n" + transcript
    assert body["text"]["format"]["strict"] is True and body["text"]["format"]["schema"] == STRICT_SCHEMA
    tools = {t.get("name") or t.get("type") for t in body.get("tools", [])}
    assert not tools & {"exec_command", "shell", "apply_patch", "web_search", "view_image", "multi_agent_v1"}
    assert [i.same_as for i in extraction.items] == ["it-1", None]  # known items reached the model


def test_the_strict_schema_is_what_strict_mode_takes_and_read_answer_still_reads() -> None:
    assert strict_schema_problem(SCHEMA) is not None  # the shared schema as it is: refused by strict mode
    assert strict_schema_problem(STRICT_SCHEMA) is None
    assert strict_schema(SCHEMA) == STRICT_SCHEMA and SCHEMA != STRICT_SCHEMA  # a copy: the shared one stays
    item = {"kind": "decision", "statement": "Use TOML.", "rationale": None, "confidence": 0.7, "turn_ids": ["t1"],
            "files": [], "same_as": None, "supersedes": None, "supersedes_reason": None, "check": None,
            "answers": None, "lasting": False}
    assert set(item) == set(STRICT_SCHEMA["$defs"]["AnswerItem"]["required"])
    assert [(d.statement, d.lasting) for d in read_answer({"items": [item]})] == [("Use TOML.", False)]
    # a check as strict mode sends it (every field present): read into the draft's check
    check = {"uses": "yaml", "calls_only": False, "paths": []}
    assert set(check) == set(STRICT_SCHEMA["$defs"]["AnswerCheck"]["required"])
    assert [d.check for d in read_answer({"items": [{**item, "check": check}]})] == [{"uses": "yaml"}]


def test_a_server_error_is_retried_and_every_attempt_counted(home: Path) -> None:
    with FakeOpenAI() as fake:
        fake.script(500)
        extraction = CodexExtractor(settings(home, fake)).extract(CHUNK)
    assert [r.status for r in fake.responses] == [500, 200]
    assert extraction.usage.requests == 2 and len(extraction.items) == 2


def test_transient_failures_up_to_max_attempts_leave_a_retryable_cause(home: Path) -> None:
    with FakeOpenAI() as fake:
        fake.script(500, 429, "drop")
        with pytest.raises(ExtractionError) as caught:
            CodexExtractor(settings(home, fake, max_attempts=3)).extract(CHUNK)
    exc = caught.value
    assert exc.retryable and not exc.too_large
    assert exc.cause.startswith("codex: stream disconnected before completion") and "after 3 attempts" in exc.cause
    assert len(fake.responses) == 3 and exc.usage.requests == 3


def test_a_malformed_answer_is_retried(home: Path) -> None:
    with FakeOpenAI() as fake:
        fake.script("malformed")
        extraction = CodexExtractor(settings(home, fake)).extract(CHUNK)
    assert len(fake.responses) == 2 and len(extraction.items) == 2


def test_codex_own_retries_of_a_provider_are_bounded_by_its_config_and_counted(home: Path) -> None:
    """codex_config may let Codex retry itself (stream_max_retries); each reconnect it reports is a request."""
    with FakeOpenAI() as fake:
        fake.script("drop_mid_stream", "drop_mid_stream")
        extraction = CodexExtractor(settings(home, fake, codex_config=provider_overrides(fake.base_url, retries=2)))\
            .extract(CHUNK)
    assert len(fake.responses) == 3 and extraction.usage.requests == 3


def test_bad_credentials_stop_the_run_with_the_fix(home: Path) -> None:
    with FakeOpenAI(api_key="the-right-key") as fake, pytest.raises(ExtractionError) as caught:
        CodexExtractor(settings(home, fake)).extract(CHUNK)
    assert not caught.value.retryable
    assert "authentication failed" in caught.value.cause and "codex login" in caught.value.cause
    assert len(fake.responses) == 1  # not retried: no chunk would fare better


def test_not_logged_in_is_said_before_any_request(home: Path) -> None:
    """With the login's own provider (no provider in codex_config) and no login, Codex would send requests
    without credentials and retry each; `codex login status` says so locally first."""
    with pytest.raises(ExtractionError) as caught:
        CodexExtractor(settings(home)).extract(CHUNK)
    assert not caught.value.retryable
    assert caught.value.cause == (f"codex: not logged in (`{agent_cli('codex')} login status`: Not logged in): run "
                                  f"`{agent_cli('codex')} login`")


def test_codex_missing_is_a_fatal_cause_naming_the_install(home: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "no" / "codex")
    with FakeOpenAI() as fake, pytest.raises(ExtractionError) as caught:
        CodexExtractor(settings(home, fake, codex_command=missing)).extract(CHUNK)
    assert not caught.value.retryable
    assert caught.value.cause == f"codex: `{missing}` not found: install it with `npm install -g @openai/codex`, " \
                                 "or set codex_command"


def test_a_codex_that_hangs_is_ended_and_retried(home: Path, tmp_path: Path) -> None:
    stuck = tmp_path / "stuck-codex"
    pid_file = tmp_path / "child.pid"
    # A launcher with a child, as npm's codex.js runs the native binary: both must end.
    stuck.write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {pid_file}\nwait\n")
    stuck.chmod(stuck.stat().st_mode | stat.S_IXUSR)
    extractor = CodexExtractor(settings(home, codex_command=str(stuck), request_timeout=0.5, max_attempts=2,
                                        codex_config=['model_provider="fake"']))
    started = time.monotonic()
    with pytest.raises(ExtractionError) as caught:
        extractor.extract(CHUNK)
    # Not a speed bound: what tells "ended it" from "waited for its 60 s child", however loaded the machine.
    assert time.monotonic() - started < 55
    assert caught.value.retryable and caught.value.cause == "codex: timed out after 0.5 s after 2 attempts"
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 50  # the kill is sent; how soon the kernel reaps it depends on the load
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def alive(pid: int) -> bool:
    """Running (a zombie no one reaps, as under a container's init, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_config_codex_refuses_is_fatal_with_its_words(home: Path) -> None:
    with FakeOpenAI() as fake:
        overrides = [*provider_overrides(fake.base_url), 'model_providers.openai={ name = "mine" }']
        with pytest.raises(ExtractionError) as caught:
            CodexExtractor(settings(home, fake, codex_config=overrides)).extract(CHUNK)
    assert not caught.value.retryable
    assert "failed before the request" in caught.value.cause and "Built-in providers cannot be overridden" in \
        caught.value.cause
    assert fake.responses == []


@pytest.mark.parametrize(("message", "kind"), [  # messages seen from Codex 0.169 against the fake
    ("We’re currently experiencing high demand, which may cause temporary errors.", "transient"),
    ("exceeded retry limit, last status: 429 Too Many Requests, request id: req_fake1", "transient"),
    ("stream disconnected before completion: error sending request", "transient"),
    ("unexpected status 401 Unauthorized: Incorrect API key provided., url: http://x/v1/responses", "fatal"),
    ('{"error": {"message": "Invalid schema", "type": "invalid_request_error", "code": "invalid_json_schema"}}',
     "fatal"),
    ("Your input exceeds the context window of this model. (context_length_exceeded)", "too_large"),
    ("You've hit your usage limit. Upgrade to Pro or try again later.", "fatal"),
])
def test_classify_maps_codex_messages(message: str, kind: str) -> None:
    assert classify(message).kind == kind


def test_choose_selects_codex_when_asked_and_when_usable_without_claude(home: Path) -> None:
    with FakeOpenAI() as fake:
        chosen = choose_extractor(settings(home, fake, extractor="codex"))
        assert isinstance(chosen.extractor, CodexExtractor) and not chosen.fallback
        assert chosen.sentence == \
            f"Using the Codex CLI (fake-model, through `{agent_cli('codex')} exec`) (as configured)."
        # No key and no logged-in claude: a usable codex is the automatic choice (issue 30).
        auto = choose_extractor(settings(home, fake, claude_command="claude-nowhere"))
    assert isinstance(auto.extractor, CodexExtractor) and not auto.fallback


def test_choose_falls_back_and_says_why_when_codex_is_missing_or_logged_out(home: Path, tmp_path: Path) -> None:
    missing = choose_extractor(settings(home, extractor="codex", codex_command="codex-not-installed"))
    assert isinstance(missing.extractor, HeuristicExtractor) and missing.fallback
    assert missing.sentence == (
        "The Codex extractor was asked for, but `codex-not-installed` is not on PATH (codex_command = "
        "'codex-not-installed'; install it with `npm install -g @openai/codex`, or set codex_command): using the "
        "offline heuristic extractor instead (phrase rules, no network).")
    logged_out = choose_extractor(settings(home, extractor="codex"))
    assert isinstance(logged_out.extractor, HeuristicExtractor) and logged_out.fallback
    assert "but not logged in (" in logged_out.sentence and "login`: using the offline" in logged_out.sentence


def test_codex_settings_come_from_the_file_and_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) \
        -> None:
    config = tmp_path / "config.toml"
    config.write_text('extractor = "codex"\ncodex_model = "gpt-file"\ncodex_config = [\'model_provider="x"\']\n')
    monkeypatch.setenv("CHECKPOINT_CONFIG", str(config))
    loaded = load(environ={"CHECKPOINT_CODEX_MODEL": "gpt-env", "CHECKPOINT_CODEX_COMMAND": "/opt/codex"})
    assert (loaded.extractor, loaded.codex_model, loaded.codex_command, loaded.codex_config) == \
        ("codex", "gpt-env", "/opt/codex", ['model_provider="x"'])
    defaults = Settings()
    assert (defaults.codex_command, defaults.codex_model, defaults.codex_config) == ("codex", None, [])
    assert "--model" not in CodexExtractor(defaults).argv()  # None: Codex's default model for the login
    assert json.dumps(STRICT_SCHEMA)  # the schema file is JSON


def test_a_codex_that_dies_mid_turn_is_retried_not_fatal(home: Path, tmp_path: Path) -> None:
    dying = tmp_path / "dying-codex"
    dying.write_text("#!/bin/sh\ncat > /dev/null\necho '{\"type\":\"turn.started\"}'\necho 'killed' >&2\nexit 137\n")
    dying.chmod(dying.stat().st_mode | stat.S_IXUSR)
    extractor = CodexExtractor(settings(home, codex_command=str(dying), max_attempts=2,
                                        codex_config=['model_provider="fake"']))
    with pytest.raises(ExtractionError) as caught:
        extractor.extract(CHUNK)
    assert caught.value.retryable
    assert caught.value.cause == f"codex: `{dying} exec` ended mid-turn (exit 137: killed) after 2 attempts"
