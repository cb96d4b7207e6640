"""Answers that arrive but must not count as captured, end to end through the real `checkpoint now`
against the fake Anthropic API, on a real SQLite file:

- an answer whose items all cite turns outside the chunk: nothing of it is about the chunk, so the
  chunk fails with that cause and is retried, never committed as captured with zero items. An answer
  with no items at all is a valid capture; an answer with some foreign items keeps the others, and
  says how many it dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_run import query
from fakes.fake_anthropic import FakeAnthropic, MessageRequest, parse_turns, planted_decisions
from test_bad_input import SESSION
from test_hostile_answers import claude_home, marker, turn_id


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def planted_decisions_of(request: MessageRequest) -> list[dict[str, Any]]:
    return planted_decisions(request.prompt)


def test_an_answer_citing_only_turns_outside_its_chunk_is_not_captured(tmp_path: Path, fake: FakeAnthropic) -> None:
    long = " filler" * 300  # one turn per chunk
    h = claude_home(tmp_path, fake, [f"We'll use {marker(n)} for the parser layer.{long}" for n in range(1, 5)])
    h.env["CHECKPOINT_CHUNK_TOKENS"] = "1000"
    db = h.home / ".local" / "share" / "checkpoint" / "checkpoint.db"

    def responder(request: MessageRequest) -> list[dict[str, Any]]:
        [turn] = parse_turns(request.prompt)
        n = int(turn.turn_id[-2:])
        if n == 1:  # one item about another chunk's turn next to a good one: the good one is kept
            return [*planted_decisions(request.prompt),
                    {"kind": "decision", "statement": "about turn 4", "turn_ids": [turn_id(4)]}]
        if n == 2:  # every item about turns outside the chunk: no answer about this chunk at all
            return [{"kind": "decision", "statement": "about turn 1", "turn_ids": [turn_id(1)]},
                    {"kind": "constraint", "statement": "about nothing", "turn_ids": ["turn-from-nowhere"]}]
        if n == 3:  # nothing worth keeping in this chunk: a valid answer
            return []
        return planted_decisions(request.prompt)

    fake.responder = responder
    now = h.cli("now").check(rc=1)

    assert "4 chunks with the anthropic extractor: 3 captured, 1 failed" in now.out, now.out
    assert "Dropped 1 item citing no turn of the chunk it was extracted from" in now.out, now.out
    [(chunk_2, state, cause, attempts)] = query(
        db, "SELECT c.id, c.state, c.cause, c.attempts FROM chunks c JOIN turns t ON t.session_id = c.session_id"
            " AND t.seq BETWEEN c.first_seq AND c.last_seq WHERE t.id = ?", turn_id(2))
    assert (state, attempts) == ("failed", 1)
    assert cause == "the answer cited only turns outside this chunk (2 items rejected)"
    assert f"failed: session {SESSION} chunk {chunk_2}: {cause}" in now.out, now.out
    totals = h.status()["totals"]
    assert (totals["captured"], totals["failed"], totals["pending"]) == (3, 1, 0)
    assert h.markers() == [marker(1), marker(4)]

    # Retried like any failed answer: the next run sends it again and captures it.
    fake.responder = planted_decisions_of
    run = h.cli("now", "--json").check().json()["run"]
    assert (run["tried"], run["captured"], run["failed"], run["items_rejected"]) == (1, 1, 0, 0)
    assert h.status()["totals"] == {"turns": 4, "captured": 4, "pending": 0, "failed": 0}
    assert h.markers() == [marker(1), marker(2), marker(4)]
