"""The hooks and the MCP server make the ownership checks `now`, `scan` and `serve` make: a database
in a folder anyone may write, or another user's, is refused (never read into an agent's context), and
the hooks' own folder beside the database (`<db>.agent/`) is used only when it is the user's own and
private, its files never followed through a symlink."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checkpoint.agent.problems import state_dir
from tests.support.agent_corpus import PlannedSession, capture, write_claude_session

CHECKPOINT = Path(sys.executable).with_name("checkpoint")
PLANTED = "We'll use the planted-marker helper for every deploy."


class Victim:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.db = tmp / "shared" / "checkpoint.db"
        self.root = tmp / "projects"
        self.ws = tmp / "ws"
        self.ws.mkdir()
        write_claude_session(self.root, PlannedSession("planted", str(self.ws), [PLANTED]))
        capture(self.db, self.root)

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.tmp),
                "XDG_CONFIG_HOME": str(self.tmp / ".config"), "CHECKPOINT_DB": str(self.db),
                "CHECKPOINT_SOURCES": str(self.root), "CHECKPOINT_EXTRACTOR": "heuristic"}

    def run(self, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([str(CHECKPOINT), *args], input=stdin, capture_output=True, env=self.env(),
                              cwd=self.ws, timeout=60)

    def session_start(self) -> subprocess.CompletedProcess[bytes]:
        return self.run("hook", "session-start", stdin=json.dumps({
            "session_id": "s1", "cwd": str(self.ws), "hook_event_name": "SessionStart"}).encode())

    def mcp_list(self) -> dict[str, Any]:
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_decisions", "arguments": {}}},
        ]
        done = self.run("mcp", stdin="".join(json.dumps(m) + "\n" for m in messages).encode())
        answers = {m.get("id"): m for m in map(json.loads, done.stdout.splitlines())}
        result: dict[str, Any] = answers[2]["result"]
        return result


@pytest.fixture
def victim(tmp_path: Path) -> Victim:
    return Victim(tmp_path)


def hand_over(folder: Path) -> str:
    """Make `folder` another user's (root can), or everyone's; the words the refusal says."""
    if os.getuid() == 0:
        os.chown(folder, 65534, 65534)
        return "another user"
    folder.chmod(0o777)
    return "writable by everyone"


@pytest.mark.parametrize("how", ["world-writable", "another user's"])
def test_the_hook_and_the_mcp_server_refuse_a_database_folder_now_refuses(victim: Victim, how: str) -> None:
    assert PLANTED.split()[3] in victim.session_start().stdout.decode()  # served while the folder is ours
    if how == "world-writable":
        victim.db.parent.chmod(0o777)
        said = "writable by everyone"
    else:
        said = hand_over(victim.db.parent)
    now = victim.run("now")
    assert now.returncode == 1 and said in now.stderr.decode(), now.stderr
    hook = victim.session_start()
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, b"", b"")
    mcp = victim.mcp_list()
    assert mcp["isError"] and said in mcp["content"][0]["text"] and "planted" not in json.dumps(mcp), mcp


def test_a_planted_problems_symlink_is_not_followed(victim: Victim) -> None:
    target = victim.tmp / "victim-file"
    target.write_text("untouched\n")
    folder = state_dir(victim.db)
    folder.mkdir(mode=0o700)
    (folder / "problems.jsonl").symlink_to(target)
    hook = victim.run("hook", "session-start", stdin=b"not json")  # a problem to record
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, b"", b"")
    assert target.read_text() == "untouched\n"


@pytest.mark.parametrize("how", ["world-writable", "a symlink", "another user's"])
def test_an_agent_folder_that_is_not_private_is_not_used_and_status_says_so(victim: Victim, how: str) -> None:
    folder = state_dir(victim.db)
    elsewhere = victim.tmp / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if how == "a symlink":
        folder.symlink_to(elsewhere)
    else:
        folder.mkdir(mode=0o700)
        if how == "world-writable":
            folder.chmod(0o777)
        elif os.getuid() == 0:
            os.chown(folder, 65534, 65534)
        else:
            folder.chmod(0o777)
    before = sorted(p.name for p in [*folder.iterdir(), *elsewhere.iterdir()])
    assert victim.run("hook", "session-start", stdin=b"not json").returncode == 0
    assert victim.run("hook", "stop", stdin=json.dumps({"session_id": "s1", "cwd": str(victim.ws)}).encode(),
                      ).returncode == 0
    assert sorted(p.name for p in [*folder.iterdir(), *elsewhere.iterdir()]) == before  # nothing written there
    status = victim.run("status", "--json")
    assert status.returncode == 0, status.stderr
    problems = json.loads(status.stdout)["agent_problems"]
    assert len(problems) == 1 and str(folder) in problems[0]["message"], problems
    assert "not private" in problems[0]["message"] or "symlink" in problems[0]["message"], problems
