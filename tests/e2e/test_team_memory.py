"""Team memory through git, with two developers on one machine: two HOMEs, two databases, two clones
of a bare repository on disk, real git, the real `checkpoint` command, the real daemon under a
pytest-lsp client and the real Claude Code CLI with the plugin (against the fake API).

A captures a decision (heuristic extractor, a synthetic Claude Code session that edited src/queue.py)
and shares it, commits, pushes. B pulls and, with no session of its own, sees it in `items` (origin
shared, the record's path), in `search`, as a diagnostic on src/queue.py in the editor, and in Claude
Code's first model request (the SessionStart hook). Then both share at once: B a decision of its own,
A a decision that supersedes the first; the merge has no conflict, and after B pulls `items` leaves
the old decision out while `items --all` marks it superseded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent_clis import ROOT, agent_cli, clean_env
from tests.support.cli_run import cli_env, run
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest
from tests.support.lsp_support import Daemon, Transcript, server_env

PLUGIN = ROOT / "claude-plugin"
VENV_BIN = Path(sys.executable).parent
QUEUE = "class Queue:\n    def put(self, job):\n        self.jobs.append(job)\n"
FIRST = "We'll use SQLite for the job queue because it is one file."
SECOND = "We'll use Postgres for the job queue because it scales past one machine."
B_OWN = "We'll use ruff for linting because it is fast."


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, (args, out.stdout, out.stderr)
    return out.stdout


class Developer:
    def __init__(self, tmp: Path, name: str, origin: Path) -> None:
        self.home = tmp / name / "home"
        self.home.mkdir(parents=True)
        self.projects = self.home / ".claude" / "projects"
        self.db = tmp / name / "data" / "checkpoint.db"
        self.clone = tmp / name / "app"
        git(tmp, "clone", "-q", str(origin), str(self.clone))
        git(self.clone, "config", "user.name", name.capitalize())
        git(self.clone, "config", "user.email", f"{name}@example.com")
        self.env = cli_env(self.home, CHECKPOINT_DB=str(self.db), CHECKPOINT_SOURCES=str(self.projects),
                           CHECKPOINT_EXTRACTOR="heuristic")

    def checkpoint(self, *args: str) -> Any:
        result = subprocess.run([str(VENV_BIN / "checkpoint"), *args], cwd=self.clone, env=self.env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        return json.loads(result.stdout) if "--json" in args else result.stdout

    def session(self, says: str) -> None:
        """A Claude Code session in the clone that says `says` while editing src/queue.py, captured."""
        t = Transcript(self.projects, self.clone)
        t.write(t.user("Set up the job queue"))
        t.write(t.assistant(says, edits=[(self.clone / "src" / "queue.py", "pass", QUEUE)]))
        assert run(["now", "--json", "--concurrency", "1"], self.env).check().json()["run"] is not None

    def item(self, said: str) -> dict[str, Any]:
        """The item the heuristic made of what was said (its statement, the reason as its rationale)."""
        found: list[dict[str, Any]] = [
            i for i in self.checkpoint("items", "--all", "--json")["items"] if i["statement"] in said]
        assert len(found) == 1, found
        return found[0]

    def commit_all(self, message: str) -> None:
        git(self.clone, "add", "-A")
        git(self.clone, "commit", "-q", "-m", message)


@pytest.fixture
def team(tmp_path: Path) -> tuple[Developer, Developer]:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(origin), str(seed))
    (seed / "src").mkdir()
    (seed / "src" / "queue.py").write_text(QUEUE)
    git(seed, "add", "-A")
    git(seed, "-c", "user.name=Seed", "-c", "user.email=seed@example.com", "commit", "-q", "-m", "start")
    git(seed, "push", "-q", "origin", "main")
    return Developer(tmp_path, "alice", origin), Developer(tmp_path, "bob", origin)


def first_request_of_claude(dev: Developer, tmp: Path) -> str:
    """The real Claude Code, with the plugin, run in B's clone: its first model request, as text."""
    claude = agent_cli("claude")
    requests: list[dict[str, Any]] = []

    def respond(request: MessageRequest) -> Any:
        if any(isinstance(t, dict) and t.get("name") == "Bash" for t in request.body.get("tools") or []):
            requests.append(request.body)
        return "Noted."

    with FakeAnthropic() as fake:
        fake.responder = respond
        env = clean_env(dev.home, **fake.env(), CHECKPOINT_DB=str(dev.db), CHECKPOINT_SOURCES=str(dev.projects),
                        CHECKPOINT_EXTRACTOR="heuristic", CHECKPOINT_AGENT_CAPTURE="0", IS_SANDBOX="1",
                        CLAUDE_CODE_MCP_STARTUP_WAIT_MS="60000")
        env["PATH"] = f"{VENV_BIN}{os.pathsep}{env['PATH']}"
        result = subprocess.run(
            [str(claude), "-p", "Which queue did we pick?", "--model", "claude-haiku-4-5", "--plugin-dir",
             str(PLUGIN), "--permission-mode", "bypassPermissions"],
            cwd=dev.clone, env=env, capture_output=True, text=True, timeout=180,
        )
        assert result.returncode == 0, (result.stdout, result.stderr)
    assert requests, "Claude Code sent no request with its tools"
    return json.dumps({"system": requests[0].get("system"), "messages": requests[0].get("messages")})


