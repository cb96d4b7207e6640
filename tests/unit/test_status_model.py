"""The status read model: a repository's decision records that cannot be read are told apart from
the transcripts' problems (both stay in `problems`, the contract of `status --json`)."""

from __future__ import annotations

from dataclasses import replace

from checkpoint.model import SessionCounts, StoredProblem
from checkpoint.status_counts import CountsCache
from checkpoint.status_model import Status, is_team_session, with_risk

RECORD = StoredProblem("/r/docs/decisions/a.md", 4, "id: expected Checkpoint's item id", "team:/r/.git")
TRANSCRIPT = StoredProblem("/h/.claude/projects/p/s.jsonl", 9, "not JSON", "s1")
UNOWNED = StoredProblem("/h/.claude/projects/p/notes.txt", 0, "not a transcript", None)


def test_record_problems_are_those_of_a_team_session() -> None:
    status = Status(sessions=(), problems=(TRANSCRIPT, RECORD, UNOWNED), forgotten=())
    assert status.record_problems == (RECORD,)
    assert status.transcript_problems == (TRANSCRIPT, UNOWNED)
    assert status.as_dict()["problems"] == [TRANSCRIPT.as_json(), RECORD.as_json(), UNOWNED.as_json()]
    assert [is_team_session(s) for s in ("team:/r/.git", "s1", None, "teams")] == [True, False, False, False]


def test_risk_kept_between_statuses_equals_risk_worked_out_afresh_as_the_clock_moves() -> None:
    """with_risk(kept=...) works a record out again only when its answer may have changed (its next
    whole day, or the days at risk reached): at every moment it says what a fresh computation says."""
    day = 86_400.0
    start = 1_800_000_000.0
    kept_counts = [SessionCounts(id=f"s{n}", agent="claude", title=None, cwd=None, pending=n % 2,
                                 newest_file_mtime=start - n * 0.7 * day) for n in range(12)]
    kept = CountsCache()
    for step in range(120):
        now = start + step * 0.29 * day
        with_risk(kept_counts, cleanup_days=30, at_risk_days=3, now=now, in_place=True, kept=kept)
        fresh = with_risk([replace(s, at_risk=False, deletes_in_days=None) for s in kept_counts],
                          cleanup_days=30, at_risk_days=3, now=now)
        assert [(s.at_risk, s.deletes_in_days) for s in kept_counts] == [(s.at_risk, s.deletes_in_days) for s in fresh]
    with_risk(kept_counts, cleanup_days=10, at_risk_days=3, now=start, in_place=True, kept=kept)  # another period
    assert [s.deletes_in_days for s in kept_counts] == [
        s.deletes_in_days for s in with_risk(kept_counts, cleanup_days=10, at_risk_days=3, now=start)]
