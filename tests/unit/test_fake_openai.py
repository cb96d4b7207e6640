"""The fake Responses API, driven by the real Codex CLI (0.169, pinned): it streams what Codex reads as an
answer, answers the planted decisions in the shape the request's schema asks, checks a strict schema
as OpenAI does, records every request, and its faults reach Codex as the failures they stand for."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_clis import agent_cli, clean_env
from tests.support.fake_openai import FakeOpenAI, parse_request, provider_overrides, strict_schema_problem

PROMPT = "Session s1 (codex).\n\n[t1 user files: src/a.py]\nWe'll use marker-0a1b2c for the cache layer.\n\n" \
         "[t2 assistant]\nAgreed."
LIST_SCHEMA = {"type": "object", "properties": {"items": {"type": "array", "items": {
    "type": "object", "additionalProperties": False, "required": ["kind", "statement", "turn_ids", "files"],
    "properties": {"kind": {"type": "string"}, "statement": {"type": "string"},
                   "turn_ids": {"type": "array", "items": {"type": "string"}},
                   "files": {"type": "array", "items": {"type": "string"}}}}}},
    "required": ["items"], "additionalProperties": False}


def codex(fake: FakeOpenAI, home: Path, *extra: str, schema: dict[str, Any] | None = None, retries: int = 0,
          ephemeral: bool = True) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """`codex exec --json` against the fake with a temp HOME/CODEX_HOME; (process, its events)."""
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    work = home / "work"
    work.mkdir(exist_ok=True)
    args = [str(agent_cli("codex")), "exec", "--json", "--skip-git-repo-check", "--ignore-user-config",
            "--sandbox", "read-only", "--model", "fake-model", "--cd", str(work)]
    if ephemeral:
        args.append("--ephemeral")
    if schema is not None:
        (home / "schema.json").write_text(json.dumps(schema))
        args += ["--output-schema", str(home / "schema.json")]
    for override in [*provider_overrides(fake.base_url, retries=retries), *extra]:
        args += ["-c", override]
    proc = subprocess.run([*args, "-"], input=PROMPT, env=clean_env(home, FAKE_KEY="fake-key"), cwd=work,
                          capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc, events


def answer_of(events: list[dict[str, Any]]) -> str | None:
    texts = [e["item"]["text"] for e in events
             if e.get("type") == "item.completed" and e["item"].get("type") == "agent_message"]
    return texts[-1] if texts else None


def failure_of(events: list[dict[str, Any]]) -> str | None:
    return next((e["error"]["message"] for e in events if e.get("type") == "turn.failed"), None)


def sessions(home: Path) -> list[Path]:
    return sorted((home / ".codex" / "sessions").rglob("*.jsonl"))


def test_codex_reads_the_streamed_answer_and_the_fake_records_the_request(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        proc, events = codex(fake, tmp_path, schema=LIST_SCHEMA)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(answer_of(events) or "null")
    assert answer == {"items": [{"kind": "decision", "statement": "We'll use marker-0a1b2c for the cache layer.",
                                 "rationale": None, "confidence": 0.9, "turn_ids": ["t1"], "files": ["src/a.py"]}]}
    completed = next(e for e in events if e["type"] == "turn.completed")
    [request] = fake.responses
    assert request.usage is not None
    assert completed["usage"]["input_tokens"] == request.usage["input_tokens"]
    assert completed["usage"]["output_tokens"] == request.usage["output_tokens"]
    body = request.body
    assert body["model"] == "fake-model" and body["stream"] is True
    assert body["text"]["format"]["type"] == "json_schema" and body["text"]["format"]["strict"] is True
    assert body["text"]["format"]["schema"] == LIST_SCHEMA
    assert request.headers["authorization"] == "Bearer <redacted>"
    assert parse_request(body).prompt == PROMPT  # the prompt, from stdin, is the last user message


def test_a_schema_strict_mode_would_refuse_is_a_400_naming_the_key(tmp_path: Path) -> None:
    loose = json.loads(json.dumps(LIST_SCHEMA))
    loose["properties"]["items"]["items"]["required"] = ["kind"]
    with FakeOpenAI() as fake:
        proc, events = codex(fake, tmp_path, schema=loose)
    assert proc.returncode != 0
    failure = failure_of(events) or ""
    assert "invalid_json_schema" in failure and "Missing 'statement'" in failure
    assert [r.status for r in fake.responses] == [400]


def test_strict_schema_problem_sees_what_openai_refuses() -> None:
    assert strict_schema_problem(LIST_SCHEMA) is None
    assert "additionalProperties" in (strict_schema_problem({"type": "object", "properties": {}}) or "")
    nested = {"type": "object", "additionalProperties": False, "required": ["a"],
              "properties": {"a": {"type": "object", "additionalProperties": False, "properties": {"b": {}}}}}
    assert "Missing 'b'" in (strict_schema_problem(nested) or "")


@pytest.mark.parametrize(("fault", "said"), [
    (500, "high demand"),
    (429, "429 Too Many Requests"),
    (401, "401 Unauthorized"),
    ("drop", "stream disconnected before completion"),
    ("drop_mid_stream", "stream disconnected before completion"),
])
def test_each_fault_reaches_codex_as_a_failed_turn(tmp_path: Path, fault: str | int, said: str) -> None:
    with FakeOpenAI() as fake:
        fake.script(fault)  # type: ignore[arg-type]
        proc, events = codex(fake, tmp_path, schema=LIST_SCHEMA)
    assert proc.returncode == 1
    assert said in (failure_of(events) or ""), events
    assert len(fake.responses) == 1  # retries 0: the one request, no other
    assert answer_of(events) is None


def test_codex_retries_as_its_provider_config_says_and_each_try_is_a_request(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.script(500, 500)
        proc, events = codex(fake, tmp_path, schema=LIST_SCHEMA, retries=2)
    assert proc.returncode == 0, events
    assert [r.status for r in fake.responses] == [500, 500, 200]
    assert answer_of(events) is not None


def test_a_malformed_answer_reaches_codex_verbatim(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.script("malformed")
        proc, events = codex(fake, tmp_path, schema=LIST_SCHEMA)
    assert proc.returncode == 0
    with pytest.raises(ValueError):
        json.loads(answer_of(events) or "")


def test_ephemeral_writes_no_rollout_where_a_plain_run_writes_one(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        codex(fake, tmp_path / "a", schema=LIST_SCHEMA, ephemeral=True)
        codex(fake, tmp_path / "b", schema=LIST_SCHEMA, ephemeral=False)
    assert sessions(tmp_path / "a") == []
    assert len(sessions(tmp_path / "b")) == 1  # the check can fail: without --ephemeral Codex writes one
