"""Sessions written by the real GitHub Copilot CLI, offline, against the fake OpenAI Responses API.

    .venv/bin/python -m tests.support.real_copilot OUT_DIR

writes OUT_DIR/copilot/session-state/<session id>/... (HOME in a temp dir, never the user's);
`OUT_DIR edits` writes the edit fixture instead (tests/support/edit_fixtures.py: a create with a
decision about the file). The CLI
runs in its documented offline mode (`COPILOT_OFFLINE=true`: no GitHub authentication, telemetry,
web tools or update check) with a "bring your own key" provider (`COPILOT_PROVIDER_BASE_URL`, type
openai, wire API responses) that is tests/support/fake_openai.py on 127.0.0.1; see `copilot help
environment`. Each scenario plants decisions ("We'll use marker-<name> ...") said once each by the
model, so a reader test can check every one is stored once and extracted as one item. The fixtures
under tests/data/real_cli/ were made with it (see the README there).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.agent_clis import agent_cli, bin_dir, clean_env
from tests.support.edit_fixtures import EDITS, PROMPT, project
from tests.support.fake_openai import FakeOpenAI, ResponsesRequest, function_outputs

JSON = dict[str, Any]
MODEL = "gpt-5-mini"
VERSION = "1.0.102"

# The decisions the scenario plants, each said once by the model.
COPILOT_MARKERS = ("marker-copilot-first", "marker-copilot-after-edit", "marker-copilot-after-bash",
                   "marker-copilot-subagent", "marker-copilot-parent", "marker-copilot-resumed",
                   "marker-copilot-background", "marker-copilot-elsewhere")
COPILOT_PROMPTS = ("Start: pick a parser.", "Write the notes file, then fix its first line.",
                   "Run a short command with bash.", "Spawn one helper to decide on caching, then answer.",
                   "Start a background helper on logging, then read its answer.",
                   "After the resume: what about retries?", "Second session, in another folder.")
SUBAGENT_PROMPT = "SUBAGENT-TASK: decide on caching."
BACKGROUND_PROMPT = "BACKGROUND-TASK: decide on logging."
REASONING = "Thinking it over: a hand-written parser is simplest here."
NOTES = "notes.md"


def copilot_env(home: Path, fake_url: str) -> dict[str, str]:
    """The CLI in its offline mode with the fake as its provider; nothing of the real user's."""
    return clean_env(
        home,
        COPILOT_OFFLINE="true",  # documented: no GitHub auth, telemetry, web tools, MCP server, updates
        COPILOT_AUTO_UPDATE="false",
        COPILOT_PROVIDER_TYPE="openai",
        COPILOT_PROVIDER_WIRE_API="responses",
        COPILOT_PROVIDER_BASE_URL=fake_url,
        COPILOT_PROVIDER_API_KEY="fake-key",
        COPILOT_MODEL=MODEL,
        # The native binary unpacks its JavaScript (235 MB) on first start: once, beside the install.
        COPILOT_PKG_CACHE_HOME=str(bin_dir().parent.parent / ".copilot-pkg-cache"),
    )


def _call(name: str, call_id: str, arguments: JSON, *before: JSON) -> JSON:
    return {"output": [*before, {"type": "function_call", "id": f"fc_{call_id}", "status": "completed",
                                 "name": name, "arguments": json.dumps(arguments), "call_id": call_id}]}


def _message(text: str, *before: JSON) -> JSON:
    return {"output": [*before, {"type": "message", "id": "msg_said", "status": "completed", "role": "assistant",
                                 "content": [{"type": "output_text", "text": text, "annotations": []}]}]}


def _reasoning(text: str) -> JSON:
    return {"type": "reasoning", "id": "rs_fake", "summary": [{"type": "summary_text", "text": text}],
            "encrypted_content": "gAAAAB-opaque-reasoning-bytes"}


