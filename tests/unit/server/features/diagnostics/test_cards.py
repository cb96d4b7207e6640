"""The hover card of an item: kind and statement, who said it and when in relative time, its state,
and the actions that apply as command links; a line with many items shows MAX_CARDS cards."""

from __future__ import annotations

from checkpoint.model import ORIGIN_SHARED, ItemKind, ItemRecord, ItemSource, ItemState
from checkpoint.server.features.diagnostics.cards import MAX_CARDS, card, cards, relative_time

NOW = 1_790_000_000.0
DAY = 86400.0


def item(n: int = 0, role: str = "user", state: ItemState = ItemState.NEW, **more: object) -> ItemRecord:
    fields: dict[str, object] = dict(
        id=f"a1b2c3d4e5f{n}", session_id="sess-1", kind=ItemKind.DECISION, statement=f"Use SQLite WAL number {n}",
        rationale=None, confidence=0.9, turn_ids=("t1",), files=("/w/app.py",), state=state, extractor="heuristic",
        created_at=NOW - 10 * DAY, session_title="Add a cache", cwd="/w", agent="claude",
        sources=(ItemSource(turn_id="t1", path="/p/s.jsonl", line=3, timestamp="2026-09-18T13:00:00Z", role=role),))
    fields.update(more)
    return ItemRecord(**fields)  # type: ignore[arg-type]


def test_relative_time_reads_as_a_person_says_it() -> None:
    ago = (5, 120, 3 * 3600, DAY + 5, 3 * DAY, 15 * DAY, 70 * DAY, 800 * DAY)
    assert [relative_time(NOW - s, NOW) for s in ago] == [
        "just now", "2 minutes ago", "3 hours ago", "yesterday", "3 days ago", "2 weeks ago", "2 months ago",
        "2 years ago"]
    assert relative_time(NOW + 50, NOW) == "just now"  # a clock ahead of ours is not "in the future"


def test_a_card_says_what_who_when_state_and_actions() -> None:
    said_at = 1_789_736_400.0  # 2026-09-18T13:00:00Z, the turn's time
    text = card(item(), now=said_at + 3 * DAY)
    assert text.split("  \n") == [
        "**Decision** Use SQLite WAL number 0",
        "said by you in a Claude Code session, 3 days ago · new",
        "[Open Turn](command:checkpoint.openTurn?%5B%22a1b2c3d4e5f0%22%5D) · "
        "[Accept](command:checkpoint.acceptItem?%5B%22a1b2c3d4e5f0%22%5D) · "
        "[Dismiss](command:checkpoint.dismissItem?%5B%22a1b2c3d4e5f0%22%5D)"]
    by_agent = card(item(role="assistant", state=ItemState.ACCEPTED), now=said_at + 3 * DAY)
    assert "said by the agent in a Claude Code session, 3 days ago · accepted" in by_agent
    assert "[Accept]" not in by_agent  # actions only where they apply


def test_a_team_record_says_it_was_shared_and_opens_its_record() -> None:
    shared = item(origin=ORIGIN_SHARED, record="docs/decisions/0001-wal.md", agent="team", sources=(),
                  created_at=NOW - 2 * DAY)
    text = card(shared, now=NOW)
    assert "shared in the team's decision records (docs/decisions/0001-wal.md), 2 days ago · new" in text
    assert "[Open Decision Record](command:checkpoint.openRecord?%5B%22a1b2c3d4e5f0%22%5D)" in text
    assert "Open Turn" not in text  # a record has no turn


def test_many_items_on_a_line_are_bounded_held_ones_first() -> None:
    many = [(item(n), None) for n in range(5)] + [(item(9, held=True, statement="Always run curl x | sh"), None)]
    shown = cards(many, now=NOW).split("\n\n---\n\n")
    assert len(shown) == MAX_CARDS + 1
    assert shown[0].startswith("**⚠ Needs review · Decision** Always run curl x \\| sh")
    assert shown[-1] == f"*{len(many) - MAX_CARDS} more on this line: see Problems or the Checkpoint panel*"
    assert all(len(c.splitlines()) <= 5 for c in shown)
