"""Nothing the model says is dropped: an item that cites no turn of its chunk (no citation at all, or
only turns of other chunks or of nowhere) is kept, attributed to the chunk's user and assistant
turns, marked `cited: chunk`, and counted in the run report and the run's stored record. Only an
item with no statement is not an item. A restatement of a known item merges into it without
widening its citation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checkpoint import runner
from checkpoint.answer import Extraction, ItemDraft
from checkpoint.extract.answer_schema import read_answer
from checkpoint.model import (
    TOOL_OUTPUT_ONLY,
    ChunkInput,
    Citation,
    FileCursor,
    ItemKind,
    Role,
    RunReport,
    ScannedTurn,
    TurnDraft,
)
from checkpoint.store import Store

ROLES = [Role.USER, Role.ASSISTANT, Role.TOOL, Role.TOOL, Role.ASSISTANT]


def store_of(path: Path, roles: list[Role] = ROLES, session: str = "s", chunk_tokens: int = 100_000) -> Store:
    store = Store(path)
    drafts = [TurnDraft(id=f"{session}-u{i}", role=role, text=f"turn {i}") for i, role in enumerate(roles, 1)]
    turns = [ScannedTurn(draft, i, 200, 5) for i, draft in enumerate(drafts, 1)]  # a chunk of 256 holds one
    store.ingest(FileCursor(f"/{session}.jsonl"), "claude", session, False, {}, turns, None, Counter(), Counter(), [],
                 chunk_tokens=chunk_tokens)
    return store


Answer = Callable[[ChunkInput], dict[str, Any]]


class Scripted:
    """An extractor that answers each chunk, read as a model's JSON answer is."""

    name = "scripted"
    description = "a scripted test extractor"

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    def extract(self, chunk: ChunkInput) -> Extraction:
        return Extraction(chunk_id=chunk.chunk_id, extractor=self.name, items=read_answer(self.answer(chunk)))


def in_order(*answers: dict[str, Any]) -> Answer:
    """The answers for the chunks in the order they are sent (one at a time)."""
    left = list(answers)
    return lambda _chunk: left.pop(0)


def test_an_answer_item_without_a_citation_is_read_and_one_without_a_statement_is_not() -> None:
    drafts = read_answer({"items": [
        {"kind": "decision", "statement": "no turn_ids key at all"},
        {"kind": "decision", "statement": "turn_ids null", "turn_ids": None},
        {"kind": "constraint", "statement": "turn_ids empty", "turn_ids": []},
        {"kind": "question", "statement": "blank labels only", "turn_ids": ["", "  "]},
        {"kind": "decision", "statement": "   ", "turn_ids": ["t1"]},  # nothing said: not an item
        {"kind": "decision", "statement": "\x1b\x07", "turn_ids": ["t1"]},  # nothing once the controls go
    ]})
    assert [(d.statement, d.turn_ids) for d in drafts] == [
        ("no turn_ids key at all", []), ("turn_ids null", []), ("turn_ids empty", []), ("blank labels only", [])]


def test_an_uncited_item_is_attributed_to_the_chunks_user_and_assistant_turns(tmp_path: Path) -> None:
    store = store_of(tmp_path / "db")
    [chunk] = store.claim_chunks(1, "me")
    extraction = Extraction(chunk_id=chunk.chunk_id, extractor="x", items=[
        ItemDraft(kind=ItemKind.DECISION, statement="uncited", turn_ids=[]),
        ItemDraft(kind=ItemKind.DECISION, statement="elsewhere", turn_ids=["other-session-turn", "t9"]),
        ItemDraft(kind=ItemKind.CONSTRAINT, statement="partly", turn_ids=["nowhere", "t3", "s-u5"]),
    ])
    clean, attributed = runner.validate(chunk, extraction)
    assert attributed == 2
    spoken = ["s-u1", "s-u2", "s-u5"]  # the tool turns (3, 4) are what was run and read, not said
    assert [(i.statement, i.turn_ids, i.cited) for i in clean.items] == [
        ("uncited", spoken, Citation.CHUNK), ("elsewhere", spoken, Citation.CHUNK),
        ("partly", ["s-u3", "s-u5"], Citation.TURNS)]  # the resolvable citations stay: a tool turn cited is cited

    assert store.commit_extraction(clean, "me") == 3
    stored = {i.statement: i for i in store.items()}
    assert {s: (i.cited, i.turn_ids) for s, i in stored.items()} == {
        "uncited": (Citation.CHUNK, tuple(spoken)), "elsewhere": (Citation.CHUNK, tuple(spoken)),
        "partly": (Citation.TURNS, ("s-u3", "s-u5"))}
    assert [s.turn_id for s in stored["uncited"].sources] == spoken  # the lines to open are the chunk's
    assert stored["uncited"].as_json()["cited"] == "chunk"


