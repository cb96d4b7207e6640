"""Answers that arrive but must not count as captured, end to end through the real `checkpoint now`
against the fake Anthropic API, on a real SQLite file:

- a run that stalls past its lease (a laptop asleep, a stopped process) while another worker takes
  its chunk over: its late answer is refused, and the run must not report success for that chunk;
- an answer whose items all cite turns outside the chunk (which once failed the chunk, again at
  every retry): the model found them in this chunk, so the chunk is captured with its items, each
  attributed to the chunk's turns and marked so (`cited: chunk`), and the run says how many. An
  answer with no items at all is a valid capture too.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checkpoint.store import Store
from tests.support.cli_home import SESSION
from tests.support.cli_run import query, start
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest, parse_turns, planted_decisions
from tests.support.fake_api_home import claude_home, marker, turn_id

LEASE_SECONDS = 0.5


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def planted_decisions_of(request: MessageRequest) -> list[dict[str, Any]]:
    return planted_decisions(request.prompt)


def _take_over(db: Path, owner: str) -> list[int]:
    """Another worker leases every due chunk. A write lock held by the stopped run (it may stop inside a
    lease renewal) is waited out briefly, never for the store's whole busy timeout."""
    other = Store(db)
    try:
        other.conn.execute("PRAGMA busy_timeout = 100")
        return [c.chunk_id for c in other.claim_chunks(100, owner, lease_seconds=LEASE_SECONDS)]
    finally:
        other.close()


def test_a_chunk_taken_over_by_another_worker_is_not_reported_captured(tmp_path: Path, fake: FakeAnthropic) -> None:
    h = claude_home(tmp_path, fake, [f"We'll use {marker(n)} for the parser layer." for n in (1, 2)])  # one chunk
    db = tmp_path / "db" / "checkpoint.db"
    h.env.update(CHECKPOINT_DB=str(db), CHECKPOINT_CONCURRENCY="1", CHECKPOINT_LEASE_SECONDS=str(LEASE_SECONDS))
    proc: subprocess.Popen[bytes] | None = None
    taken: list[int] = []

    def responder(request: MessageRequest) -> list[dict[str, Any]]:
        """The run's process stops while its request is in flight and stays stopped past its lease;
        meanwhile another worker takes the chunk over. Then the process goes on and gets its answer."""
        assert proc is not None
        for _ in range(20):
            if taken:
                break
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                time.sleep(2 * LEASE_SECONDS)
                taken.extend(_take_over(db, "another-worker"))
            except sqlite3.OperationalError as exc:
                assert "locked" in str(exc)
            finally:
                os.kill(proc.pid, signal.SIGCONT)
            time.sleep(0.05)
        return planted_decisions(request.prompt)

    fake.responder = responder
    out, err = tmp_path / "now.out", tmp_path / "now.err"
    proc = start(["now"], h.env, out, err)
    rc = proc.wait(120)
    said = out.read_text()

    assert taken, "the other worker took no chunk over"
    [chunk_id] = [r[0] for r in query(db, "SELECT id FROM chunks")]
    assert taken == [chunk_id]
    assert rc == 1, f"`checkpoint now` reported success for a chunk it did not capture:\n{said}{err.read_text()}"
    assert "0 captured, 0 failed, 1 not captured" in said, said
    assert f"not captured: session {SESSION} chunk {chunk_id}: lease lost" in said, said
    assert "another worker took this chunk over" in said, said
    # The answer was refused: nothing of it is stored, and the chunk is the other worker's, not failed.
    assert query(db, "SELECT count(*) FROM items") == [(0,)]
    assert query(db, "SELECT state, lease_owner FROM chunks") == [("sent", "another-worker")]
    assert query(db, "SELECT chunks_tried, chunks_captured, chunks_failed, chunks_lost FROM runs") == [(1, 0, 0, 1)]

    # The other worker never answers (it died); once its lease expires, the next run captures the chunk.
    fake.responder = planted_decisions_of
    time.sleep(2 * LEASE_SECONDS)
    run = h.cli("now", "--json").check().json()["run"]
    assert (run["captured"], run["failed"], run["lost"]) == (1, 0, 0)
    assert h.markers() == [marker(1), marker(2)]


def test_an_answer_citing_only_turns_outside_its_chunk_is_captured_with_its_items_attributed(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    long = " filler" * 300  # one turn per chunk
    h = claude_home(tmp_path, fake, [f"We'll use {marker(n)} for the parser layer.{long}" for n in range(1, 5)])
    h.env["CHECKPOINT_CHUNK_TOKENS"] = "1000"
    db = h.home / ".local" / "share" / "checkpoint" / "checkpoint.db"

    def responder(request: MessageRequest) -> list[dict[str, Any]]:
        [turn] = parse_turns(request.prompt)
        n = next(k for k in range(1, 5) if marker(k) in turn.text)  # the turns' labels are all t1
        if n == 1:  # one item about another chunk's turn next to a good one: both kept
            return [*planted_decisions(request.prompt),
                    {"kind": "decision", "statement": "about turn 4", "turn_ids": [turn_id(4)]}]
        if n == 2:  # every item about turns outside the chunk: the old code failed this chunk forever
            return [{"kind": "decision", "statement": "about turn 1", "turn_ids": [turn_id(1)]},
                    {"kind": "constraint", "statement": "about nothing", "turn_ids": ["turn-from-nowhere"]}]
        if n == 3:  # nothing worth keeping in this chunk: a valid answer
            return []
        return planted_decisions(request.prompt)

    fake.responder = responder
    now = h.cli("now").check()

    assert "4 chunks with the anthropic extractor: 4 captured, 0 failed; 5 new items" in now.out, now.out
    assert "3 items cited no turn of their chunk: attributed to the chunk." in now.out, now.out
    assert query(db, "SELECT count(*) FROM chunks WHERE state != 'captured'") == [(0,)]
    assert query(db, "SELECT items_added, items_attributed FROM runs") == [(5, 3)]
    assert h.status()["totals"] == {"turns": 4, "captured": 4, "pending": 0, "failed": 0}
    assert h.markers() == [marker(1), marker(4)]
    stored = {i["statement"]: i for i in h.cli("items", "--json").check().json()["items"]}
    # Each foreign item is its own chunk's, by the turn the chunk holds; the planted ones cite theirs.
    assert {s: (i["turn_ids"], i["cited"]) for s, i in stored.items() if s.startswith("about")} == {
        "about turn 4": ([turn_id(1)], "chunk"), "about turn 1": ([turn_id(2)], "chunk"),
        "about nothing": ([turn_id(2)], "chunk")}
    assert {i["cited"] for s, i in stored.items() if marker(1) in s or marker(4) in s} == {"turns"}

    # Nothing is left to retry: the next run has nothing to send.
    requests = len(fake.message_requests)
    run = h.cli("now", "--json").check().json()["run"]
    assert (run["tried"], run["captured"], run["failed"], run["items_attributed"]) == (0, 0, 0, 0)
    assert len(fake.message_requests) == requests
