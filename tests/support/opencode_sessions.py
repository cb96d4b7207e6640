"""Session data written by the real opencode CLI, offline, against tests/support/fake_anthropic.py.

    .venv/bin/python -m tests.support.opencode_sessions OUT_DIR

runs `opencode run` (HOME and the XDG folders in a temp dir, never the user's) and writes
OUT_DIR/first/opencode/opencode.db (after the first prompt) and OUT_DIR/final/opencode/opencode.db
(after every prompt): the same database at two moments, each copied into one file. `OUT_DIR edits`
writes OUT_DIR/edits/opencode/opencode.db instead (tests/support/edit_fixtures.py: a write with a
decision about the file). Each prompt
plants decisions ("We'll use marker-<hex> ...") said once by the model, so a reader test can check
every one is stored once and extracted as one item. tests/data/opencode/ was made with it (see the
README there).

Side traffic is off: models.dev (OPENCODE_DISABLE_MODELS_FETCH), auto-update, sharing, LSP downloads,
external plugins (OPENCODE_PURE); opencode still installs @opencode-ai/plugin into its config folder
with npm, which the registry set to a closed port on 127.0.0.1 turns into a quiet failure.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.agent_clis import agent_cli, clean_env
from tests.support.edit_fixtures import EDITS, PROMPT, project
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest, last_user_turn, tool_use

JSON = dict[str, Any]
MODEL = "claude-haiku-4-5"
PROVIDER = "fake"

# Said once each by the model (hex, as fake_anthropic's DECISION_RE wants them).
MARKERS = ("marker-0c01", "marker-0c02", "marker-0c03", "marker-0c04", "marker-0c05", "marker-0c06")
PROMPTS = ("Start: pick a parser.", "Now write notes.md with the write tool.",
           "Spawn a helper to look at caching.", "After the helper: what about retries?")
FORK_PROMPT = "In the fork: what about logging?"  # `--continue --fork`: the session copied, then this
SUBAGENT_PROMPT = "SUBAGENT-TASK: look at caching and decide."


def responder(workdir: Path) -> Any:
    def answer(request: MessageRequest) -> Any:
        body = request.body
        if not body.get("tools"):
            return "A short title"  # the title request (no tools offered)
        text, answered = last_user_turn(body)
        if "toolu_write_1" in answered:
            return "Wrote it. We'll use marker-0c02 for the notes file."
        if "toolu_task_1" in answered:
            return "The helper is done. We'll use marker-0c04 for the store."
        if "SUBAGENT-TASK" in text:
            return "Sub-agent finding. We'll use marker-0c03 for the cache layer."
        if "write notes.md" in text:
            return tool_use("write", "toolu_write_1", {"filePath": str(workdir / "notes.md"),
                                                    "content": "parser: the fast one\n"})
        if "Spawn a helper" in text:
            return tool_use("task", "toolu_task_1", {"description": "Look at caching", "prompt": SUBAGENT_PROMPT,
                                                  "subagent_type": "general"})
        if "In the fork" in text:
            return "We'll use marker-0c06 for logging."
        if "After the helper" in text:
            return "We'll use marker-0c05 for retries."
        if "Start: pick a parser" in text:
            return "We'll use marker-0c01 for the parser."
        return "Nothing to add."
    return answer


def config(base_url: str) -> JSON:
    return {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
            "model": f"{PROVIDER}/{MODEL}", "small_model": f"{PROVIDER}/{MODEL}",
            "provider": {PROVIDER: {"npm": "@ai-sdk/anthropic", "name": "Fake Anthropic",
                                    "options": {"baseURL": base_url + "/v1", "apiKey": "test-key"},
                                    "models": {MODEL: {"name": "Haiku (fake)"}}}}}


def env(home: Path, base_url: str) -> dict[str, str]:
    """clean_env plus opencode's switches for its side traffic, and its config pointed at the fake."""
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text(json.dumps(config(base_url)))
    return clean_env(home, XDG_STATE_HOME=str(home / ".local" / "state"), OPENCODE_DISABLE_MODELS_FETCH="1",
                     OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_SHARE="1", OPENCODE_DISABLE_LSP_DOWNLOAD="1",
                     OPENCODE_DISABLE_DEFAULT_PLUGINS="1", OPENCODE_DISABLE_CLAUDE_CODE="1", OPENCODE_PURE="1",
                     npm_config_registry="http://127.0.0.1:9/", npm_config_offline="true")


def run(home: Path, cwd: Path, base_url: str, prompt: str, *args: str) -> None:
    """`opencode run` with the prompt as words (one quoted argument would be stored with its quotes)."""
    result = subprocess.run([str(agent_cli("opencode")), "run", *args, "--auto", *prompt.split()],
                            cwd=cwd, env=env(home, base_url), capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"opencode run {prompt!r} exited {result.returncode}: {result.stderr[-2000:]}")


def database(home: Path) -> Path:
    return home / ".local" / "share" / "opencode" / "opencode.db"


def snapshot(db: Path, out: Path) -> None:
    """The database as one file (the WAL folded in), by SQLite's own backup: what a copy of the
    three files at one moment would hold."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    source = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    target = sqlite3.connect(out)
    try:
        source.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
    finally:
        target.close()
        source.close()


def scenario(out: Path) -> None:
    """A prompt; then, continued: a write tool call, a sub-agent (the task tool: a child session),
    one more prompt; then a fork of the session (its messages copied) and a prompt in the fork."""
    with tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        cwd.mkdir()
        with FakeAnthropic() as fake:
            fake.responder = responder(cwd)
            run(home, cwd, fake.base_url, PROMPTS[0])
            snapshot(database(home), out / "first" / "opencode" / "opencode.db")
            for prompt in PROMPTS[1:]:
                run(home, cwd, fake.base_url, prompt, "--continue")
            run(home, cwd, fake.base_url, FORK_PROMPT, "--continue", "--fork")
            snapshot(database(home), out / "final" / "opencode" / "opencode.db")


def edit_responder(request: MessageRequest) -> Any:
    """The model says its decision, then writes the file with write in the same answer."""
    if not request.body.get("tools"):
        return "A short title"
    text, answered = last_user_turn(request.body)
    edit = EDITS["opencode"]
    if "toolu_write_1" in answered:
        return "Written."
    if PROMPT in text:
        call = tool_use("write", "toolu_write_1", {"filePath": str(edit.absolute), "content": edit.text})
        return {**call, "content": [{"type": "text", "text": edit.said}, *call["content"]]}
    return "Nothing to add."


def edit_scenario(out: Path) -> None:
    """One prompt in tests/support/edit_fixtures.PROJECT."""
    with tempfile.TemporaryDirectory() as tmp, project() as cwd:
        home = Path(tmp) / "home"
        home.mkdir()
        with FakeAnthropic() as fake:
            fake.responder = edit_responder
            run(home, cwd, fake.base_url, PROMPT)
        if (cwd / EDITS["opencode"].path).read_text() != EDITS["opencode"].text:
            raise RuntimeError("opencode did not write the file")
        snapshot(database(home), out / "edits" / "opencode" / "opencode.db")


if __name__ == "__main__":
    target = Path(sys.argv[1])
    if sys.argv[2:] == ["edits"]:
        edit_scenario(target)
        sys.exit()
    shutil.rmtree(target / "first", ignore_errors=True)
    shutil.rmtree(target / "final", ignore_errors=True)
    scenario(target)
