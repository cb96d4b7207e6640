"""End to end from a GitHub Copilot CLI session: the real Copilot CLI (1.0.102, pinned) writes a
session offline against the fake OpenAI API (its documented `COPILOT_OFFLINE` mode with a BYOK
provider on 127.0.0.1), then the real `checkpoint now` process finds it under the default root
(~/.copilot/session-state, HOME a temp dir: no --source) and extracts it through the fake Anthropic
API. Each planted decision, whether the user typed it, the model said it or a sub-agent did (whose
answer the CLI copies into the task's result), is exactly one item, in the session's own folder."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from tests.support.agent_clis import agent_cli
from tests.support.cli_run import cli_env, item_markers, run
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_openai import FakeOpenAI, ResponsesRequest
from tests.support.real_copilot import copilot_env

USER_SAID = "marker-a11ce0"
MODEL_SAID = "marker-b0b0b0"
SUBAGENT_SAID = "marker-5ab5ab"
KEY = "sk-ant-test-never-shown-c0p1"


def _message(text: str) -> dict[str, Any]:
    return {"output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}]}


def _responder(request: ResponsesRequest) -> str | dict[str, Any]:
    if not request.body.get("tools"):
        return "A title."
    done = {i.get("call_id") for i in request.body.get("input") or [] if i.get("type") == "function_call_output"}
    if "SUB: decide on caching." in request.prompt and "Ask a helper" not in request.prompt:
        return _message(f"We'll use {SUBAGENT_SAID} for caching.")
    if "Ask a helper" in request.prompt:
        if "call_task" in done:
            return _message("The helper has answered.")
        arguments = {"description": "Caching", "prompt": "SUB: decide on caching.", "agent_type": "general-purpose",
                     "name": "cache-helper"}
        return {"output": [{"type": "function_call", "id": "fc_task", "status": "completed", "name": "task",
                            "arguments": json.dumps(arguments), "call_id": "call_task"}]}
    return _message(f"Agreed. We'll use {MODEL_SAID} for the store.")


def _copilot(home: Path, cwd: Path, fake: FakeOpenAI, *args: str) -> None:
    result = subprocess.run([str(agent_cli("copilot")), *args, "--allow-all-tools"], cwd=cwd,
                            env=copilot_env(home, fake.base_url), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:] + result.stdout[-2000:]


def test_each_decision_in_a_copilot_session_is_one_item_through_the_api(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    with FakeOpenAI() as model:
        model.responder = _responder
        _copilot(home, work, model, "-p", f"We'll use {USER_SAID} for the queue. Agreed?")
        session = next((home / ".copilot" / "session-state").glob("*/events.jsonl")).parent.name
        _copilot(home, work, model, f"--resume={session}", "-p", "Ask a helper about caching.")
    assert [r.status for r in model.responses] == [200] * len(model.responses)

    db = tmp_path / "checkpoint.db"
    with FakeAnthropic() as api:
        env = cli_env(home, ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY=KEY, CHECKPOINT_MODEL="claude-haiku-4-5")
        now = run(["now", "--json", "--db", str(db)], env).check()
        again = run(["now", "--db", str(db)], env).check()
        items = run(["items", "--json", "--db", str(db)], env).check().json()["items"]
        status = run(["status", "--json", "--db", str(db)], env).check().json()
        api.check()

    report = now.json()["run"]
    assert report["extractor"] == "anthropic" and report["failed"] == 0 and report["captured"] >= 1
    assert Counter(m for _, kind, m in item_markers(items)) == Counter([USER_SAID, MODEL_SAID, SUBAGENT_SAID])
    assert {i["session_id"] for i in items} == {session}
    [found] = status["sessions"]
    assert (found["id"], found["agent"], found["cwd"]) == (session, "copilot", str(work))
    assert found["captured"] == found["turns"] > 0
    assert "Nothing new to extract." in again.out
    for stream in (now.out, now.err, again.out, again.err):
        assert KEY not in stream