@pytest.mark.asyncio(loop_scope="function")
async def test_two_developers_share_decisions_through_git(team: tuple[Developer, Developer], tmp_path: Path) -> None:
    alice, bob = team

    # A captures and shares; the record is written, not committed
    alice.session(FIRST)
    first = alice.item(FIRST)
    shared = alice.checkpoint("share", first["id"][:8], "--json")
    record = Path(shared["path"])
    assert shared["created"] and record.parent == alice.clone / "docs" / "decisions"
    assert git(alice.clone, "status", "--porcelain") == f"?? {shared['record'].split('/')[0]}/\n"
    text = record.read_text()
    assert text.startswith("---\nstatus: proposed\n")
    assert "\ndecision-makers: Alice <alice@example.com>\n" in text
    assert f"id: {first['id']}\n" in text and "  - src/queue.py\n" in text and f"# {first['statement']}\n" in text
    assert f"## Rationale\n\n{first['rationale']}\n" in text
    assert "Set up the job queue" not in text  # no transcript text beyond what was extracted
    alice.commit_all("decision: SQLite queue")
    git(alice.clone, "push", "-q", "origin", "main")

    # B pulls: with no session of its own, the decision is in items, search, the editor and Claude Code
    git(bob.clone, "pull", "-q", "--no-rebase", "origin", "main")
    [seen] = bob.checkpoint("items", "--json")["items"]
    assert (seen["id"], seen["statement"], seen["origin"], seen["record"], seen["files"]) == (
        first["id"], first["statement"], "shared", shared["record"], ["src/queue.py"])
    found = bob.checkpoint("search", "sqlite", "queue", "--json")
    assert [i["id"] for i in found["items"]] == [first["id"]]

    daemon = await Daemon.start(server_env(bob.home, bob.db, [bob.projects]), [bob.clone],
                                {"checkpoint": {"extraction": "manual"}})
    try:
        uri = (bob.clone / "src" / "queue.py").as_uri()
        [diagnostic] = await daemon.wait_diagnostics(uri, lambda d: len(d) == 1, timeout=30)
        assert diagnostic.data["item_id"] == first["id"] and first["statement"] in diagnostic.message  # type: ignore[index]
        [panel] = await daemon.items()
        assert (panel["id"], panel["origin"], panel["record"]) == (first["id"], "shared", shared["record"])
    finally:
        await daemon.stop()

    assert first["statement"] in first_request_of_claude(bob, tmp_path)

    # at the same time: B shares a decision of its own; A supersedes the first and shares that
    bob.session(B_OWN)
    bob_shared = bob.checkpoint("share", bob.item(B_OWN)["id"], "--json")
    bob.commit_all("decision: ruff")
    alice.session(SECOND)
    second = alice.item(SECOND)
    alice.checkpoint("supersede", first["id"], second["id"])
    alice.checkpoint("share", second["id"])
    assert "status: superseded\n" in record.read_text() and f"  - {second['id']}\n" in record.read_text()
    alice.commit_all("decision: Postgres queue, superseding SQLite")
    git(alice.clone, "push", "-q", "origin", "main")
    git(bob.clone, "pull", "-q", "--no-rebase", "origin", "main")  # a merge, without a conflict
    assert git(bob.clone, "status", "--porcelain") == ""
    assert (bob.clone / bob_shared["record"]).is_file()

    current = {i["id"] for i in bob.checkpoint("items", "--json")["items"]}
    assert current == {second["id"], bob_shared["id"]}
    every = {i["id"]: i for i in bob.checkpoint("items", "--all", "--json")["items"]}
    assert every[first["id"]]["superseded_by"] == second["id"]
    assert every[second["id"]]["supersedes"] == [first["id"]]
    assert "[superseded by " in bob.checkpoint("items", "--all")


def test_malformed_records_are_problems_of_status_with_their_line(tmp_path: Path) -> None:
    """Each record that cannot be read is one problem (file:line) in `status` and `status --json`,
    read from the repository the command runs in; the good records are items still, nothing crashes."""
    home = tmp_path / "home"
    home.mkdir()
    repo = tmp_path / "app"
    git(tmp_path, "init", "-q", str(repo))
    records = repo / "docs" / "decisions"
    records.mkdir(parents=True)
    good_id = "9c1d2e3f4a5b"
    (records / "good.md").write_text(f"---\nstatus: accepted\ndate: 2026-01-02\nid: {good_id}\nkind: decision\n"
                                     "---\n\n# Use ruff\n")
    (records / "bad-id.md").write_text("---\nstatus: accepted\ndate: 2026-01-02\nkind: decision\nid: zz\n---\n\n# X\n")
    (records / "no-head.md").write_text("# Just a note\n")
    env = cli_env(home, CHECKPOINT_DB=str(tmp_path / "data" / "checkpoint.db"),
                  CHECKPOINT_SOURCES=str(home / ".claude" / "projects"))

    def checkpoint(*args: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([str(VENV_BIN / "checkpoint"), *args], cwd=repo, env=env, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stdout, result.stderr)
        return result

    team = f"team:{repo.resolve() / '.git'}"
    bad_id = {"path": str(records.resolve() / "bad-id.md"), "line": 5, "session_id": team,
              "message": "id: expected Checkpoint's item id (hexadecimal), got 'zz'"}
    no_head = {"path": str(records.resolve() / "no-head.md"), "line": 1, "session_id": team,
               "message": "no front matter: a record starts with a line '---'"}
    assert json.loads(checkpoint("status", "--json").stdout)["problems"] == [bad_id, no_head]
    text = checkpoint("status")
    assert ("Decision records that cannot be read (2; each is left out until fixed):\n"
            f"  {bad_id['path']}:5: {bad_id['message']}\n  {no_head['path']}:1: {no_head['message']}\n") in text.stdout
    assert "Problems reading transcripts" not in text.stdout and text.stderr == ""
    assert [i["id"] for i in json.loads(checkpoint("items", "--json").stdout)["items"]] == [good_id]

    (records / "no-head.md").unlink()
    assert json.loads(checkpoint("status", "--json").stdout)["problems"] == [bad_id]
