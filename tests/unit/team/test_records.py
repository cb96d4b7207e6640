"""A decision record written and read back; a record a person edited still reads; a malformed one is
one problem with its line."""

from __future__ import annotations

from checkpoint.model import ItemKind, ItemState, SharedDecision
from checkpoint.team.records import RecordProblem, RecordText, file_name, parse, render, with_status

DECISION = SharedDecision(
    id="7a84faa51a2b", kind=ItemKind.DECISION, statement="We'll use SQLite for the queue: one file",
    rationale="It is one file.\n\nAnd it ships with Python.", files=("src/queue.py", "docs/a b.md"),
    state=ItemState.NEW, status="proposed", date="2026-11-02", supersedes=("0123456789ab",), superseded_by=(),
    path="docs/decisions/x.md", decision_makers="Alice <alice@example.com>",
)
TEXT = RecordText(decision_makers="Alice <alice@example.com>", origin="Captured from a claude session.")


def test_a_record_reads_back_as_written() -> None:
    assert parse(render(DECISION, TEXT), DECISION.path) == DECISION


def test_a_status_change_keeps_the_rest_and_reads_back() -> None:
    changed = with_status(render(DECISION, TEXT), "superseded", ("fedcba987654",))
    assert parse(changed, DECISION.path) == DECISION._replace(
        status="superseded", state=ItemState.ACCEPTED, superseded_by=("fedcba987654",))
    assert "Captured from a claude session." in changed


def test_a_hand_edited_record_in_flow_style_reads() -> None:
    edited = ("---\nstatus: Accepted\ndate: 2026-11-03\nid: 7a84faa51a2b\nkind: constraint\n"
              "files: [src/a.py, 'src/b.py']\n---\n\n# Never log keys\n")
    assert parse(edited, "r.md") == SharedDecision(
        id="7a84faa51a2b", kind=ItemKind.CONSTRAINT, statement="Never log keys", rationale=None,
        files=("src/a.py", "src/b.py"), state=ItemState.ACCEPTED, status="Accepted", date="2026-11-03",
        supersedes=(), superseded_by=(), path="r.md")


def test_malformed_records_are_one_problem_each_with_their_line() -> None:
    good = render(DECISION, TEXT)
    assert parse("# no front matter\n", "a.md") == RecordProblem("a.md", 1, "no front matter: a record starts"
                                                                           " with a line '---'")
    assert parse(good.replace("kind: decision", "kind: wish"), "b.md") == RecordProblem(
        "b.md", 6, "kind: expected one of decision, constraint, question, got 'wish'")
    assert parse(good.replace("status: proposed", "status: maybe"), "c.md").line == 2  # type: ignore[union-attr]
    # the closing fence lost: the body's first line that is no field is the problem
    assert parse(good.replace("\n---\n\n#", "\n\n#"), "d.md") == RecordProblem(
        "d.md", 18, "not a 'key: value' line: 'It is one file.'")
    assert isinstance(parse(good.replace("# We'll", "We'll"), "e.md"), RecordProblem)


def test_two_shares_of_one_day_never_collide() -> None:
    assert file_name("2026-11-02", "We'll use SQLite!", "7a84faa51a2b") == "2026-11-02-we-ll-use-sqlite-7a84faa5.md"
    assert file_name("2026-11-02", "We'll use SQLite!", "1111faa51a2b") != file_name(
        "2026-11-02", "We'll use SQLite!", "7a84faa51a2b")
