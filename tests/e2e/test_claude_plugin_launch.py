"""The plugin finds Checkpoint without it being on PATH: claude-plugin/bin/checkpoint-launch runs a
`checkpoint` on PATH, else the daemon the Checkpoint VS Code extension installed (a venv in the
editor's global storage), else says once how to install it: from this clone (the distribution is not
on PyPI yet), a command that, run as printed, installs a working `checkpoint`.

Driven by the REAL Claude Code CLI (`--plugin-dir`, the fake model API on 127.0.0.1, HOME in a temp
dir) with a PATH that holds no `checkpoint`, and by running the launcher as the hooks and the MCP
config do (`sh .../checkpoint-launch ...`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.agent_clis import ROOT, agent_cli, clean_env
from tests.support.agent_corpus import PlannedSession, capture, write_claude_session
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest

PLUGIN = ROOT / "claude-plugin"
LAUNCHER = PLUGIN / "bin" / "checkpoint-launch"
NOT_INSTALLED = "Checkpoint is not installed"
INSTALL = f"pipx install {ROOT} (or: uv tool install {ROOT}; with neither: python3 -m venv"
TOOL = "mcp__plugin_checkpoint_checkpoint__search_decisions"
EXTENSION_VENV = Path(".config/Code/User/globalStorage/checkpoint-dev.checkpoint-vscode/daemon/0.1.0-0123456789ab")


def path_without_checkpoint(env: dict[str, str]) -> str:
    folders = [f for f in env["PATH"].split(os.pathsep) if f and not shutil.which("checkpoint", path=f)]
    assert not shutil.which("checkpoint", path=os.pathsep.join(folders))
    return os.pathsep.join(folders)


def fake_extension_venv(home: Path) -> Path:
    """The layout vscode-extension/src/environment.ts makes (environmentDir + venvPython): its
    bin/python here a script running this test venv's Python (a copy of a venv's interpreter symlink
    would lose the venv's site-packages)."""
    python = home / EXTENSION_VENV / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return python


