"""The offline supersession rules: what a sentence says is replaced, and whether it says again a
switch a known item already says (then it restates that item, never supersedes it)."""

from __future__ import annotations

import pytest

from checkpoint.extract import supersessions
from checkpoint.model import ItemKind, KnownItem

REDIS = KnownItem("r1", ItemKind.DECISION, "We decided to use Redis for the invoice cache.")
SWITCH = KnownItem("m1", ItemKind.DECISION, "We switch from Redis to Memcached for the invoice cache.")


@pytest.mark.parametrize(("sentence", "words"), [
    ("We switch from Redis to Memcached for the invoice cache.", ["redis"]),
    ("Redis is no longer used for the invoice cache.", ["redis"]),
    ("The old parser was no longer needed.", ["old", "parser"]),
    ("The invoice cache now uses Memcached instead of Redis.", ["redis"]),
    ("We use Memcached for the invoice cache.", None),
])
def test_what_a_sentence_says_is_replaced(sentence: str, words: list[str] | None) -> None:
    assert supersessions.replaced(sentence) == words


@pytest.mark.parametrize(("sentence", "known", "expected"), [
    # the decided item: superseded
    ("Redis is no longer used for the invoice cache.", [REDIS], {"supersedes": "r1"}),
    # the item that already says the switch: restated, never superseded (nor the old one it replaced)
    ("Redis is no longer used for the invoice cache.", [SWITCH], {"same_as": "m1"}),
    ("The invoice cache now uses Memcached instead of Redis.", [REDIS, SWITCH], {"same_as": "m1"}),
    ("We use Memcached for the invoice cache.", [REDIS, SWITCH], {}),
])
def test_a_switch_supersedes_the_item_it_names_or_restates_the_one_that_says_it(
    sentence: str, known: list[KnownItem], expected: dict[str, str]
) -> None:
    found = supersessions.fields(sentence, known)
    assert {k: v for k, v in found.items() if k != "supersedes_reason"} == expected
