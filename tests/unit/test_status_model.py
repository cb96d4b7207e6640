"""The status read model: a repository's decision records that cannot be read are told apart from
the transcripts' problems (both stay in `problems`, the contract of `status --json`)."""

from __future__ import annotations

from checkpoint.model import StoredProblem
from checkpoint.status_model import Status, is_team_session

RECORD = StoredProblem("/r/docs/decisions/a.md", 4, "id: expected Checkpoint's item id", "team:/r/.git")
TRANSCRIPT = StoredProblem("/h/.claude/projects/p/s.jsonl", 9, "not JSON", "s1")
UNOWNED = StoredProblem("/h/.claude/projects/p/notes.txt", 0, "not a transcript", None)


def test_record_problems_are_those_of_a_team_session() -> None:
    status = Status(sessions=(), problems=(TRANSCRIPT, RECORD, UNOWNED), forgotten=())
    assert status.record_problems == (RECORD,)
    assert status.transcript_problems == (TRANSCRIPT, UNOWNED)
    assert status.as_dict()["problems"] == [TRANSCRIPT.as_json(), RECORD.as_json(), UNOWNED.as_json()]
    assert [is_team_session(s) for s in ("team:/r/.git", "s1", None, "teams")] == [True, False, False, False]
