"""One redaction is final: what `Redactor.redact` returns holds nothing it would redact again, however
the secrets of the corpus are put together (issue 32: `Client('AC...', '<32 hex>')` needed a second
pass, which stored turn text and session titles never got), and the spans a split turn is redacted by
(`spans`, `redact_slice`) cut the same text as `redact`."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkpoint import redact
from tests.support import secrets_corpus

_CORPUS = [s.text for seed in (1, 2) for s in secrets_corpus.corpus(seed=seed, per_type=1)]
_GLUE = ["", " ", "\n", ", ", "'", '"', " twilio ", " password ", " = ", ": ", "AWS ", " sig=", "(", ")"]


@pytest.fixture(scope="module")
def redactor() -> redact.Redactor:
    return redact.redactor()


def test_every_corpus_text_is_redacted_to_a_fixed_point_in_one_call(redactor: redact.Redactor) -> None:
    not_final = {}
    for text in _CORPUS:
        once = redactor.redact(text)
        again = redactor.redact(once.text)
        if again.found:
            not_final[text] = again.text
    assert not_final == {}


def test_a_twilio_client_built_positionally_goes_in_one_call(redactor: redact.Redactor) -> None:
    sid, token = "A" + "C" + "0123456789abcdef" * 2, "f00dfeed" * 3 + "0a1b2c3d"
    out = redactor.redact(f"We'll use Client('{sid}', '{token}') for the staging API.")
    assert out.text == ("We'll use Client('[REDACTED:twilio_api_key]', '[REDACTED:hex_api_key]') "
                        "for the staging API.")
    assert out.found == {"twilio_api_key": 1, "hex_api_key": 1}


_text = st.builds(
    lambda parts, escaped: json.dumps("".join(parts))[1:-1] if escaped else "".join(parts),
    st.lists(st.one_of(st.sampled_from(_CORPUS), st.sampled_from(_GLUE)), min_size=1, max_size=6),
    st.booleans(),
)


@given(text=_text)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_redact_is_idempotent_over_the_corpus(redactor: redact.Redactor, text: str) -> None:
    once = redactor.redact(text).text
    assert redactor.redact(once).text == once
    assert redactor.redact_slice(text, 0, len(text)).text == once  # the spans of a split turn cut the same
    batch = redactor.redact_many(["plain words", text])
    assert (batch[1].text if 1 in batch else text) == once
