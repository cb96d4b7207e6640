"""Orders about the task at hand told from rules for the project (checkpoint.extract.one_off), in the
words of real sessions and in other languages, and the mark validation puts on a model's item."""

from __future__ import annotations

import pytest

from checkpoint import runner
from checkpoint.answer import Extraction, ItemDraft
from checkpoint.extract.one_off import one_off
from checkpoint.model import ChunkInput, ItemKind, Role, TurnSlice


@pytest.mark.parametrize("said", [
    "Don't stop until all functions are ported, tests pass, and you have 100% coverage.",
    "Delete all the Python source files when you're done",
    "Use the mock payment server for now.",
    "Once you're done, open a PR against main.",
    "Skip the flaky e2e suite for the time being.",
    "Keep going until every test passes.",
    "Temporarily disable the rate limiter.",
    "Pour l'instant, garde le cache en mémoire.",
    "暂时不要修改数据库结构。",
    "とりあえずモックを使ってください。",
    "docsは一旦コミットせず、specはPRにしたい",
])
def test_orders_for_this_task_are_one_off(said: str) -> None:
    assert one_off(said)


@pytest.mark.parametrize("said", [
    "Never commit secrets to the repository.",
    "We'll use Postgres for storage.",
    "Keep the Justfile.",
    "Always run the tests before you finish a task.",
    "Use a temporary table for the import.",
    "From now on, don't stop until the linter is clean.",
    "The task queue must be idempotent.",
])
def test_rules_for_the_project_are_lasting(said: str) -> None:
    assert not one_off(said)


def test_validation_marks_a_models_one_off_order_and_keeps_its_lasting_ones() -> None:
    chunk = ChunkInput(chunk_id=1, session_id="s", agent="claude", cwd="/w",
                       turns=[TurnSlice("u1", 1, Role.USER, "Use the mock for now. We'll use Redis.")],
                       token_estimate=20)
    answer = Extraction(chunk_id=1, extractor="openai", items=[
        ItemDraft(kind=ItemKind.DECISION, statement="Use the mock for now.", turn_ids=["t1"]),
        ItemDraft(kind=ItemKind.DECISION, statement="We'll use Redis.", turn_ids=["t1"]),
        ItemDraft(kind=ItemKind.CONSTRAINT, statement="Finish the port.", turn_ids=["t1"], lasting=False),
    ])
    clean, _ = runner.validate(chunk, answer)
    assert [(i.statement, i.lasting) for i in clean.items] == [
        ("Use the mock for now.", False), ("We'll use Redis.", True), ("Finish the port.", False)]
