"""Privacy, end to end through the real `checkpoint` process and the fake API on 127.0.0.1:

- A Claude Code and a Codex session full of fake secrets (every type of tests/support/secrets_corpus.py, in
  prompts, answers, tool calls and tool output, one in the prompt that titles the session) go through
  `checkpoint now`: no secret is in any request the fake logged, nor in the bytes of the database,
  its WAL or its shared-memory file; status counts what was redacted, per type.
- The API key is never in the database, stdout or stderr; the database files are the user's alone.
- `checkpoint forget` removes a session (its text is gone from the file) and keeps it out of later
  scans; `--undo` reads it in again.
- A session whose transcript Claude Code deletes soon is flagged in status and extracted first.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import stat
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.support import secrets_corpus, synth
from tests.support.cli_run import cli_env, query, run
from tests.support.fake_anthropic import FakeAnthropic

API_KEY = "sk-ant-" + "privacy-test-key-" + "9d41c7e2b8"  # the fake accepts any key; this one must never show
CLAUDE_ID = "c1a0de00-0000-4000-8000-00000000000a"
CODEX_ID = "c0de0000-0000-4000-8000-00000000000b"


def _tool_records(session_id: str, cwd: str, secrets: list[secrets_corpus.Secret]) -> Iterator[dict[str, Any]]:
    """A Bash tool call carrying a secret in its command and a tool result printing another."""
    env = {"sessionId": session_id, "cwd": cwd, "version": "2.1.50"}
    for i in range(0, len(secrets) - 1, 2):
        call, output = secrets[i], secrets[i + 1]
        yield {**env, "type": "assistant", "uuid": f"{session_id[:8]}-tool-{i}", "timestamp": "2026-01-06T10:00:00Z",
               "message": {"id": f"msg_tool_{i}", "role": "assistant", "model": "claude-x", "content": [
                   {"type": "tool_use", "id": f"toolu_p{i}", "name": "Bash",
                    "input": {"command": f"cat >> notes.txt <<'EOF'\n{call.text}\nEOF"}}]}}
        yield {**env, "type": "user", "uuid": f"{session_id[:8]}-result-{i}", "timestamp": "2026-01-06T10:00:01Z",
               "message": {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": f"toolu_p{i}", "content": output.text}]}}


def _plan(secrets: list[secrets_corpus.Secret], rng: random.Random) -> list[synth.SynthTurn]:
    turns = []
    for i, secret in enumerate(secrets):
        marker = f"marker-{rng.getrandbits(48):012x}" if i % 4 == 1 else None
        text = (f"We'll use {marker} for the vault layer.\n" if marker else "") + secret.text
        turns.append(synth.SynthTurn("user" if i % 2 == 0 else "assistant", text, [], marker))
    return turns


def write_sessions(root: Path, seed: int = 0) -> tuple[list[secrets_corpus.Secret], dict[str, set[str]]]:
    """Both sessions; returns every planted secret and the decision markers per session."""
    rng = random.Random(seed)
    corpus = secrets_corpus.corpus(seed=seed, per_type=2)
    rng.shuffle(corpus)
    third = len(corpus) // 3
    in_claude, in_tools, in_codex = corpus[:third], corpus[third:2 * third], corpus[2 * third:]
    # The first prompt titles the session: it holds a secret too.
    title = secrets_corpus.Secret("aws_access_key", key := secrets_corpus.aws_access_key(rng),
                                  f"Deploy the bucket with {key} and report back")
    in_claude = [title, *in_claude]
    claude_plan, codex_plan = _plan(in_claude, rng), _plan(in_codex, rng)
    claude_path = root / "claude" / "projects" / "-home-dev-vault" / f"{CLAUDE_ID}.jsonl"
    codex_path = root / "codex" / "sessions" / "2026" / "01" / "06" / f"rollout-2026-01-06T10-00-00-{CODEX_ID}.jsonl"
    for path in (claude_path, codex_path):
        path.parent.mkdir(parents=True, exist_ok=True)
    records = [*synth.claude_lines(CLAUDE_ID, claude_plan, "/home/dev/vault", rng),
               *_tool_records(CLAUDE_ID, "/home/dev/vault", in_tools)]
    claude_path.write_bytes(b"".join(synth.dumps(r) for r in records))
    codex_path.write_bytes(b"".join(synth.dumps(r) for r in synth.codex_lines(CODEX_ID, codex_plan, "/home/dev/vc")))
    markers = {CLAUDE_ID: {t.marker for t in claude_plan if t.marker},
               CODEX_ID: {t.marker for t in codex_plan if t.marker}}
    return [title, *corpus], markers


def _env(home: Path, fake: FakeAnthropic, **extra: str) -> dict[str, str]:
    return cli_env(home, ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY=API_KEY, **extra)


def _args(root: Path, db: Path, *args: str) -> list[str]:
    return [*args, "--db", str(db), "--source", str(root / "claude" / "projects"),
            "--source", str(root / "codex" / "sessions"), "--chunk-tokens", "1500"]


def _files(db: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()}


def test_no_secret_reaches_the_api_or_the_database(tmp_path: Path) -> None:
    home, root, db = tmp_path / "home", tmp_path / "t", tmp_path / "data" / "checkpoint.db"
    home.mkdir()
    secrets, markers = write_sessions(root)
    with FakeAnthropic() as fake:
        env = _env(home, fake)
        first = run(_args(root, db, "scan"), env).check()
        assert "Redacted before storing:" in first.out
        # A reader holds the database open, so the WAL the run writes stays on disk to be searched.
        reader = sqlite3.connect(db)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM turns").fetchone()
        result = run(_args(root, db, "now"), env).check()
        files = _files(db)
        reader.rollback()
        reader.close()
        bodies = [json.dumps(r.body) for r in fake.requests if r.body is not None]
    assert "Extracted" in result.out and "captured, 0 failed" in result.out
    assert len(fake.message_requests) >= 3 and len(bodies) >= len(fake.message_requests)
    assert files.get("checkpoint.db-wal"), "the WAL was not kept for the search"
    leaks: Counter[str] = Counter()
    for secret in secrets:
        needle = secret.value
        if any(needle in body or json.dumps(needle)[1:-1] in body for body in bodies):
            leaks[f"api:{secret.kind}"] += 1
        raw = needle.encode()
        if any(raw in data for data in files.values()):
            leaks[f"db:{secret.kind}"] += 1
    assert not leaks, leaks
    for name, data in files.items():
        assert API_KEY.encode() not in data, name
    for stream in (first.out, first.err, result.out, result.err):
        assert API_KEY not in stream

    # What was found is counted per type; the captured decisions are all there.
    status = run(_args(root, db, "status", "--json"), env).check().json()
    redacted = status["redacted"]
    assert sum(redacted.values()) >= len(secrets)
    for kind in ("aws_access_key", "github_token", "anthropic_api_key", "openai_api_key", "slack_token", "jwt",
                 "private_key", "password_in_url", "private", "env_assignment", "gitlab_token"):
        assert redacted.get(kind), (kind, redacted)
    assert {s["id"]: sum(s["redacted"].values()) > 0 for s in status["sessions"]} == {CLAUDE_ID: True, CODEX_ID: True}
    title = query(db, "SELECT title FROM sessions WHERE id = ?", CLAUDE_ID)[0][0]
    assert title == "Deploy the bucket with [REDACTED:aws_access_key] and report back"
    human = run(_args(root, db, "status"), env).check().out
    assert "Redacted before storing:" in human and "aws_access_key" in human
    items = run(_args(root, db, "items", "--json"), env).check().json()["items"]
    found = {(i["session_id"], w) for i in items for w in i["statement"].replace(".", " ").split()
             if w.startswith("marker-")}
    assert found == {(sid, m) for sid, ms in markers.items() for m in ms}

    # Readable by the user only: the directory, the database and its WAL and shared-memory files.
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    reader = sqlite3.connect(db)  # keeps -wal and -shm on disk while their modes are read
    try:
        reader.execute("SELECT count(*) FROM turns").fetchone()
        run(_args(root, db, "scan"), env).check()
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            assert path.exists() and stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        reader.close()


def test_rows_stored_before_redaction_are_redacted_before_they_are_sent(tmp_path: Path) -> None:
    home, root, db = tmp_path / "home", tmp_path / "t", tmp_path / "checkpoint.db"
    home.mkdir()
    secrets, _ = write_sessions(root, seed=4)
    with FakeAnthropic() as fake:
        run(_args(root, db, "scan"), _env(home, fake, CHECKPOINT_REDACT="0")).check()
        stored = b"".join(_files(db).values())
        assert sum(s.value.encode() in stored for s in secrets) > len(secrets) // 2  # stored as they were
        result = run(_args(root, db, "now", "--json"), _env(home, fake)).check()
        bodies = [json.dumps(r.body) for r in fake.requests if r.body is not None]
    report = result.json()["run"]
    assert report["failed"] == 0 and report["captured"] == report["tried"] > 0
    assert sum(report["redacted"].values()) >= len(secrets)
    assert not [s.kind for s in secrets if any(s.value in b or json.dumps(s.value)[1:-1] in b for b in bodies)]


def _session_bytes_present(db: Path, needles: list[bytes]) -> int:
    data = b"".join(_files(db).values())
    return sum(n in data for n in needles)


def test_forget_removes_a_session_and_keeps_it_out(tmp_path: Path) -> None:
    home, root, db = tmp_path / "home", tmp_path / "t", tmp_path / "checkpoint.db"
    home.mkdir()
    _, markers = write_sessions(root, seed=9)
    env = cli_env(home)
    run(_args(root, db, "now"), env).check()
    needles = [m.encode() for m in markers[CLAUDE_ID]] + [CLAUDE_ID.encode()]
    assert _session_bytes_present(db, needles) == len(needles)
    before = query(db, "SELECT count(*) FROM turns WHERE session_id = ?", CODEX_ID)[0][0]

    ambiguous = run(_args(root, db, "forget", "c"), env)
    assert ambiguous.rc == 2 and "names 2 sessions" in ambiguous.err
    result = run(_args(root, db, "forget", CLAUDE_ID[:8], "--json"), env).check()
    removed = result.json()["removed"]
    assert removed["turns"] > 0 and removed["items"] > 0 and removed["chunks"] > 0 and removed["files"] == 1
    for table, column in (("turns", "session_id"), ("chunks", "session_id"), ("items", "session_id"),
                          ("drops", "session_id"), ("problems", "session_id"), ("session_usage", "session_id"),
                          ("redactions", "session_id"), ("files", "session_id"), ("sessions", "id"),
                          ("item_aliases", "session_id")):
        assert query(db, f"SELECT count(*) FROM {table} WHERE {column} = ?", CLAUDE_ID)[0][0] == 0, table
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    # Only the session's id stays, in the table of forgotten sessions; its text is gone from the file.
    assert _session_bytes_present(db, needles[:-1]) == 0
    assert query(db, "SELECT count(*) FROM turns WHERE session_id = ?", CODEX_ID)[0][0] == before

    # Not read in again, not even when its transcript grows.
    transcript = next((root / "claude" / "projects").rglob(f"{CLAUDE_ID}.jsonl"))
    with transcript.open("ab") as fh:
        fh.write(synth.dumps({"type": "user", "uuid": "late-1", "sessionId": CLAUDE_ID,
                              "timestamp": "2026-01-07T00:00:00Z",
                              "message": {"role": "user", "content": "We'll use marker-late for later."}}))
    scan = run(_args(root, db, "scan", "--json"), env).check().json()
    assert scan["scan"]["turns_added"] == 0
    status = run(_args(root, db, "status", "--json"), env).check().json()
    assert [s["id"] for s in status["sessions"]] == [CODEX_ID]
    assert [f["session_id"] for f in status["forgotten"]] == [CLAUDE_ID]
    assert "Forgotten on request" in run(_args(root, db, "status"), env).check().out

    undo = run(_args(root, db, "forget", "--undo", CLAUDE_ID[:8]), env).check()
    assert "no longer forgotten" in undo.out
    again = run(_args(root, db, "scan", "--json"), env).check().json()
    assert again["scan"]["turns_added"] == removed["turns"] + 1
    assert run(_args(root, db, "forget", "nosuch"), env).rc == 2


def test_a_session_about_to_be_deleted_is_flagged_and_extracted_first(tmp_path: Path) -> None:
    home, db = tmp_path / "home", tmp_path / "checkpoint.db"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 10}))
    corpus = synth.write_corpus(tmp_path / "t", sessions=2, turns=40, chars=30_000, seed=3, codex_share=0.0)
    ids = sorted(corpus.turns)
    old_id, fresh_id = ids[-1], ids[0]  # the one at risk sorts last: claimed first all the same
    old = next(corpus.claude_root.rglob(f"{old_id}.jsonl"))
    now = time.time()
    os.utime(old, (now - 7.5 * 86400, now - 7.5 * 86400))
    env = cli_env(home)
    args = ["--db", str(db), "--source", str(corpus.claude_root), "--chunk-tokens", "2000"]
    run(["scan", *args], env).check()
    status = run(["status", "--json", *args], env).check().json()
    by_id = {s["id"]: s for s in status["sessions"]}
    assert by_id[old_id]["at_risk"] is True and by_id[old_id]["deletes_in_days"] == 2
    assert by_id[fresh_id]["at_risk"] is False and by_id[fresh_id]["deletes_in_days"] == 9
    human = run(["status", *args], env).check().out
    assert "At risk: 1 session" in human and "deletes this transcript in 2 days" in human

    run(["now", "--extractor", "heuristic", "--max-requests", "2", *args], env).check()
    status = run(["status", "--json", *args], env).check().json()
    by_id = {s["id"]: s for s in status["sessions"]}
    assert by_id[old_id]["captured"] > 0 and by_id[fresh_id]["captured"] == 0
    # Without pending turns it is no longer at risk, only counted down.
    run(["now", "--extractor", "heuristic", *args], env).check()
    by_id = {s["id"]: s for s in run(["status", "--json", *args], env).check().json()["sessions"]}
    assert by_id[old_id]["at_risk"] is False and by_id[old_id]["deletes_in_days"] == 2


@pytest.mark.parametrize("days", [None, "bad", 0])
def test_cleanup_period_falls_back_to_claude_codes_default(tmp_path: Path, days: object) -> None:
    from checkpoint import config

    home = Path(os.environ["HOME"])
    if days is not None:
        (home / ".claude").mkdir(parents=True, exist_ok=True)
        (home / ".claude" / "settings.json").write_text(json.dumps({"cleanupPeriodDays": days}))
    assert config.claude_cleanup_days() == 30


def test_the_daemons_status_and_schedule_carry_the_risk(settings: Any, roots: tuple[Path, Path]) -> None:
    """checkpoint/status and checkpoint/sessions are built from the status read model: each session says
    at_risk and deletes_in_days (and what was redacted); background runs take the sessions at risk
    first."""
    from checkpoint import pipeline
    from checkpoint.server.features.extraction import candidates
    from checkpoint.server.features.status import snapshot
    from checkpoint.server.folders import Folders
    from checkpoint.server.requests.sessions import list_sessions
    from checkpoint.server.settings import AutoExtraction
    from checkpoint.store import Store

    corpus = synth.write_corpus(roots[0].parent.parent / "t", sessions=3, turns=20, chars=8_000, seed=5,
                                codex_share=0.0)
    ids = sorted(corpus.turns)
    now = time.time()
    at_risk = ids[-1]
    path = next(corpus.claude_root.rglob(f"{at_risk}.jsonl"))
    os.utime(path, (now - 27 * 86400, now - 27 * 86400))
    store = Store(settings.db)
    try:
        pipeline.scan(store, replace(settings, sources=[corpus.claude_root]))
        out, _ = snapshot(store, Folders([]), "all")
        listed = list_sessions(store, Folders([]), {}, "all")
        by_id = {s["id"]: s for s in listed["sessions"]}
        assert by_id[at_risk]["at_risk"] is True and by_id[at_risk]["deletes_in_days"] == 2
        assert all(not by_id[i]["at_risk"] and by_id[i]["deletes_in_days"] == 29 for i in ids[:-1])
        assert "redacted" in by_id[at_risk] and out["redacted"] == {}
        order = candidates(store, Folders([]), "all", AutoExtraction(), now + 3600)
        assert order[0] == at_risk and sorted(order) == ids
    finally:
        store.close()
