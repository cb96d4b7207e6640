"""What the agent front ends hand out, by size: an MCP answer stays under its character cap and counts
what it left out; the session-start context stays under 8,000 characters, groups the items by the
file they concern, dates each by when it was said, shows whole sentences only, says when the
pre-edit reminders are on, and ends with the count of items left out and the tool that lists them;
both are redacted and free of control characters."""

from __future__ import annotations

import json

from checkpoint import redact
from checkpoint.agent import answers
from checkpoint.agent.context import CONTEXT_CHARS, LIST_TOOL, NO_FILE, REMINDERS_LINE, session_context
from checkpoint.model import AGENT_ANSWER_MARK, AGENT_CONTEXT_MARK, ItemKind, ItemRecord, ItemSource, ItemState
from checkpoint.store import ItemPage

REDACTOR = redact.redactor(True)
KEY = "AKIAIOSFODNN7EXAMPLE"  # an AWS access key id, the detectors' own example


def item(n: int, statement: str | None = None, state: ItemState = ItemState.NEW) -> ItemRecord:
    return ItemRecord(
        id=f"item{n:04d}", session_id=f"session-{n % 7}", kind=ItemKind.DECISION,
        statement=statement or f"We use component {n} for the part number {n} of the system, " + "x" * 300,
        rationale="because " + "y" * 500, confidence=0.9, turn_ids=(f"t{n}",),
        files=tuple(f"/w/f{i}.py" for i in range(30)),
        state=state, accepted_here=state is ItemState.ACCEPTED, extractor="heuristic",
        created_at=1_790_000_000.0 + n, session_title="a title", cwd="/w",
        sources=(ItemSource(turn_id=f"t{n}", path="/p/s.jsonl", line=n, timestamp=None),), agent="claude",
    )


def test_an_answer_stays_under_its_cap_and_counts_what_it_left_out() -> None:
    items = [item(n) for n in range(200)]
    text = answers.items_answer("list_decisions", items, total=260, redactor=REDACTOR, workspace="/w")
    assert text.startswith(AGENT_ANSWER_MARK)
    assert len(text) <= answers.ANSWER_CHARS
    data = json.loads(text)
    assert 0 < data["shown"] < 200 and data["total"] == 260 and data["left_out"] == 260 - data["shown"]
    assert data["items"][0]["files"] == [f"/w/f{i}.py" for i in range(answers.COMPACT_FILES)] + ["… 25 more"]
    assert len(data["items"][0]["statement"]) == answers.COMPACT_STATEMENT_CHARS  # cut, with "…"
    assert data["each_item"] == answers.BOUND


def test_an_answer_is_redacted_and_plain() -> None:
    text = answers.items_answer("search_decisions", [item(1, f"We keep the key {KEY} in\x1b[31m vault.")], 1,
                                REDACTOR)
    assert KEY not in text and "\x1b" not in json.loads(text)["items"][0]["statement"]
    assert "[REDACTED:" in text


def test_the_context_is_capped_and_ends_with_what_was_left_out() -> None:
    items = [item(n) for n in range(200)]
    text = session_context(ItemPage(items=tuple(items), total=350), "/w", REDACTOR)
    assert text is not None
    assert len(text) <= CONTEXT_CHARS
    assert text.startswith(AGENT_CONTEXT_MARK)
    lines = text.splitlines()
    assert lines[1] == "About \"f0.py\":"  # every item names /w/f0.py first
    shown = len(lines) - 3
    assert 5 < shown < 200
    assert lines[-1] == (f"{350 - shown} more recorded items were left out here; "
                         f"the MCP tool {LIST_TOOL} lists them all.")
    assert all(line.startswith("- Decision item") for line in lines[2:-1])


def test_the_context_says_accepted_items_are_accepted_and_hides_secrets() -> None:
    page = ItemPage(items=(item(1, f"We use the key {KEY}\nfor\tdeploys.", ItemState.ACCEPTED),), total=1)
    text = session_context(page, "/w", REDACTOR)
    assert text is not None and KEY not in text
    line = text.splitlines()[2]
    assert "accepted by the developer" in line and "\t" not in line
    assert text.splitlines()[-1].startswith("No recorded item was left out")


def test_no_items_no_context() -> None:
    assert session_context(ItemPage(items=(), total=0), "/w", REDACTOR) is None


def test_the_context_groups_by_file_dates_by_when_said_and_keeps_whole_sentences() -> None:
    said = ItemSource(turn_id="t", path="/p/s.jsonl", line=3, timestamp="2026-10-05T09:00:00Z")
    app = item(1, "We cache reads in app.py.")._replace(files=("src/app.py",), sources=(said,))
    general = item(2, "We ship weekly. The steps are as follows:")._replace(files=())
    db = item(3, "We use SQLite.")._replace(files=("/w/src/db.py",))
    fragment = item(4, "Use these settings:")._replace(files=())
    again = item(5, "We never block the loop in app.py.")._replace(files=("/w/src/app.py",))
    page = ItemPage(items=(app, general, db, fragment, again), total=5)
    text = session_context(page, "/w", REDACTOR, reminders=True)
    assert text is not None
    lines = text.splitlines()
    assert lines[1] == REMINDERS_LINE
    assert lines[2:] == [
        "About \"src/app.py\":",
        '- Decision item0001, said 2026-10-05 in a claude session (session-): "We cache reads in app.py."',
        '- Decision item0005, recorded 2026-09-21 in a claude session (session-): "We never block the loop in app.py."',
        "About \"src/db.py\":",
        '- Decision item0003, recorded 2026-09-21 in a claude session (session-): "We use SQLite."',
        NO_FILE,
        '- Decision item0002, recorded 2026-09-21 in a claude session (session-): "We ship weekly."',
        "1 more recorded item was left out here; the MCP tool mcp__checkpoint__list_decisions lists them all.",
    ]
    assert REMINDERS_LINE not in (session_context(page, "/w", REDACTOR) or "")
