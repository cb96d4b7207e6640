"""The offline extractor's phrase rules on one chunk: what it keeps, in the words the turn used."""

from __future__ import annotations

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.model import ChunkInput, ItemKind, Role, TurnSlice


def test_sentences_keep_their_identifiers_and_lose_only_emphasis() -> None:
    turns = [
        TurnSlice(turn_id="u1", seq=1, role=Role.USER,
                  text="We'll use **`max_tokens` = 4096** for every call because answers get cut. Would you like tea?"),
        TurnSlice(turn_id="a1", seq=2, role=Role.ASSISTANT,
                  text="- The `__init__.py` files must never import the SDK."),
        TurnSlice(turn_id="t1", seq=3, role=Role.TOOL,
                  text="we'll use whatever the tool printed", files=("src/app.py",)),
        TurnSlice(turn_id="a2", seq=4, role=Role.ASSISTANT, text="Should we keep the snake_case names in the schema?"),
    ]
    chunk = ChunkInput(chunk_id=7, session_id="s", agent="claude", cwd="/w", turns=turns, token_estimate=100)
    assert HeuristicExtractor().extract(chunk) == Extraction(chunk_id=7, extractor="heuristic", items=[
        ItemDraft(kind=ItemKind.DECISION, statement="We'll use max_tokens = 4096 for every call",
                  rationale="because answers get cut.", confidence=0.6, turn_ids=["u1"], files=["src/app.py"]),
        ItemDraft(kind=ItemKind.CONSTRAINT, statement="The __init__.py files must never import the SDK.",
                  confidence=0.4, turn_ids=["a1"], files=["src/app.py"]),
        ItemDraft(kind=ItemKind.QUESTION, statement="Should we keep the snake_case names in the schema?",
                  confidence=0.4, turn_ids=["a2"]),
    ])
