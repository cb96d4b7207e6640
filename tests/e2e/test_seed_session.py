"""The seed failure, end to end: a session of 1,357 turns and ~1.31M characters (the one that was
half-remembered), in both formats, through the real `checkpoint` process under a small chunk budget.

Every turn must be captured, none lost, none duplicated; every planted decision must come out exactly
once, although Claude Code restates markers in compaction summaries and copies messages into progress
lines, and Codex copies every message into an event_msg; a second run must add and send nothing.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.support import synth
from tests.support.cli_run import cli_env, item_markers, query, run

SEED_TURNS = 1357
SEED_CHARS = 1_310_000
CHUNK_TOKENS = 2000
CLAUDE_ID = "5eed0000-1357-4131-8000-000000000001"
CODEX_ID = "5eed0000-1357-4131-8000-000000000002"


def _write(path: Path, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    records = list(records)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(synth.dumps(r) for r in records))
    return records


def _claude_turn_lines(records: list[dict[str, Any]]) -> int:
    """Lines that hold a turn: every prompt, assistant block and tool result; not progress copies,
    compaction summaries, or bookkeeping."""
    return sum(1 for r in records if r["type"] in ("user", "assistant") and not r.get("isCompactSummary"))


def _codex_turn_lines(records: list[dict[str, Any]]) -> int:
    """response_item messages and applied patches; not the event_msg copies of messages."""
    return sum(
        1 for r in records
        if (r["type"] == "response_item" and r["payload"]["type"] == "message")
        or (r["type"] == "event_msg" and r["payload"]["type"] == "patch_apply_end")
    )


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("seed")
    rng = random.Random(1357)
    claude_plan = synth.plan_session(rng, SEED_TURNS, SEED_CHARS, "/home/dev/seed")
    codex_plan = synth.plan_session(rng, SEED_TURNS, SEED_CHARS, "/home/dev/seed-codex")
    claude_root, codex_root = tmp / "claude" / "projects", tmp / "codex" / "sessions"
    claude_records = _write(
        claude_root / "-home-dev-seed" / f"{CLAUDE_ID}.jsonl",
        synth.claude_lines(CLAUDE_ID, claude_plan, "/home/dev/seed", rng),
    )
    codex_records = _write(
        codex_root / "2026" / "01" / "05" / f"rollout-2026-01-05T10-00-00-{CODEX_ID}.jsonl",
        synth.codex_lines(CODEX_ID, codex_plan, "/home/dev/seed-codex"),
    )
    db = tmp / "db" / "checkpoint.db"
    env = cli_env(tmp / "home")
    args = ["--db", str(db), "--source", str(claude_root), "--source", str(codex_root),
            "--chunk-tokens", str(CHUNK_TOKENS)]
    first = run(["now", "--json", *args], env).check()
    second = run(["now", "--json", *args], env).check()
    print(f"\nseed session: first `checkpoint now` {first.seconds:.2f}s, second {second.seconds:.2f}s")
    return {
        "db": db, "env": env, "args": args, "first": first.json(), "second": second.json(),
        "plans": {CLAUDE_ID: claude_plan, CODEX_ID: codex_plan},
        "expected_turns": {CLAUDE_ID: _claude_turn_lines(claude_records), CODEX_ID: _codex_turn_lines(codex_records)},
        "summaries": sum(1 for r in claude_records if r.get("isCompactSummary")),
        "progress_copies": sum(1 for r in claude_records if r["type"] == "progress"),
        "event_copies": sum(
            1 for r in codex_records
            if r["type"] == "event_msg" and r["payload"]["type"] in ("user_message", "agent_message")
        ),
        "summary_markers": {
            w for r in claude_records if r.get("isCompactSummary") for w in r["message"]["content"].split()
            if w.startswith("marker-")
        },
        "status": run(["status", "--json", *args], env).check().json(),
        "items": run(["items", "--json", *args], env).check().json()["items"],
    }


def test_the_generated_session_is_seed_sized(seed: dict[str, Any]) -> None:
    for plan in seed["plans"].values():
        assert len(plan) == SEED_TURNS
        assert 1_250_000 <= sum(len(t.text) for t in plan) <= 1_370_000
    # The budget is small enough for hundreds of chunks, and some turns do not fit one chunk.
    for session_id in seed["plans"]:
        chunks = query(seed["db"], "SELECT count(*) FROM chunks WHERE session_id = ?", session_id)[0][0]
        split = query(seed["db"], "SELECT count(DISTINCT first_seq) FROM chunks WHERE session_id = ? AND parts > 1",
                      session_id)[0][0]
        assert chunks >= 300, session_id
        assert split >= 1, session_id


def test_every_turn_is_captured_and_nothing_is_pending(seed: dict[str, Any]) -> None:
    first = seed["first"]
    assert first["run"]["failed"] == 0 and first["run"]["stopped_by"] is None
    assert first["run"]["tried"] == first["run"]["captured"] == first["scan"]["chunks_created"]
    expected_total = sum(seed["expected_turns"].values())
    assert first["scan"]["turns_added"] == expected_total
    status = seed["status"]
    assert status["totals"] == {"turns": expected_total, "captured": expected_total, "pending": 0, "failed": 0}
    by_id = {s["id"]: s for s in status["sessions"]}
    assert set(by_id) == set(seed["plans"])
    for session_id, turns in seed["expected_turns"].items():
        s = by_id[session_id]
        assert (s["turns"], s["captured"], s["pending"], s["failed"]) == (turns, turns, 0, 0)
        assert s["watermark"] == turns
    assert status["problems"] == []


def test_no_turn_is_lost_or_duplicated(seed: dict[str, Any]) -> None:
    """The text of every planned turn is stored exactly once, in its session: the store holds the
    same multiset of spoken texts as the plan (tool calls and thinking aside)."""
    for session_id, plan in seed["plans"].items():
        stored = Counter(
            text for (text,) in query(
                seed["db"], "SELECT text FROM turns WHERE session_id = ? AND role IN ('user', 'assistant')"
                " AND text NOT LIKE '(thinking) %'", session_id,
            )
        )
        assert stored == Counter(t.text for t in plan), session_id
        seqs = [s for (s,) in query(seed["db"], "SELECT seq FROM turns WHERE session_id = ? ORDER BY seq", session_id)]
        assert seqs == list(range(1, len(seqs) + 1))


def test_every_planted_decision_is_captured_exactly_once(seed: dict[str, Any]) -> None:
    found = item_markers(seed["items"])
    for session_id, plan in seed["plans"].items():
        planted = [t.marker for t in plan if t.marker]
        assert len(planted) == len(set(planted)) > 150
        mine = Counter(m for sid, kind, m in found if sid == session_id and kind == "decision")
        assert mine == Counter(planted), session_id
    # Nothing but the planted decisions mentions a marker (no second item from a restatement).
    assert len(found) == sum(len([t for t in p if t.marker]) for p in seed["plans"].values())


def test_copies_the_formats_hold_are_dropped_by_policy_not_captured_twice(seed: dict[str, Any]) -> None:
    by_id = {s["id"]: s for s in seed["status"]["sessions"]}
    claude, codex = by_id[CLAUDE_ID]["dropped"], by_id[CODEX_ID]["dropped"]
    # The compaction summaries restate markers; they are counted under their policy...
    assert seed["summaries"] >= 5 and seed["summary_markers"]
    assert claude["compaction_summary"]["records"] == seed["summaries"]
    assert claude["progress_copy"]["records"] == seed["progress_copies"] > 0
    assert codex["event_copy"]["records"] == seed["event_copies"] > 0
    # ...and every restated marker is still one item, from the turn that said it.
    restated = [m for sid, _, m in item_markers(seed["items"]) if sid == CLAUDE_ID and m in seed["summary_markers"]]
    assert sorted(restated) == sorted(seed["summary_markers"])
    statements = {i["statement"] for i in seed["items"]}
    assert not any(s.endswith(" here.") for s in statements)


def test_a_second_run_adds_nothing_and_sends_nothing(seed: dict[str, Any]) -> None:
    second = seed["second"]
    assert second["scan"]["turns_added"] == 0
    assert second["scan"]["chunks_created"] == 0
    assert second["scan"]["files_read"] == 0
    assert (second["run"]["tried"], second["run"]["items_added"]) == (0, 0)
    assert second["totals"] == seed["status"]["totals"]
    runs = query(seed["db"], "SELECT chunks_tried, requests FROM runs ORDER BY id")
    assert [r[0] for r in runs] == [seed["first"]["run"]["tried"], 0]
