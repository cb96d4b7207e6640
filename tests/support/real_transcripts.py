"""Transcripts written by the real Claude Code and Codex CLIs, offline, against the fake model APIs.

    .venv/bin/python -m tests.support.real_transcripts OUT_DIR

writes OUT_DIR/claude/projects/... and OUT_DIR/codex/sessions/... (HOME in a temp dir, never the
user's); `OUT_DIR edits` writes the edit fixtures instead (tests/support/edit_fixtures.py: a Write,
an apply_patch, each with a decision about the file). Each scenario plants decisions ("We'll use
marker-<name> ...") said once each by the model, so a reader test can check every one is stored once
and extracted as one item. The fixtures under
tests/data/real_cli/ were made with it (see the README there).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.agent_clis import agent_cli, clean_env
from tests.support.edit_fixtures import EDITS, PROMPT, project
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest, last_user_turn, tool_use
from tests.support.fake_openai import FakeOpenAI, ResponsesRequest, function_outputs, provider_overrides

JSON = dict[str, Any]
MODEL = "claude-haiku-4-5"


# The decisions the Claude scenario plants, each said once by the model (or typed once by the user).
CLAUDE_MARKERS = ("marker-first-answer", "marker-subagent-cache", "marker-main-after-agent",
                  "marker-after-big-output", "marker-resumed-answer", "marker-queued-first", "marker-queued-second")


def claude_responder(request: MessageRequest) -> Any:
    """The model of the Claude scenario: each prompt names what it wants; each marker said once."""
    body = request.body
    tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if "Bash" not in tools and "Agent" not in tools:
        return "A short title."  # a side request (title, summary, compaction)
    text, answered = last_user_turn(body)
    if "toolu_agent_1" in answered:
        return "The helper is on it. We'll use marker-main-after-agent for the store."
    if "toolu_bash_1" in answered:
        return "That was long. We'll use marker-after-big-output for logging."
    if "<task-notification>" in text:
        return "Noted the helper's result."
    if "SUBAGENT-TASK" in text:
        return "Sub-agent finding. We'll use marker-subagent-cache for the cache layer."
    if "spawn a helper" in text:
        return tool_use("Agent", "toolu_agent_1", {"description": "Look at caching", "subagent_type": "general-purpose",
                                                "prompt": "SUBAGENT-TASK: look at caching and decide."})
    if "print a lot" in text:
        return tool_use("Bash", "toolu_bash_1", {"command": "seq 1 40000", "description": "Print many lines"})
    if "After the resume" in text:
        return "Resumed. We'll use marker-resumed-answer for retries."
    if "Start: pick a parser" in text:
        return "We'll use marker-first-answer for the parser."
    if "QUEUED-ONE" in text and "QUEUED-TWO" not in text:
        return "We'll use marker-queued-first for queues."
    if "QUEUED-TWO" in text:
        return "We'll use marker-queued-second for the second queue."
    return "Nothing to add."


def _claude(home: Path, cwd: Path, fake: FakeAnthropic, *args: str) -> None:
    env = clean_env(home, **fake.env(), IS_SANDBOX="1")
    result = subprocess.run([str(agent_cli("claude")), "-p", *args, "--model", MODEL,
                             "--permission-mode", "bypassPermissions"],
                            cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"claude {args[:1]} exited {result.returncode}: {result.stderr[-2000:]}")


def _claude_queued(home: Path, cwd: Path, fake: FakeAnthropic) -> None:
    """A second prompt sent while the first is still being answered (stream-json input): queued."""
    env = clean_env(home, **fake.env(), IS_SANDBOX="1")
    fake.latency = 2.0
    proc = subprocess.Popen([str(agent_cli("claude")), "-p", "--input-format", "stream-json", "--output-format",
                             "stream-json", "--verbose", "--model", MODEL, "--permission-mode", "bypassPermissions"],
                            cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    for prompt in ("QUEUED-ONE: first prompt.", "QUEUED-TWO: typed while the first is answered."):
        proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n")
        proc.stdin.flush()
        time.sleep(0.5)
    _, err = proc.communicate(timeout=300)  # closes stdin: the CLI ends once both are answered
    fake.latency = 0.0
    if proc.returncode != 0:
        raise RuntimeError(f"claude (queued) exited {proc.returncode}: {err[-2000:]}")


def claude_scenario(out: Path) -> None:
    """A session with a prompt, a sub-agent, a large tool output; resumed; compacted with /compact."""
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        cwd.mkdir()
        with FakeAnthropic() as fake:
            fake.responder = claude_responder
            _claude(home, cwd, fake, "Start: pick a parser.")
            session = next((home / ".claude" / "projects").glob("*/*.jsonl")).stem
            _claude(home, cwd, fake, "--resume", session, "Now spawn a helper to look at caching.")
            _claude(home, cwd, fake, "--resume", session, "Now print a lot of lines with Bash.")
            _claude(home, cwd, fake, "--resume", session, "/compact")
            _claude(home, cwd, fake, "--resume", session, "After the resume: what about retries?")
            _claude_queued(home, cwd, fake)
        shutil.copytree(home / ".claude" / "projects", out / "claude" / "projects", dirs_exist_ok=True)


CODEX_MARKERS = ("marker-codex-first", "marker-codex-resumed", "marker-codex-subagent", "marker-codex-parent")


def _call(name: str, call_id: str, arguments: JSON) -> JSON:
    return {"output": [{"type": "function_call", "id": f"fc_{call_id}", "status": "completed", "name": name,
                        "namespace": "multi_agent_v1", "arguments": json.dumps(arguments), "call_id": call_id}]}


def codex_responder(request: ResponsesRequest) -> str | JSON:
    """The model of the Codex scenario; in the multi-agent run the parent spawns a sub-agent, waits for
    it and answers; the sub-agent answers its task. Each marker said once."""
    prompt, everything = request.prompt, json.dumps(request.body.get("input"))
    if "SUBAGENT-TASK" in prompt and "Spawn one helper" not in everything:
        return "We'll use marker-codex-subagent for caching."
    if "Spawn one helper" in everything:
        done = function_outputs(request.body)
        if "call_spawn" not in done:
            return _call("spawn_agent", "call_spawn", {"message": "SUBAGENT-TASK: decide on caching."})
        if "call_wait" not in done:
            agent = json.loads(done["call_spawn"]).get("agent_id") if done["call_spawn"].startswith("{") else None
            return _call("wait_agent", "call_wait", {"targets": [agent or ""], "timeout_ms": 60000})
        if "marker-codex-parent" not in everything:
            return "The helper answered. We'll use marker-codex-parent for the store."
        return "Nothing to add."
    if "After the resume" in prompt:
        return "Resumed. We'll use marker-codex-resumed for retries."
    if "Start: pick a parser" in prompt:
        return "We'll use marker-codex-first for the parser."
    return "Nothing to add."


def _codex(home: Path, cwd: Path, fake: FakeOpenAI, *args: str) -> None:
    overrides = [a for o in provider_overrides(fake.base_url) for a in ("-c", o)]
    env = clean_env(home, FAKE_KEY="fake-key")
    result = subprocess.run([str(agent_cli("codex")), "exec", *overrides, "-m", "fake-model", "--skip-git-repo-check",
                             *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"codex {args[:1]} exited {result.returncode}: {result.stderr[-2000:]}")


def codex_scenario(out: Path) -> None:
    """A rollout with a prompt, resumed once; a multi-agent run (a parent and its sub-agent's rollout)."""
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        (home / ".codex").mkdir(parents=True)
        cwd.mkdir()
        with FakeOpenAI() as fake:
            fake.responder = codex_responder
            _codex(home, cwd, fake, "Start: pick a parser.")
            _codex(home, cwd, fake, "resume", "--last", "After the resume: what about retries?")
            _codex(home, cwd, fake, "Spawn one helper to decide on caching, wait for it, then answer.")
        shutil.copytree(home / ".codex" / "sessions", out / "codex" / "sessions", dirs_exist_ok=True)


def claude_edit_responder(request: MessageRequest) -> Any:
    """The model says its decision, then writes the file with Write in the same answer."""
    if not any(isinstance(t, dict) and t.get("name") == "Write" for t in request.body.get("tools") or []):
        return "A short title."
    text, answered = last_user_turn(request.body)
    edit = EDITS["claude"]
    if "toolu_write_1" in answered:
        return "Written."
    if PROMPT in text:
        call = tool_use("Write", "toolu_write_1", {"file_path": str(edit.absolute), "content": edit.text})
        return {**call, "content": [{"type": "text", "text": edit.said}, *call["content"]]}
    return "Nothing to add."


def codex_edit_responder(request: ResponsesRequest) -> str | JSON:
    """The model says its decision, then runs apply_patch (Codex intercepts it and applies the patch
    itself: with a provider of its own, codex 0.169 offers no apply_patch tool, only exec_command)."""
    edit = EDITS["codex"]
    if "call_patch" in function_outputs(request.body):
        return "Patched."
    if PROMPT not in request.prompt:
        return "Nothing to add."
    added = "".join(f"+{line}\n" for line in edit.text.splitlines())
    patch = f"*** Begin Patch\n*** Add File: {edit.path}\n{added}*** End Patch\n"
    said = {"type": "message", "id": "msg_said", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": edit.said, "annotations": []}]}
    call = {"type": "function_call", "id": "fc_call_patch", "status": "completed", "name": "exec_command",
            "arguments": json.dumps({"cmd": f"apply_patch <<'PATCH'\n{patch}PATCH"}), "call_id": "call_patch"}
    return {"output": [said, call]}


def edit_scenarios(out: Path) -> None:
    """One prompt each to Claude Code and Codex in tests/support/edit_fixtures.PROJECT."""
    with tempfile.TemporaryDirectory() as tmp, project() as cwd:
        home = Path(tmp) / "home"
        (home / ".codex").mkdir(parents=True)
        with FakeAnthropic() as claude:
            claude.responder = claude_edit_responder
            _claude(home, cwd, claude, PROMPT)
        with FakeOpenAI() as codex:
            codex.responder = codex_edit_responder
            _codex(home, cwd, codex, "--dangerously-bypass-approvals-and-sandbox", PROMPT)
        for agent in ("claude", "codex"):
            written = (cwd / EDITS[agent].path).read_text()
            if written != EDITS[agent].text:
                raise RuntimeError(f"{agent} wrote {written!r}")
        shutil.copytree(home / ".claude" / "projects", out / "claude" / "projects", dirs_exist_ok=True)
        shutil.copytree(home / ".codex" / "sessions", out / "codex" / "sessions", dirs_exist_ok=True)


if __name__ == "__main__":
    target = Path(sys.argv[1])
    which = sys.argv[2:] or ["claude", "codex"]
    if "edits" in which:
        edit_scenarios(target)
    if "claude" in which:
        claude_scenario(target)
    if "codex" in which:
        codex_scenario(target)
