"""Session files written by the real Gemini CLI (0.61.0, pinned), offline, against tests/support/fake_gemini.py.

    .venv/bin/python -m tests.support.gemini_transcripts OUT_DIR

writes OUT_DIR/gemini/tmp/<project>/chats/... and OUT_DIR/gemini/projects.json, as the CLI wrote them
under a temp HOME (never the user's); `OUT_DIR edits` writes the edit fixture instead
(tests/support/edit_fixtures.py: a write_file with a decision about the file). The scenario plants
decisions ("We'll use marker-<hex> ...") each said once by the model, so a reader test can check
every one is stored once and extracted as one item. tests/data/real_cli/gemini.tar.gz was made with
it (see the README there).
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
from tests.support.edit_fixtures import EDITS, PROMPT, project
from tests.support.fake_gemini import FakeGemini, GeminiRequest

MODEL = "gemini-2.5-flash"
PROMPTS = ("Start: pick a parser.", "Now write notes with write_file.", "Ask a helper to decide on caching.",
           "Second project: pick a queue.")
SUBAGENT_PROMPT = "SUBAGENT-TASK: decide on caching."
MARKERS = ("marker-a1f1", "marker-a1f2", "marker-a1f3", "marker-a1f4", "marker-a1f5")
THOUGHT = "**Weighing parsers** Comparing a hand-written parser with a generated one."
# What gemini-cli 0.61 needs to run headless: an auth type (the API key one: GOOGLE_GEMINI_BASE_URL
# then points its SDK at the fake), no telemetry, no update checks.
SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False}}


def responder(work: Path) -> Any:
    def answer(request: GeminiRequest) -> str | list[dict[str, Any]]:
        everything = json.dumps(request.body.get("contents"))
        if "complete_task" in request.tools:  # the generalist sub-agent: says its decision, then finishes
            return [{"text": f"We'll use {MARKERS[2]} for caching."},
                    {"functionCall": {"name": "complete_task", "args": {"result": {"response": "Caching decided."}}}}]
        if "write_file" in request.responses:
            return f"Written. We'll use {MARKERS[1]} for notes."
        if "invoke_agent" in request.responses:
            return f"The helper answered. We'll use {MARKERS[3]} for the store."
        if PROMPTS[1] in request.prompt:
            return [{"functionCall": {"name": "write_file",
                                      "args": {"file_path": str(work / "notes.md"), "content": "# Notes\n"}}}]
        if PROMPTS[2] in request.prompt:
            return [{"functionCall": {"name": "invoke_agent",
                                      "args": {"agent_name": "generalist", "prompt": SUBAGENT_PROMPT}}}]
        if PROMPTS[0] in request.prompt:
            return [{"text": THOUGHT, "thought": True}, {"text": f"We'll use {MARKERS[0]} for the parser."}]
        if PROMPTS[3] in request.prompt:
            return f"We'll use {MARKERS[4]} for the queue."
        return "Nothing to add." if everything else ""
    return answer


def _gemini(home: Path, cwd: Path, fake: FakeGemini, *args: str) -> None:
    env = clean_env(home, **fake.env())
    result = subprocess.run([str(agent_cli("gemini")), *args, "-m", MODEL, "--skip-trust", "--approval-mode", "yolo"],
                            cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"gemini {args[:2]} exited {result.returncode}: {result.stderr[-2000:]}")


def gemini_scenario(out: Path) -> None:
    """A session with a thought, a write_file call and a generalist sub-agent, resumed twice (one file);
    a second session in another project."""
    with tempfile.TemporaryDirectory() as tmp:
        home, work, other = Path(tmp) / "home", Path(tmp) / "work", Path(tmp) / "other"
        for folder in (home / ".gemini", work, other):
            folder.mkdir(parents=True)
        (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS))
        with FakeGemini() as fake:
            fake.responder = responder(work)
            _gemini(home, work, fake, "-p", PROMPTS[0])
            _gemini(home, work, fake, "--resume", "latest", "-p", PROMPTS[1])
            _gemini(home, work, fake, "--resume", "latest", "-p", PROMPTS[2])
            _gemini(home, other, fake, "-p", PROMPTS[3])
        shutil.copytree(home / ".gemini" / "tmp", out / "gemini" / "tmp", dirs_exist_ok=True)
        shutil.copy(home / ".gemini" / "projects.json", out / "gemini" / "projects.json")


def edit_responder(request: GeminiRequest) -> str | list[dict[str, Any]]:
    """The model says its decision and writes the file with write_file in the same answer."""
    edit = EDITS["gemini"]
    if "write_file" in request.responses:
        return "Written."
    if PROMPT in request.prompt:
        write = {"name": "write_file", "args": {"file_path": str(edit.absolute), "content": edit.text}}
        return [{"text": edit.said}, {"functionCall": write}]
    return "Nothing to add."


def edit_scenario(out: Path) -> None:
    """One prompt in tests/support/edit_fixtures.PROJECT."""
    with tempfile.TemporaryDirectory() as tmp, project() as work:
        home = Path(tmp) / "home"
        (home / ".gemini").mkdir(parents=True)
        (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS))
        with FakeGemini() as fake:
            fake.responder = edit_responder
            _gemini(home, work, fake, "-p", PROMPT)
        if (work / EDITS["gemini"].path).read_text() != EDITS["gemini"].text:
            raise RuntimeError("gemini did not write the file")
        shutil.copytree(home / ".gemini" / "tmp", out / "gemini" / "tmp", dirs_exist_ok=True)
        shutil.copy(home / ".gemini" / "projects.json", out / "gemini" / "projects.json")


if __name__ == "__main__":
    if sys.argv[2:] == ["edits"]:
        edit_scenario(Path(sys.argv[1]))
    else:
        gemini_scenario(Path(sys.argv[1]))