def copilot_responder(cwd: Path) -> Any:
    """The model of the scenario: each prompt names what it wants; each marker said once."""

    def respond(request: ResponsesRequest) -> str | JSON:
        if not request.body.get("tools"):
            return "A short title."  # a side request (a title, a summary)
        prompt, done = request.prompt, function_outputs(request.body)
        if SUBAGENT_PROMPT in prompt and "Spawn one helper" not in prompt:
            return _message("Sub-agent finding. We'll use marker-copilot-subagent for caching.")
        if "Spawn one helper" in prompt:
            if "call_task" not in done:
                return _call("task", "call_task", {"description": "Decide on caching", "prompt": SUBAGENT_PROMPT,
                                                   "agent_type": "general-purpose", "name": "cache-helper"})
            return _message("The helper answered. We'll use marker-copilot-parent for the store.")
        if BACKGROUND_PROMPT in prompt and "background helper" not in prompt:
            return _message("Background finding. We'll use marker-copilot-background for logging.")
        if "background helper" in prompt:
            if "call_background" not in done:
                task = {"description": "Decide on logging", "prompt": BACKGROUND_PROMPT,
                        "agent_type": "general-purpose", "name": "log-helper", "mode": "background"}
                return _call("task", "call_background", task)
            if "call_read" not in done:
                agent = re.search(r"agent_id: ([\w-]+)", done["call_background"])
                return _call("read_agent", "call_read", {"agent_id": agent.group(1) if agent else "log-helper",
                                                         "wait": True, "timeout": 60})
            return _message("The background helper has answered.")
        if "Write the notes file" in prompt:
            if "call_create" not in done:
                return _call("create", "call_create", {"path": str(cwd / NOTES), "file_text": "# Notez\nbody\n"})
            if "call_edit" not in done:
                fix = {"path": str(cwd / NOTES), "old_str": "# Notez", "new_str": "# Notes"}
                return _call("edit", "call_edit", fix)
            return _message("Done. We'll use marker-copilot-after-edit for the notes.")
        if "Run a short command" in prompt:
            if "call_bash" not in done:
                return _call("bash", "call_bash", {"command": "seq 1 3", "description": "Count to three"})
            return _message("It printed three lines. We'll use marker-copilot-after-bash for logging.")
        if "Second session" in prompt:
            return _message("We'll use marker-copilot-elsewhere for the other project.")
        if "After the resume" in prompt:
            return _message("Resumed. We'll use marker-copilot-resumed for retries.")
        if "Start: pick a parser" in prompt:
            return _message("We'll use marker-copilot-first for the parser.", _reasoning(REASONING))
        return _message("Nothing to add.")

    return respond


def _copilot(home: Path, cwd: Path, fake: FakeOpenAI, *args: str) -> str:
    result = subprocess.run([str(agent_cli("copilot")), *args, "--allow-all-tools", "--no-color"],
                            cwd=cwd, env=copilot_env(home, fake.base_url), capture_output=True, text=True,
                            timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"copilot {args[:2]} exited {result.returncode}: {result.stderr[-2000:]}"
                           f"{result.stdout[-2000:]}")
    return result.stdout


def copilot_scenario(out: Path) -> None:
    """A session with a reasoning answer, file edits, a bash call, a sub-agent and a background one,
    resumed for each; /compact; one more prompt, streamed; a second session in another folder."""
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd, other = Path(tmp) / "home", Path(tmp) / "work", Path(tmp) / "other" / "project"
        home.mkdir()
        cwd.mkdir()
        other.mkdir(parents=True)
        with FakeOpenAI() as fake:
            fake.responder = copilot_responder(cwd)
            _copilot(home, cwd, fake, "-p", COPILOT_PROMPTS[0])
            session = next((home / ".copilot" / "session-state").glob("*/events.jsonl")).parent.name
            for prompt in COPILOT_PROMPTS[1:-2]:
                _copilot(home, cwd, fake, f"--resume={session}", "-p", prompt)
            _copilot(home, cwd, fake, f"--resume={session}", "-p", "/compact")  # writes no user.message
            _copilot(home, cwd, fake, f"--resume={session}", "-p", COPILOT_PROMPTS[-2], "--stream", "on")
            _copilot(home, other, fake, "-p", COPILOT_PROMPTS[-1])
        shutil.copytree(home / ".copilot" / "session-state", out / "copilot" / "session-state",
                        dirs_exist_ok=True)


def edit_responder(request: ResponsesRequest) -> str | JSON:
    """The model says its decision, then writes the file with create in the same answer."""
    if not request.body.get("tools"):
        return "A short title."
    edit = EDITS["copilot"]
    if "call_create" in function_outputs(request.body):
        return _message("Written.")
    if PROMPT in request.prompt:
        said = {"type": "message", "id": "msg_said", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": edit.said, "annotations": []}]}
        return _call("create", "call_create", {"path": str(edit.absolute), "file_text": edit.text}, said)
    return _message("Nothing to add.")


def edit_scenario(out: Path) -> None:
    """One prompt in tests/support/edit_fixtures.PROJECT."""
    with tempfile.TemporaryDirectory() as tmp, project() as cwd:
        home = Path(tmp) / "home"
        home.mkdir()
        with FakeOpenAI() as fake:
            fake.responder = edit_responder
            _copilot(home, cwd, fake, "-p", PROMPT)
        if (cwd / EDITS["copilot"].path).read_text() != EDITS["copilot"].text:
            raise RuntimeError("copilot did not write the file")
        shutil.copytree(home / ".copilot" / "session-state", out / "copilot" / "session-state", dirs_exist_ok=True)


if __name__ == "__main__":
    if sys.argv[2:] == ["edits"]:
        edit_scenario(Path(sys.argv[1]))
    else:
        copilot_scenario(Path(sys.argv[1]))
