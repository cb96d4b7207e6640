"""Nothing the model says is dropped, end to end: the real `checkpoint` process, the real anthropic
SDK over HTTP against the fake API, a real Claude Code transcript on disk. An item the model gives
without a citation (turn_ids empty, or left out) is kept, attributed to its chunk's user and
assistant turns (not the tool turns), marked `cited: chunk` in `checkpoint items` (text and JSON),
and counted in `checkpoint now` (its sentence, `run.items_attributed` of --json, the stored run).
A later chunk that restates a known item (`same_as`) while citing only another chunk's turn merges
into it: the chunk is captured, no item is added, and the known item keeps its own citation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import cli_env, query, run
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest, known_items, parse_turns
from tests.support.lsp_support import Transcript

MARK = "marker-00c1ab"


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def test_an_uncited_item_is_kept_attributed_marked_and_counted(tmp_path: Path, fake: FakeAnthropic) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    env = cli_env(home, **fake.env(), CHECKPOINT_EXTRACTOR="anthropic")
    db = home / ".local" / "share" / "checkpoint" / "checkpoint.db"
    transcript = Transcript(home / ".claude" / "projects", project)
    transcript.write(transcript.user("Store the queue in SQLite, one file per workspace."))
    transcript.write(transcript.assistant("Agreed: SQLite, and no server process.",
                                          edits=[(project / "queue.py", "jobs = []", "jobs = db()")]))
    assert transcript.turns == 4  # user, assistant, the Edit call and its result (two tool turns)

    def uncited(request: MessageRequest) -> list[dict[str, Any]]:
        assert [t.role for t in parse_turns(request.prompt)] == ["user", "assistant", "tool", "tool"]
        return [
            {"kind": "decision", "statement": f"Store the queue in SQLite ({MARK}).", "turn_ids": []},
            {"kind": "constraint", "statement": "No server process.", "confidence": 0.8},  # no turn_ids at all
        ]

    fake.responder = uncited
    now = run(["now", "--json"], env).check().json()
    assert (now["run"]["captured"], now["run"]["failed"], now["run"]["items_added"]) == (1, 0, 2)
    assert now["run"]["items_attributed"] == 2
    assert now["run"]["sentence"].endswith("2 items cited no turn of their chunk: attributed to the chunk.")
    assert now["totals"] == {"turns": 4, "captured": 4, "pending": 0, "failed": 0}
    assert query(db, "SELECT items_attributed FROM runs") == [(2,)]

    items = run(["items", "--json"], env).check().json()["items"]
    spoken = query(db, "SELECT id FROM turns WHERE role != 'tool' ORDER BY seq")
    assert len(spoken) == 2
    for item in items:
        assert item["cited"] == "chunk"
        assert item["turn_ids"] == [t for (t,) in spoken]  # the chunk's user and assistant turns
        path = str(transcript.path)
        assert [(s["path"], s["line"]) for s in item["sources"]] == [(path, 1), (path, 2)]
    text = run(["items"], env).check().out
    assert text.count("cited no turn: attributed to its chunk") == 2, text

    # A later chunk restates the decision, pointing at the known item and citing its turn, which is
    # another chunk's: a restatement, merged; the chunk is captured, and the item's citation stays.
    [(decision_id, decision_turns)] = query(db, "SELECT id, turn_ids FROM items WHERE kind = 'decision'")

    def restated(request: MessageRequest) -> list[dict[str, Any]]:
        known = known_items(request.prompt)
        return [{"kind": "decision", "statement": "We keep SQLite for the queue.", "turn_ids": [spoken[0][0]],
                 "same_as": known[MARK]}]

    fake.responder = restated
    transcript.write(transcript.user("Still SQLite, yes."))
    again = run(["now", "--json"], env).check().json()["run"]
    assert (again["tried"], again["captured"], again["failed"], again["items_added"]) == (1, 1, 0, 0)
    assert again["items_attributed"] == 1
    assert query(db, "SELECT id, turn_ids, cited FROM items WHERE kind = 'decision'") == [
        (decision_id, decision_turns, "chunk")]
    assert run(["status", "--json"], env).check().json()["totals"]["failed"] == 0
