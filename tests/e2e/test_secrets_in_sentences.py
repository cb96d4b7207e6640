"""Secrets said in sentences the offline extractor keeps (issue 32, item 1), end to end through the real
`checkpoint` process: each kind of tests/support/secrets_corpus.py's SPOKEN makers (passwords in plain
language, Google OAuth client secrets, base64-wrapped .env files, Vault tokens old and new, AWS secret
keys in prose, private key bodies without their header, Azure SAS signatures, Twilio clients built
positionally), one session each whose first prompt (the session's title) and answer say it, captured
with the heuristic extractor. No secret is in `items --json`, `search --json`, `status --json` (the
titles), the database's bytes (with its WAL), the SessionStart hook's context or the MCP server's answers.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from tests.support import secrets_corpus
from tests.support.cli_run import CHECKPOINT, cli_env, run


def _secrets() -> list[secrets_corpus.Secret]:
    rng = random.Random(32)
    return [s for kind in secrets_corpus.SPOKEN for s in secrets_corpus.MAKERS[kind](rng)]


def _write_session(root: Path, n: int, cwd: Path, secret: secrets_corpus.Secret) -> None:
    """A Claude Code session whose first prompt (its title) and whose answer say the secret."""
    sid = f"5ec7e700-0000-4000-8000-{n:012d}"
    path = root / str(cwd).replace("/", "-") / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    env = {"sessionId": sid, "cwd": str(cwd), "version": "2.1.50", "isSidechain": False, "userType": "external"}
    lines = [
        {**env, "type": "user", "uuid": f"{sid[:8]}-u{n}", "timestamp": "2026-02-01T10:00:00.000Z",
         "message": {"role": "user", "content": secret.text}},
        {**env, "type": "assistant", "uuid": f"{sid[:8]}-a{n}", "timestamp": "2026-02-01T10:00:01.000Z",
         "message": {"id": f"msg-{n}", "role": "assistant", "model": "claude-haiku-4-5",
                     "content": [{"type": "text", "text": secret.text}]}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _needles(secret: secrets_corpus.Secret) -> set[str]:
    """The value, and each long run of letters and digits in it (what a search index keeps of it)."""
    return {secret.value, *(run for run in re.findall(r"[A-Za-z0-9]{12,}", secret.value))}


def _leaks(secrets: list[secrets_corpus.Secret], where: dict[str, str]) -> dict[str, list[str]]:
    """Per place, the kinds of the secrets found there (as printed, or as the JSON printed reads)."""
    out: dict[str, list[str]] = {}
    for name, text in where.items():
        for secret in secrets:
            if any(n in text or json.dumps(n)[1:-1] in text for n in _needles(secret)):
                out.setdefault(name, []).append(secret.kind)
    return out


def _mcp(cwd: Path, env: dict[str, str], item_ids: list[str]) -> list[str]:
    params = StdioServerParameters(command=str(CHECKPOINT), args=["mcp"], cwd=str(cwd), env=env)

    async def main() -> list[str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            results = [await session.call_tool("list_decisions", {"limit": 50}),
                       await session.call_tool("search_decisions", {"query": "staging", "limit": 50}),
                       await session.call_tool("checkpoint_status", {}),
                       *[await session.call_tool("get_decision", {"id": i}) for i in item_ids]]
            texts = []
            for result in results:
                assert not result.is_error, result.content
                content = result.content[0]
                assert isinstance(content, TextContent)
                texts.append(content.text)
            return texts

    return asyncio.run(main())


def test_no_secret_said_in_a_sentence_reaches_any_output(tmp_path: Path) -> None:
    home, root, db, ws = tmp_path / "home", tmp_path / "projects", tmp_path / "data" / "checkpoint.db", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    secrets = _secrets()
    assert {s.kind for s in secrets} == set(secrets_corpus.SPOKEN)
    for n, secret in enumerate(secrets):
        _write_session(root, n, ws, secret)
    env = cli_env(home, CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=str(root), CHECKPOINT_EXTRACTOR="heuristic")
    run(["scan"], env).check()
    reader = sqlite3.connect(db)  # holds the WAL the capture writes on disk, to be searched
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM turns").fetchone()
        run(["now", "--concurrency", "1"], env).check()
        files = {p.name: p.read_bytes() for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()}
    finally:
        reader.rollback()
        reader.close()
    assert files.get("checkpoint.db-wal"), "the WAL was not kept for the search"

    items_out = run(["items", "--json"], env).check()
    items: list[dict[str, Any]] = items_out.json()["items"]
    # The sentences were kept: the sessions of every kind gave items, which say where a secret was.
    kind_of = {f"5ec7e700-0000-4000-8000-{n:012d}": s.kind for n, s in enumerate(secrets)}
    assert {kind_of[i["session_id"]] for i in items if "[REDACTED:" in i["statement"]} == set(secrets_corpus.SPOKEN)
    search_out = run(["search", "staging", "--json", "--limit", "500"], env).check()
    assert search_out.json()["items"]
    status_out = run(["status", "--json"], env).check()
    titles = [s["title"] for s in status_out.json()["sessions"]]
    assert len(titles) == len(secrets) and all(titles)
    assert sum("[REDACTED:" in t for t in titles) >= len(secrets) // 2  # (a title is the prompt's first 120 characters)
    hook = subprocess.run([str(CHECKPOINT), "hook", "session-start"], capture_output=True, env=env, timeout=60,
                          input=json.dumps({"session_id": "next", "transcript_path": str(root / "x.jsonl"),
                                            "cwd": str(ws), "hook_event_name": "SessionStart",
                                            "source": "startup"}).encode())
    assert hook.returncode == 0 and hook.stderr == b""
    context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[REDACTED:" in context
    mcp = _mcp(ws, env, [i["id"] for i in items])

    where = {"items --json": items_out.out, "search --json": search_out.out, "status --json": status_out.out,
             "session-start": hook.stdout.decode(), "session-start context": context,
             **{f"mcp {n}": text for n, text in enumerate(mcp)},
             **{name: data.decode("utf-8", "replace") for name, data in files.items()}}
    assert _leaks(secrets, where) == {}
    assert os.path.getsize(db) > 0


RECORD = """---
status: accepted
date: 2026-11-02
id: 0123456789abcdef
kind: decision
files: [src/deploy.py]
---

