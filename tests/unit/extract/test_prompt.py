"""Turn labels: a chunk is rendered with short labels local to it, and an answer's labels map back to
exactly that chunk's turn ids; a label or id from anywhere else is no citation (an item with none
is attributed to its chunk: tests/unit/test_attribution.py)."""

from __future__ import annotations

from dataclasses import replace

from checkpoint import runner
from checkpoint.answer import Extraction, ItemDraft
from checkpoint.extract.prompt import render_chunk, turn_labels
from checkpoint.model import ChunkInput, ItemKind, Role, TurnSlice
from tests.support.fake_anthropic import parse_turns

UUIDS = [f"3f2a0000-0000-4000-8000-{n:012d}" for n in range(1, 4)]


def chunk_of(ids: list[str], chunk_id: int = 1) -> ChunkInput:
    turns = [TurnSlice(turn_id=turn_id, seq=i, role=[Role.USER, Role.ASSISTANT, Role.TOOL][i % 3], text=f"text {i}",
                       files=("/w/a b.py", "/w/c.py") if i == 2 else (), timestamp="2026-11-30T05:30:22.123Z")
             for i, turn_id in enumerate(ids, start=1)]
    return ChunkInput(chunk_id=chunk_id, session_id="s", agent="claude", cwd="/w", turns=turns, token_estimate=0)


def answer(chunk: ChunkInput, *cited: list[str]) -> Extraction:
    return Extraction(chunk_id=chunk.chunk_id, extractor="test", items=[
        ItemDraft(kind=ItemKind.DECISION, statement=f"item {n}", turn_ids=ids) for n, ids in enumerate(cited)])


def test_rendered_labels_resolve_to_exactly_the_chunks_turn_ids_in_order() -> None:
    chunk = chunk_of(UUIDS)
    rendered = render_chunk(chunk)
    parsed = parse_turns(rendered)
    labels = turn_labels(chunk)
    assert [labels[t.label] for t in parsed] == UUIDS and len(labels) == len(UUIDS)
    assert [(t.role, t.files, t.text) for t in parsed] == [
        ("assistant", (), "text 1"), ("tool", ("/w/a b.py", "/w/c.py"), "text 2"), ("user", (), "text 3")]
    assert "3f2a" not in rendered and "2026" not in rendered  # no id, no timestamp: not worth their bytes


def test_a_part_of_a_split_turn_says_so_in_its_header() -> None:
    chunk = chunk_of(UUIDS[:1])
    chunk.turns[0] = replace(chunk.turns[0], part=2, parts=3)
    assert render_chunk(chunk) == "Workspace: /w\n[t1 assistant part 2/3]\ntext 1"
    [parsed] = parse_turns(render_chunk(chunk))
    assert (parsed.part, parsed.parts, turn_labels(chunk)[parsed.label]) == (2, 3, UUIDS[0])


def test_validate_cites_turns_by_id_whether_the_answer_gave_labels_or_ids() -> None:
    chunk = chunk_of(UUIDS)
    clean, attributed = runner.validate(chunk, answer(chunk, ["t3"], [UUIDS[0], "t3"], ["t1", UUIDS[0]]))
    assert attributed == 0
    assert [i.turn_ids for i in clean.items] == [[UUIDS[2]], [UUIDS[0], UUIDS[2]], [UUIDS[0], UUIDS[0]]]


def test_validate_cites_no_label_or_id_that_is_not_this_chunks() -> None:
    chunk, other = chunk_of(UUIDS[:2]), chunk_of([*UUIDS[2:], "elsewhere-1", "elsewhere-2"], chunk_id=2)
    assert "t3" in turn_labels(other)  # a label of another chunk ...
    foreign = ["t3", "t0", "t01", "T1", "[t1]", "turn t1", UUIDS[2], UUIDS[1][:-1]]  # ... and near misses
    clean, attributed = runner.validate(chunk, answer(chunk, foreign, [*foreign, "t1"]))
    # The first item names no turn of the chunk: attributed to it (its assistant turn, t1; t2 is a tool's).
    assert attributed == 1
    assert [(i.turn_ids, i.cited) for i in clean.items] == [([UUIDS[0]], "chunk"), ([UUIDS[0]], "turns")]


def test_a_label_wins_over_an_id_spelled_the_same() -> None:
    # Ids never look like labels in real transcripts; if one did, the model was told to copy labels.
    chunk = chunk_of(["t3", "x", "y"])  # labels t1, t2 (a tool's turn), t3
    clean, _ = runner.validate(chunk, answer(chunk, ["t3"], ["t1"]))
    assert [i.turn_ids for i in clean.items] == [["y"], ["t3"]]
