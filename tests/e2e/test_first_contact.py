"""What a new user tripped on (issue 42, findings 3-11), each through the real `checkpoint` process in a
temp HOME: every message true, in the place the README says, and the same words for the same thing
everywhere (CLI, hooks, MCP)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support import synth
from tests.support.agent_corpus import PlannedSession, write_claude_session
from tests.support.cli_run import CHECKPOINT, Result, cli_env, run
from tests.support.fake_chat import FakeChat, FaultKind
from tests.support.paths import REPO_ROOT

RECORD = "docs/decisions/2026-03-12-use-ruff-9c1d2e3f.md"
SHARED_ID = "9c1d2e3f4a5b"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return cli_env(home, **{"CHECKPOINT_DB": str(tmp_path / "data" / "c.db"),
                            "CHECKPOINT_SOURCES": str(tmp_path / "projects"), "CHECKPOINT_EXTRACTOR": "heuristic",
                            **extra})


def _in(cwd: Path, args: list[str], env: dict[str, str], stdin: str = "") -> Result:
    proc = subprocess.run([str(CHECKPOINT), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=120)
    return Result([str(CHECKPOINT), *args], proc.returncode, proc.stdout, proc.stderr, 0.0)


def _sessions(tmp_path: Path, *planned: PlannedSession) -> None:
    for p in planned:
        write_claude_session(tmp_path / "projects", p)


# -- 3: an empty `items --workspace DIR` -------------------------------------------------------------


def test_items_of_an_empty_workspace_say_what_is_elsewhere_and_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _sessions(tmp_path, PlannedSession("sess-a", str(tmp_path / "ws" / "a"),
                                       ["We'll use SQLite for the store because it is one file."]))
    run(["now"], env).check()
    empty = tmp_path / "ws" / "empty"
    empty.mkdir(parents=True)
    said = run(["items", "--workspace", str(empty)], env).check()
    assert said.out == (f"No items in {empty}'s workspace; 1 item in other workspaces (`checkpoint items` without "
                        "--workspace lists them).\n")
    missing = run(["items", "--workspace", str(tmp_path / "nowhere")], env).check(rc=2)
    assert missing.err == f"checkpoint: --workspace {tmp_path / 'nowhere'}: no such folder\n" and missing.out == ""


# -- 5: a mistyped option ----------------------------------------------------------------------------


def test_a_mistyped_option_gets_the_nearest_one_in_one_line(tmp_path: Path) -> None:
    said = run(["items", "--sesion", "abc"], _env(tmp_path)).check(rc=2)
    assert said.err == ("checkpoint items: error: unknown option --sesion (did you mean --session?) "
                        "(`checkpoint items --help` lists the options)\n")
    assert said.out == "" and "usage:" not in said.err
    far = run(["status", "--zzzzzz"], _env(tmp_path)).check(rc=2)
    assert far.err == ("checkpoint status: error: unknown option --zzzzzz (`checkpoint status --help` lists the "
                       "options)\n")


# -- 6: team provenance ------------------------------------------------------------------------------


def _shared_repository(tmp_path: Path) -> Path:
    repo = tmp_path / "app"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    record = repo / RECORD
    record.parent.mkdir(parents=True)
    record.write_text(f"---\nstatus: accepted\ndate: 2026-03-12\ndecision-makers: Alice <alice@example.com>\n"
                      f"id: {SHARED_ID}\nkind: decision\nfiles: []\n---\n\n# Use ruff for linting\n")
    return repo


def _mcp(cwd: Path, env: dict[str, str], tool: str, arguments: dict[str, Any]) -> Any:
    params = StdioServerParameters(command=str(CHECKPOINT), args=["mcp"], cwd=str(cwd), env=env)

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await asyncio.wait_for(session.call_tool(tool, arguments), timeout=60)

    return asyncio.run(main())


def test_a_shared_item_says_who_shared_it_and_in_which_record_everywhere(tmp_path: Path) -> None:
    repo = _shared_repository(tmp_path)
    env = _env(tmp_path)
    items = _in(repo, ["items"], env).check()
    assert f"    from: shared by Alice in {RECORD}\n" in items.out, items.out
    assert "team:" not in items.out and "?:?" not in items.out

    status = _in(repo, ["status"], env).check()
    assert "team:" not in status.out and "Total: 0 sessions" in status.out, status.out
    assert "Shared decision records: 1 item read from " in status.out

    start = _in(repo, ["hook", "session-start"], env,
                stdin=json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"})).check()
    context = json.loads(start.out)["hookSpecificOutput"]["additionalContext"]
    # Every field quoted as data (issue 37), the author's acceptance as their claim.
    assert f'decision record "{RECORD}", accepted by "Alice" in the repository' in context, context
    assert "team session" not in context and "team:" not in context

    result = _mcp(repo, env, "get_decision", {"id": SHARED_ID[:6]})  # a prefix, as the CLI takes
    assert not result.is_error, result.content
    item = json.loads(result.content[0].text)["item"]
    assert item["id"] == SHARED_ID
    assert item["shared"] == {"record": RECORD, "by": "Alice"}


# -- 8: the request budget counts every retry; a server that never answers fails in two timeouts -------


def _openai_env(tmp_path: Path, fake: FakeChat, config: str) -> dict[str, str]:
    (tmp_path / "config.toml").write_text(config)
    corpus = synth.write_corpus(tmp_path / "src", sessions=3, turns=6, chars=1_500, seed=11, codex_share=0.0)
    return cli_env(tmp_path / "home", CHECKPOINT_CONFIG=str(tmp_path / "config.toml"),
                   CHECKPOINT_DB=str(tmp_path / "c.db"), CHECKPOINT_SOURCES=str(corpus.claude_root),
                   CHECKPOINT_EXTRACTOR="openai", CHECKPOINT_OPENAI_BASE_URL=fake.base_url,
                   CHECKPOINT_OPENAI_MODEL="local-model", CHECKPOINT_OPENAI_CONTEXT_TOKENS="8192")


def test_max_requests_is_never_exceeded_by_retries(tmp_path: Path) -> None:
    with FakeChat() as fake:
        fake.script(*[500] * 40)  # every request fails, so every chunk retries (max_attempts 4)
        env = _openai_env(tmp_path, fake, "max_attempts = 4\nretry_delay = 0.01\nretry_max_delay = 0.02\n")
        now = run(["now", "--max-requests", "3", "--concurrency", "2"], env).check(rc=1)
        sent = len(fake.completions)
    assert sent == 3, (sent, now.out)
    assert "Used 3 requests" in now.out and "Used 4 requests" not in now.out, now.out


def test_a_server_that_never_answers_fails_a_chunk_after_two_timeouts_not_max_attempts(tmp_path: Path) -> None:
    with FakeChat() as fake:
        hang: list[FaultKind] = ["hang"] * 10
        fake.script(*hang)
        env = _openai_env(tmp_path, fake, "max_attempts = 4\nrequest_timeout = 1.0\nretry_delay = 0.01\n"
                                          "retry_max_delay = 0.02\nconcurrency = 1\n")
        now = run(["now", "--max-requests", "2"], env).check(rc=1)
        sent = len(fake.completions)
    assert sent == 2, (sent, now.out)
    assert ("no whole answer within the request's deadline of 1 s (request_timeout) after 2 attempts (2 timed out: "
            "the server is too slow for request_timeout)") in now.out, now.out


# -- 10: the same words for the same thing ----------------------------------------------------------


def test_ids_and_sessions_named_wrong_or_twice_are_said_the_same_way(tmp_path: Path) -> None:
    env = _env(tmp_path)
    ws = str(tmp_path / "ws")
    _sessions(tmp_path,
              PlannedSession("spotter__one", ws, ["We'll use SQLite for the store because it is one file."]),
              PlannedSession("spotter__two", ws, ["We'll use orjson for speed because it is fast."]),
              PlannedSession("spotter__three", ws, ["We'll use ruff for linting because it is fast."]))
    run(["now"], env).check()
    accept = run(["accept", "zzz"], env).check(rc=2)
    assert accept.err.startswith("checkpoint: no item 'zzz'"), accept.err
    status = run(["status"], env).check().out
    # Session ids shown long enough to tell apart (not "spotter_" three times).
    for sid in ("spotter__on ", "spotter__tw ", "spotter__th "):
        assert f"\n  {sid}" in status, status
    items = run(["items"], env).check().out
    assert "from: session spotter__on ·" in items and "from: session spotter_ ·" not in items
    run(["forget", "spotter__one"], env).check()
    twice = run(["forget", "spotter__one"], env).check(rc=2)
    assert twice.err == ("checkpoint: session spotter__one is already forgotten (`checkpoint forget --undo "
                         "spotter__one` reads it in again)\n"), twice.err
    item_id = run(["items", "--json"], env).check().json()["items"][0]["id"]
    assert run(["accept", item_id[:6], "--json"], env).check().json() == {"id": item_id, "state": "accepted"}


# -- 11: help ---------------------------------------------------------------------------------------


def test_every_command_has_a_description_and_every_option_a_help(tmp_path: Path) -> None:
    env = _env(tmp_path)
    for command in ("scan", "status", "items", "serve"):
        text = run([command, "--help"], env).check().out
        description = text.split("\n\n")[1]
        assert not description.startswith(("options:", "positional arguments:")), (command, text)
    for command in ("items", "search"):
        text = run([command, "--help"], env).check().out
        kind = text.split("options:")[1].split("--kind {decision,constraint,question}")[1].split("\n  -")[0]
        assert "only items of this kind" in " ".join(kind.split()), (command, text)
    assert "--json" in run(["accept", "--help"], env).check().out


def test_one_record_left_out_by_policy_is_one_record(tmp_path: Path) -> None:
    env = _env(tmp_path, CHECKPOINT_SOURCES=str(REPO_ROOT / "tests" / "data" / "samples"))
    run(["now"], env).check()
    status = run(["status"], env).check().out
    assert "api_error_message 1 record (" in status and " 1 records" not in status, status
