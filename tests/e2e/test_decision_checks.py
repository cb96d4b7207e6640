"""Decisions that check themselves, end to end with the real `checkpoint` command, real git and a
synthetic Claude Code session read by the offline extractor: "We'll use httpx instead of requests".

Proposed, the check does nothing; after `checkpoint accept` `checkpoint check --format sarif` exits 1
and names the lines of src/api.py that import or call requests (valid SARIF 2.1.0), nothing in the file
that uses httpx; fixed, it exits 0. Shared, committed and pushed, a teammate's clone with an empty HOME
and no transcript finds the same lines (and GitHub annotations); after the decision is superseded
("switch back to requests") it exits 0 with no change to the code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.cli_run import cli_env, run
from tests.support.lsp_support import Transcript
from tests.support.sarif import sarif_problems

CHECKPOINT = str(Path(sys.executable).with_name("checkpoint"))
SAID = "We'll use httpx instead of requests because it supports async."
API = ("import os\nimport requests\n\n\ndef fetch(url):\n    return requests.get(url, timeout=5)\n\n\n"
       "def post(url, data):\n    return requests.post(url, data=data)\n")
API_FIXED = "import os\nimport httpx\n\n\ndef fetch(url):\n    return httpx.get(url, timeout=5)\n"
CLIENT = "import httpx\n\nclient = httpx.Client()\n"


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, (args, out.stdout, out.stderr)
    return out.stdout


def checkpoint(cwd: Path, env: dict[str, str], *args: str, rc: int = 0) -> str:
    done = subprocess.run([CHECKPOINT, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == rc, (args, done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def sarif_lines(log: dict[str, Any]) -> list[tuple[str, int]]:
    assert sarif_problems(log) == []
    return [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in log["runs"][0]["results"]]


def test_a_decision_said_in_a_session_is_enforced_here_in_a_teammates_clone_and_retires_when_superseded(
        tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    app = tmp_path / "alice" / "app"
    git(tmp_path, "clone", "-q", str(origin), str(app))
    git(app, "config", "user.name", "Alice")
    git(app, "config", "user.email", "alice@example.com")
    (app / "README.md").write_text("app\n")
    git(app, "add", "-A")
    git(app, "commit", "-q", "-m", "start")
    home = tmp_path / "alice" / "home"
    projects = home / ".claude" / "projects"
    env = cli_env(home, CHECKPOINT_DB=str(tmp_path / "alice" / "checkpoint.db"), CHECKPOINT_SOURCES=str(projects),
                  CHECKPOINT_EXTRACTOR="heuristic")

    # a session decides; the code it leaves still uses requests in src/api.py (new files: "changed")
    (app / "src").mkdir()
    (app / "src" / "api.py").write_text(API)
    (app / "src" / "client.py").write_text(CLIENT)
    t = Transcript(projects, app)
    t.write(t.user("Which HTTP client?"))
    t.write(t.assistant(SAID, edits=[(app / "src" / "client.py", "pass", CLIENT)]))
    assert run(["now", "--json", "--concurrency", "1"], env).check().json()["run"] is not None
    [item] = [i for i in json.loads(checkpoint(app, env, "items", "--json"))["items"] if "httpx" in i["statement"]]

    # proposed: the check waits
    clean = json.loads(checkpoint(app, env, "check", "--format", "sarif"))
    assert sarif_lines(clean) == [] and clean["runs"][0]["tool"]["driver"]["rules"] == []
    listed = json.loads(checkpoint(app, env, "check", "list", "--json"))["checks"]
    assert [(c["check"], c["state"], c["acts"]) for c in listed] == [('{"uses": "requests"}', "proposed", False)]

    # accepted: the lines of src/api.py that import or call requests, nothing in src/client.py
    checkpoint(app, env, "accept", item["id"])
    log = json.loads(checkpoint(app, env, "check", "--format", "sarif", rc=1))
    assert sarif_lines(log) == [("src/api.py", 2), ("src/api.py", 6), ("src/api.py", 10)]
    [rule] = log["runs"][0]["tool"]["driver"]["rules"]
    assert rule["properties"]["item"] == item["id"] and "httpx instead of requests" in rule["shortDescription"]["text"]
    assert log["runs"][0]["results"][0]["level"] == "warning"  # a decision; a constraint's would be an error
    text = subprocess.run([CHECKPOINT, "check"], cwd=app, env=env, capture_output=True, text=True, timeout=120)
    assert text.returncode == 1 and text.stdout.startswith(f"src/api.py:2:1: breaks the decision {item['id'][:8]}")
    assert "3 lines in 1 file against 1 check" in text.stderr
    assert checkpoint(app, env, "check", "src/client.py") == ""  # the file that uses httpx: clean
    checkpoint(app, env, "check", "--format", "xml", rc=2)

    # fixed: clean
    (app / "src" / "api.py").write_text(API_FIXED)
    assert sarif_lines(json.loads(checkpoint(app, env, "check", "--format", "sarif"))) == []

    # shared (the record carries the check), committed with the old code, pushed
    (app / "src" / "api.py").write_text(API)
    record = Path(json.loads(checkpoint(app, env, "share", item["id"], "--json"))["path"])
    assert '\nchecks:\n  - {"uses": "requests"}\n' in record.read_text()
    git(app, "add", "-A")
    git(app, "commit", "-q", "-m", "decision: httpx")
    git(app, "push", "-q", "origin", "main")
    assert checkpoint(app, env, "check") == ""  # committed: nothing changed is left to check
    checkpoint(app, env, "check", "--all-files", rc=1)

    # a teammate's CI: a fresh clone, an empty HOME, no transcript, no database
    ci = tmp_path / "ci" / "app"
    git(tmp_path, "clone", "-q", str(origin), str(ci))
    (tmp_path / "ci" / "home").mkdir()
    ci_env = cli_env(tmp_path / "ci" / "home")
    found = json.loads(checkpoint(ci, ci_env, "check", "--all-files", "--format", "sarif", rc=1))
    assert sarif_lines(found) == [("src/api.py", 2), ("src/api.py", 6), ("src/api.py", 10)]
    annotations = checkpoint(ci, ci_env, "check", "--all-files", "--format", "github", rc=1).splitlines()
    assert annotations[0].startswith("::warning file=src/api.py,line=2,endLine=2,col=1,")
    assert "title=Checkpoint%3A decision" in annotations[0] and "httpx instead of requests" in annotations[0]

    # superseded: the check retires, the code unchanged
    t.write(t.user("We'll switch back to requests instead of httpx."))
    assert run(["now", "--json", "--concurrency", "1"], env).check().json()["run"] is not None
    assert json.loads(checkpoint(app, env, "items", "--all", "--json"))["items"]
    assert sarif_lines(json.loads(checkpoint(app, env, "check", "--all-files", "--format", "sarif"))) == []


def test_the_pre_edit_hook_names_the_decision_and_the_line_an_edit_would_break(tmp_path: Path) -> None:
    app = tmp_path / "app"
    git(tmp_path, "init", "-q", str(app))
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    env = cli_env(home, CHECKPOINT_DB=str(tmp_path / "checkpoint.db"), CHECKPOINT_SOURCES=str(projects),
                  CHECKPOINT_EXTRACTOR="heuristic")
    t = Transcript(projects, app)
    t.write(t.user(SAID))
    assert run(["now", "--json", "--concurrency", "1"], env).check().json()["run"] is not None
    [item] = json.loads(checkpoint(app, env, "items", "--json"))["items"]
    checkpoint(app, env, "accept", item["id"])
    call = json.dumps({"session_id": "agent-1", "cwd": str(app), "hook_event_name": "PreToolUse", "tool_name": "Edit",
                       "tool_input": {"file_path": str(app / "src" / "api.py"), "old_string": "import os",
                                      "new_string": "import os\nimport requests"}})

    def hook(extra: dict[str, str]) -> dict[str, Any]:
        done = subprocess.run([CHECKPOINT, "hook", "pre-edit"], input=call, cwd=app, env={**env, **extra},
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        out: dict[str, Any] = json.loads(done.stdout)["hookSpecificOutput"]
        return out

    told = hook({})
    assert f"`import requests` breaks decision {item['id']}" in told["additionalContext"]
    assert "line 2 of the new text" in told["additionalContext"] and "permissionDecision" not in told
    assert hook({"CHECKPOINT_AGENT_CHECK_ASK": "1"})["permissionDecision"] == "ask"