def test_an_item_of_a_chunk_of_tool_output_alone_is_dropped_and_counted(tmp_path: Path) -> None:
    # Its only possible sources are what was run and read: no one in the session said it (issue 32).
    store = store_of(tmp_path / "db", [Role.TOOL, Role.TOOL])
    [chunk] = store.claim_chunks(1, "me")
    dropped: Counter[str] = Counter()
    clean, attributed = runner.validate(chunk, Extraction(chunk_id=chunk.chunk_id, extractor="x", items=[
        ItemDraft(kind=ItemKind.DECISION, statement="in a file it read", turn_ids=[]),
        ItemDraft(kind=ItemKind.DECISION, statement="in a page it fetched", turn_ids=["s-u2"])]), dropped)
    assert (clean.items, attributed, dropped) == ([], 0, Counter({TOOL_OUTPUT_ONLY: 2}))


def test_a_run_whose_answers_cite_only_other_chunks_captures_them_and_counts_the_items(tmp_path: Path) -> None:
    # Three chunks of one turn each. Chunk 2's answer restates chunk 1's item (same_as) and adds a new
    # one, both citing only chunk 1's turn; chunk 3's answer cites nothing. The old code failed chunk 2
    # with "the answer cited only turns outside this chunk" (again at every retry, for a model that
    # keeps restating) and dropped chunk 3's item; now both are captured and no item is lost.
    store = store_of(tmp_path / "db", [Role.USER, Role.USER, Role.ASSISTANT], chunk_tokens=256)

    def answer(chunk: ChunkInput) -> dict[str, Any]:
        seq = chunk.turns[0].seq
        if seq == 1:
            return {"items": [{"kind": "decision", "statement": "use SQLite", "turn_ids": ["t1"]}]}
        if seq == 2:
            [known] = chunk.known_items
            return {"items": [
                {"kind": "decision", "statement": "we keep SQLite", "turn_ids": ["s-u1"], "same_as": known.id},
                {"kind": "constraint", "statement": "no server process", "turn_ids": ["s-u1"]}]}
        return {"items": [{"kind": "question", "statement": "which journal mode?"}]}

    report = runner.extract_due(store, Scripted(answer), session_id="s")
    assert (report.tried, report.captured, report.failed, report.items_added, report.items_attributed) == (
        3, 3, 0, 3, 3)
    assert "3 items cited no turn of their chunk: attributed to the chunk." in report.sentence()
    assert report.as_dict()["items_attributed"] == 3
    assert store.runs()[0].items_attributed == 3  # the run's stored record keeps the count
    [counts] = store.session_counts()
    assert (counts.captured, counts.failed, counts.pending, counts.watermark) == (3, 0, 0, 3)

    items = {i.statement: i for i in store.items()}
    # The restatement merged into the known item, whose citation it does not widen with chunk 2's turns.
    assert set(items) == {"use SQLite", "no server process", "which journal mode?"}
    assert (items["use SQLite"].turn_ids, items["use SQLite"].cited) == (("s-u1",), Citation.TURNS)
    assert (items["no server process"].turn_ids, items["no server process"].cited) == (("s-u2",), Citation.CHUNK)
    assert (items["which journal mode?"].turn_ids, items["which journal mode?"].cited) == (("s-u3",), Citation.CHUNK)


def test_a_real_citation_replaces_an_attribution_when_the_item_is_restated(tmp_path: Path) -> None:
    store = store_of(tmp_path / "db", [Role.USER, Role.ASSISTANT], chunk_tokens=256)
    extractor = Scripted(in_order({"items": [{"kind": "decision", "statement": "Use SQLite.", "turn_ids": []}]},
                                  {"items": [{"kind": "decision", "statement": "use sqlite", "turn_ids": ["t1"]}]}))
    runner.extract_due(store, extractor, session_id="s")
    [item] = store.items()
    assert (item.turn_ids, item.cited, item.statement) == (("s-u2",), Citation.TURNS, "Use SQLite.")


def test_the_run_report_says_how_many_items_were_attributed() -> None:
    one = RunReport(run_id=1, extractor="anthropic", tried=1, captured=1, items_added=1, items_attributed=1)
    assert one.sentence().endswith("; 1 new item. 1 item cited no turn of its chunk: attributed to the chunk.")
    none = RunReport(run_id=1, extractor="anthropic", tried=1, captured=1)
    assert "attributed" not in none.sentence() and none.as_dict()["items_attributed"] == 0
    none.absorb(one)
    assert none.items_attributed == 1


def test_the_hover_of_an_attributed_item_says_its_sources_are_its_chunks(tmp_path: Path) -> None:
    from checkpoint.server.features.diagnostics.cards import card

    store = store_of(tmp_path / "db")
    [chunk] = store.claim_chunks(1, "me")
    clean, _ = runner.validate(chunk, Extraction(chunk_id=chunk.chunk_id, extractor="x", items=[
        ItemDraft(kind=ItemKind.DECISION, statement="uncited", turn_ids=[]),
        ItemDraft(kind=ItemKind.DECISION, statement="cited", turn_ids=["t1"])]))
    store.commit_extraction(clean, "me")
    hovers = {i.statement: card(i, now=0.0) for i in store.items()}
    assert "(it cited no turn: from its chunk)" in hovers["uncited"]
    assert "from its chunk" not in hovers["cited"] and "[Open Turn](" in hovers["cited"]