# We'll deploy with the key {akia} and the secret {secret}

## Rationale

Datadog: our datadog api key is {datadog}; das Passwort ist {password}.
"""


def test_a_teammates_record_is_stored_and_shown_without_its_secrets(tmp_path: Path) -> None:
    """Issue 37 (finding 8): a record committed with an AKIA key, an AWS secret, a Datadog key and a German
    password, read in by the real `checkpoint items`, the session-start hook and the MCP server."""
    rng = random.Random(37)
    values = {"akia": "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16)),
              "secret": "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                                for _ in range(40)),
              "datadog": "".join(rng.choice("0123456789abcdef") for _ in range(32)),
              "password": "Xk9#mQ2vLp7z&Rt"}
    home, db, repo = tmp_path / "home", tmp_path / "data" / "checkpoint.db", tmp_path / "repo"
    home.mkdir()
    (repo / "docs" / "decisions").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=60)
    (repo / "docs" / "decisions" / "0001-deploy.md").write_text(RECORD.format(**values))
    env = cli_env(home, CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=str(tmp_path / "none"),
                  CHECKPOINT_EXTRACTOR="heuristic")
    items_out = subprocess.run([str(CHECKPOINT), "items", "--all", "--json"], cwd=repo, env=env, capture_output=True,
                               text=True, timeout=120, check=True).stdout
    [item] = json.loads(items_out)["items"]
    assert "[REDACTED:" in item["statement"] and "[REDACTED:" in item["rationale"]
    hook = subprocess.run([str(CHECKPOINT), "hook", "session-start"], capture_output=True, env=env, timeout=60,
                          input=json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionStart",
                                            "source": "startup"}).encode())
    mcp = _mcp(repo, env, [item["id"]])
    stored = b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists()).decode("utf-8", "replace")
    said = {"items --json": items_out, "session-start": hook.stdout.decode(), "database": stored,
            **{f"mcp {n}": text for n, text in enumerate(mcp)}}
    assert {name: [k for k, v in values.items() if v in text] for name, text in said.items()
            if any(v in text for v in values.values())} == {}


def test_the_hook_problem_log_keeps_no_token_from_malformed_input(tmp_path: Path) -> None:
    """Issue 37 (finding 8): stdin that is not JSON, opening with a token, is recorded as a problem
    without it."""
    token = "ghp_" + "".join(random.Random(8).choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789") for _ in range(36))
    home, db = tmp_path / "home", tmp_path / "data" / "checkpoint.db"
    home.mkdir()
    env = cli_env(home, CHECKPOINT_DB=str(db), CHECKPOINT_SOURCES=str(tmp_path / "none"))
    for event in ("pre-edit", "session-start", "stop"):
        hook = subprocess.run([str(CHECKPOINT), "hook", event], capture_output=True, env=env, timeout=60,
                              input=f"GITHUB_TOKEN={token} not json".encode())
        assert (hook.returncode, hook.stdout, hook.stderr) == (0, b"", b"")
    log = (db.parent / (db.name + ".agent") / "problems.jsonl").read_text()
    assert log.count("is not JSON") == 3 and "[REDACTED:" in log
    assert token not in log and token[:12] not in log