def launch(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = clean_env(home)
    env["PATH"] = path_without_checkpoint(env)
    return subprocess.run(["sh", str(LAUNCHER), *args], env=env, input=stdin, capture_output=True, text=True,
                          timeout=60)


def test_without_checkpoint_the_session_start_says_how_to_install_it_and_the_other_hooks_stay_quiet(
    tmp_path: Path,
) -> None:
    start = launch(tmp_path, "hook", "session-start",
                   stdin=json.dumps({"session_id": "s", "source": "startup", "cwd": str(tmp_path)}))
    assert (start.returncode, start.stderr) == (0, "")
    said = json.loads(start.stdout)
    context = said["hookSpecificOutput"]["additionalContext"]
    assert said["systemMessage"] == context and said["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert NOT_INSTALLED in context and INSTALL in context
    compact = launch(tmp_path, "hook", "session-start", stdin=json.dumps({"session_id": "s", "source": "compact"}))
    assert (compact.returncode, compact.stdout, compact.stderr) == (0, "", "")  # once a session, not at each compaction
    for event in ("pre-edit", "stop", "post-compact", "session-end"):
        quiet = launch(tmp_path, "hook", event, stdin=json.dumps({"session_id": "s", "cwd": str(tmp_path)}))
        assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", ""), event
    mcp = launch(tmp_path, "mcp")
    assert mcp.returncode != 0 and mcp.stdout == ""
    assert NOT_INSTALLED in mcp.stderr and INSTALL in mcp.stderr


def test_the_install_line_it_prints_run_as_printed_from_a_clone_installs_a_working_checkpoint(tmp_path: Path) -> None:
    """The message names the clone the plugin runs from; its command, run by `sh` as printed, installs
    `checkpoint`. With pipx on PATH its pipx form is run; without (as on the CI box), its form for a
    machine with neither pipx nor uv (a venv and pip). The clone is a copy of this checkout's tracked
    files, so the build leaves nothing in the checkout."""
    clone = tmp_path / "clone"
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    for name in tracked.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(home)
    env["PATH"] = path_without_checkpoint(env)
    env |= {k: v for k, v in os.environ.items() if k.startswith("PIP_")}  # the machine's index settings
    said = subprocess.run(["sh", str(clone / "claude-plugin" / "bin" / "checkpoint-launch"), "mcp"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert said.returncode == 127 and f"pipx install {clone} (or: uv tool install {clone};" in said.stderr
    if shutil.which("pipx", path=env["PATH"]):
        command, installed = f"pipx install {clone}", home / ".local" / "bin"
    else:
        found = re.search(r"with neither: (.+?), then put (\S+) on PATH", said.stderr)
        assert found, said.stderr
        command, installed = found[1], Path(found[2].replace("~", str(home), 1))
    install = subprocess.run(["sh", "-c", command], env=env | {"PIPX_HOME": str(home / ".pipx")},
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, (command, install.stdout[-2000:], install.stderr[-2000:])
    env["PATH"] = f"{installed}{os.pathsep}{env['PATH']}"
    version = subprocess.run(["sh", str(clone / "claude-plugin" / "bin" / "checkpoint-launch"), "--version"],
                             env=env, capture_output=True, text=True, timeout=60)
    assert (version.returncode, version.stdout.strip()) == (0, "checkpoint 0.1.0"), version.stderr
    status = subprocess.run(["checkpoint", "status"], env=env | {"CHECKPOINT_DB": str(tmp_path / "c.db")},
                            capture_output=True, text=True, timeout=120)
    assert status.returncode == 0 and "Total: 0 sessions" in status.stdout, (status.stdout, status.stderr)


def test_the_daemon_the_vscode_extension_installed_is_used(tmp_path: Path) -> None:
    fake_extension_venv(tmp_path)
    version = launch(tmp_path, "--version")
    assert (version.returncode, version.stdout.strip()) == (0, "checkpoint 0.1.0"), version.stderr


def run_claude(home: Path, cwd: Path, db: Path, projects: Path) -> tuple[subprocess.CompletedProcess[str],
                                                                        list[dict[str, Any]]]:
    agent_requests: list[dict[str, Any]] = []

    def respond(request: MessageRequest) -> Any:
        if any(isinstance(t, dict) and t.get("name") == "Bash" for t in request.body.get("tools") or []):
            agent_requests.append(request.body)
        return "A short answer."

    with FakeAnthropic() as fake:
        fake.responder = respond
        env = clean_env(home, **fake.env(), CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=str(projects),
                        CHECKPOINT_EXTRACTOR="heuristic", IS_SANDBOX="1", CLAUDE_CODE_MCP_STARTUP_WAIT_MS="60000")
        env["PATH"] = path_without_checkpoint(env)
        result = subprocess.run(
            [str(agent_cli("claude")), "-p", "Which store did we pick?", "--model", "claude-haiku-4-5",
             "--plugin-dir", str(PLUGIN), "--permission-mode", "bypassPermissions"],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    return result, agent_requests


def test_claude_code_without_checkpoint_is_told_once_how_to_install_it(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    for folder in (home, ws):
        folder.mkdir()
    projects = home / ".claude" / "projects"
    result, requests = run_claude(home, ws, tmp_path / "data" / "checkpoint.db", projects)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert len(requests) == 1, requests
    sent = json.dumps(requests[0]["messages"], ensure_ascii=False)
    assert sent.count(NOT_INSTALLED) == 1 and INSTALL in sent
    [transcript] = projects.glob("*/*.jsonl")
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    attachments = [r["attachment"] for r in records if r.get("type") == "attachment"]
    # The hook's stdout, the agent's context and the line shown to the user: each once, from SessionStart alone.
    said = [(a["type"], a.get("hookEvent")) for a in attachments if NOT_INSTALLED in json.dumps(a)]
    assert sorted(said) == [("hook_additional_context", "SessionStart"), ("hook_success", "SessionStart"),
                            ("hook_system_message", "SessionStart")], said
    assert not [a for a in attachments if "error" in str(a.get("type"))], attachments  # no hook failed
    assert not (tmp_path / "data").exists()  # nothing ran that could have made a database


def test_claude_code_uses_the_daemon_the_vscode_extension_installed(tmp_path: Path) -> None:
    home, alpha = tmp_path / "home", tmp_path / "ws" / "alpha"
    for folder in (home, alpha):
        folder.mkdir(parents=True)
    fake_extension_venv(home)
    projects = home / ".claude" / "projects"
    db = tmp_path / "data" / "checkpoint.db"
    write_claude_session(projects, PlannedSession("sess-alpha", str(alpha), [
        "We'll use SQLite for the store because it is one file."]))
    capture(db, projects)
    result, requests = run_claude(home, alpha, db, projects)
    assert result.returncode == 0, (result.stdout, result.stderr)
    first = json.dumps({"system": requests[0].get("system"), "messages": requests[0]["messages"]},
                       ensure_ascii=False)
    assert "Checkpoint context:" in first and "SQLite for the store" in first  # the hook, through that venv
    assert TOOL in first and NOT_INSTALLED not in first  # its MCP server too
