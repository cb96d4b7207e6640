"""Transcripts written by the real Claude Code and Codex CLIs, offline, against the fake model APIs.

    .venv/bin/python -m tests.support.real_transcripts OUT_DIR

writes OUT_DIR/claude/projects/... and OUT_DIR/codex/sessions/... (HOME in a temp dir, never the
user's). Each scenario plants decisions ("We'll use marker-<name> ...") said once each by the model,
so a reader test can check every one is stored once and extracted as one item. The fixtures under
tests/data/real_cli/ were made with it (see the README there).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.agent_clis import agent_cli, clean_env
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest
from tests.support.fake_openai import FakeOpenAI, ResponsesRequest, provider_overrides

JSON = dict[str, Any]
MODEL = "claude-haiku-4-5"


def _last_user_text(body: JSON) -> str:
    messages = body.get("messages") or []
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        return "\n".join(texts) + ("\n[tool_result]" if results else "")
    return ""


def _tool(name: str, tool_id: str, tool_input: JSON) -> JSON:
    return {"content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
            "stop_reason": "tool_use"}


def claude_responder(request: MessageRequest) -> Any:
    """The model of the Claude scenario: each prompt names what it wants; tool calls come once."""
    body = request.body
    tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if "Bash" not in tools and "Agent" not in tools:
        return "A short title."  # a side request (title, summary)
    text = _last_user_text(body)
    everything = json.dumps(body.get("messages"))
    system = json.dumps(body.get("system"))
    if "summar" in system.lower() and "compact" in (everything + system).lower() and "Agent" not in tools:
        return "Summary: We'll use marker-compact-restated for nothing new (a restatement)."
    if "SUBAGENT-TASK" in text and "[tool_result]" not in text:
        return "Sub-agent finding. We'll use marker-subagent-cache for the cache layer."
    if "toolu_agent_1" not in everything and "spawn a helper" in everything:
        return _tool("Agent", "toolu_agent_1", {"description": "Look at caching", "subagent_type": "general-purpose",
                                                "prompt": "SUBAGENT-TASK: look at caching and decide."})
    if "print a lot" in text and "toolu_bash_1" not in everything:
        return _tool("Bash", "toolu_bash_1", {"command": "seq 1 40000", "description": "Print many lines"})
    if "spawn a helper" in text or ("[tool_result]" in text and "toolu_agent_1" in everything
                                    and "marker-main-after-agent" not in everything):
        return "The helper looked. We'll use marker-main-after-agent for the store."
    if "[tool_result]" in text and "toolu_bash_1" in everything:
        return "That was long. We'll use marker-after-big-output for logging."
    if "resume" in text:
        return "Resumed. We'll use marker-resumed-answer for retries."
    return "We'll use marker-first-answer for the parser."


def _claude(home: Path, cwd: Path, fake: FakeAnthropic, *args: str) -> None:
    env = clean_env(home, **fake.env(), IS_SANDBOX="1")
    result = subprocess.run([str(agent_cli("claude")), "-p", *args, "--model", MODEL,
                             "--permission-mode", "bypassPermissions"],
                            cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"claude {args[:1]} exited {result.returncode}: {result.stderr[-2000:]}")


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
        shutil.copytree(home / ".claude" / "projects", out / "claude" / "projects", dirs_exist_ok=True)


def codex_responder(request: ResponsesRequest) -> str:
    if "resume" in request.prompt:
        return "Resumed. We'll use marker-codex-resumed for retries."
    return "We'll use marker-codex-first for the parser."


def _codex(home: Path, cwd: Path, fake: FakeOpenAI, *args: str) -> None:
    overrides = [a for o in provider_overrides(fake.base_url) for a in ("-c", o)]
    env = clean_env(home, FAKE_KEY="fake-key")
    result = subprocess.run([str(agent_cli("codex")), "exec", *overrides, "-m", "fake-model", "--skip-git-repo-check",
                             *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"codex {args[:1]} exited {result.returncode}: {result.stderr[-2000:]}")


def codex_scenario(out: Path) -> None:
    """A rollout with a prompt, resumed once."""
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        (home / ".codex").mkdir(parents=True)
        cwd.mkdir()
        with FakeOpenAI() as fake:
            fake.responder = codex_responder
            _codex(home, cwd, fake, "Start: pick a parser.")
            _codex(home, cwd, fake, "resume", "--last", "After the resume: what about retries?")
        shutil.copytree(home / ".codex" / "sessions", out / "codex" / "sessions", dirs_exist_ok=True)


if __name__ == "__main__":
    target = Path(sys.argv[1])
    which = sys.argv[2:] or ["claude", "codex"]
    if "claude" in which:
        claude_scenario(target)
    if "codex" in which:
        codex_scenario(target)
