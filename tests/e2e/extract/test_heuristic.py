"""The offline extractor end to end through the real `checkpoint` process (no network, temp HOME):
a decision, its restatement behind a lead-in in a later session, and its reversal in a third, all in one
workspace. The restatement merges into the first item; the reversal becomes one current item that
supersedes it, the old one kept and marked; nothing else is made of either."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli_run import cli_env, run

CWD = "/home/dev/shop"
SESSIONS = (
    ("5e550001-0000-4000-8000-000000000001", [("user", "We decided to use Redis for the invoice cache.")]),
    ("5e550002-0000-4000-8000-000000000002", [("user", "Reminder: we decided to use Redis for the invoice cache.")]),
    ("5e550003-0000-4000-8000-000000000003", [
        ("user", "Change of plan: we switch from Redis to Memcached for the invoice cache. "
                 "Redis is no longer used for the invoice cache."),
        ("assistant", "Done: the invoice cache now uses Memcached instead of Redis."),
    ]),
)


def _write_session(projects: Path, number: int, session_id: str, turns: list[tuple[str, str]]) -> None:
    records: list[dict[str, Any]] = []
    parent = None
    for n, (role, text) in enumerate(turns):
        uid = f"{session_id[:-4]}{n:04d}"
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        message: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            message |= {"id": f"msg_{number}_{n}", "type": "message", "model": "claude-x", "stop_reason": "end_turn"}
        records.append({
            "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": CWD, "sessionId": session_id,
            "version": "2.1.50", "type": role, "message": message, "uuid": uid,
            "timestamp": f"2026-01-0{number}T10:00:{n:02d}.000Z",
        })
        parent = uid
    path = projects / "-home-dev-shop" / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_restatement_merges_and_a_reversal_supersedes_across_three_sessions(tmp_path: Path) -> None:
    projects = tmp_path / "home" / ".claude" / "projects"
    env = cli_env(tmp_path / "home")
    args = ["--db", str(tmp_path / "checkpoint.db"), "--source", str(projects)]
    for number, (session_id, turns) in enumerate(SESSIONS, start=1):
        # One session after another, each captured before the next is written, as the hooks do.
        _write_session(projects, number, session_id, turns)
        run(["now", "--json", "--extractor", "heuristic", *args], env).check()

    current = run(["items", "--json", *args], env).check().json()["items"]
    every = run(["items", "--all", "--json", *args], env).check().json()["items"]

    assert [(i["kind"], i["statement"], i["session_id"], i["superseded_by"]) for i in current] == [
        ("decision", "We switch from Redis to Memcached for the invoice cache.", SESSIONS[2][0], None)
    ]
    memcached = current[0]
    old = [i for i in every if i["id"] != memcached["id"]]
    assert [(i["kind"], i["statement"], i["session_id"], i["superseded_by"]) for i in old] == [
        ("decision", "We decided to use Redis for the invoice cache.", SESSIONS[0][0], memcached["id"])
    ]
    # The restatement of session 2 is cited on the first item, not made a second one; the reversal's
    # restatements (the user's "no longer used", the agent's "Done: ... instead of Redis") on the new one.
    assert len(old[0]["turn_ids"]) == 2
    assert len(memcached["turn_ids"]) == 2
    assert memcached["supersedes"] == [old[0]["id"]]
