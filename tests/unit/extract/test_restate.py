"""Lead-ins: which words before a statement say it is said again, changed or reported, what is kept
after them, and the known item a restatement repeats."""

from __future__ import annotations

import pytest

from checkpoint.extract.restate import Lead, lead_in, repeated
from checkpoint.model import ItemKind, KnownItem


@pytest.mark.parametrize(("sentence", "expected"), [
    ("Reminder: we decided to use Redis for the invoice cache.",
     (Lead.RESTATED, "We decided to use Redis for the invoice cache.")),
    ("As agreed, the API returns 404 for a missing invoice.",
     (Lead.RESTATED, "The API returns 404 for a missing invoice.")),
    ("As decided earlier: keep the defaults.", (Lead.RESTATED, "Keep the defaults.")),
    ("Change of plan: we switch from Redis to Memcached.", (Lead.CHANGED, "We switch from Redis to Memcached.")),
    ("Done: the cache now uses Memcached.", (Lead.REPORTED, "The cache now uses Memcached.")),
    ("Reminder: tests.", (None, "Reminder: tests.")),  # nothing worth keeping after it
    ("We decided to use Redis.", (None, "We decided to use Redis.")),
    ("Done with the parser, on to the cache.", (None, "Done with the parser, on to the cache.")),
])
def test_the_lead_in_and_what_follows_it(sentence: str, expected: tuple[Lead | None, str]) -> None:
    assert lead_in(sentence) == expected


def test_a_restatement_repeats_the_known_item_sharing_most_of_its_words_both_ways() -> None:
    known = [KnownItem("a", ItemKind.DECISION, "We use Redis for sessions."),
             KnownItem("b", ItemKind.DECISION, "We decided to use Redis for the invoice cache."),
             KnownItem("c", ItemKind.CONSTRAINT, "Never cache invoices for over an hour in Redis or anywhere else.")]
    assert repeated("We decided on Redis for the invoice cache.", known) == known[1]
    assert repeated("We use Memcached for the queue.", known) is None
