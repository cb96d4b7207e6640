"""The redactor's fast paths against the plain ones they replace: the same text out, the same
offsets, whatever the text holds."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from checkpoint.redact import engine, gate
from checkpoint.redact.detectors import assignment_candidates

_ESCAPE = re.compile(r'\\[\\nrt"/]')
_ESCAPED = {"\\\\": "\\", "\\n": "\n", "\\r": "\r", "\\t": "\t", '\\"': '"', "\\/": "/"}


def _unescaped_by_regex(text: str) -> tuple[str, list[int]]:
    """The definition: each match of the escape regex, left to right, as the character it stands for."""
    return _ESCAPE.sub(lambda m: _ESCAPED[m.group()], text), [m.start() for m in _ESCAPE.finditer(text)]


# Backslashes next to everything an escape may be made of, and characters that are not.
_escapy = st.text(st.sampled_from(['\\', "n", "r", "t", '"', "/", "u", "x", "\x01", "\n", "İ", "a"]), max_size=40)


@given(text=st.one_of(_escapy, st.text(max_size=40)))
@settings(max_examples=1000, deadline=None)
def test_unescaping_reads_every_escape_as_the_regex_does(text: str) -> None:
    assert engine._unescaped(text) == _unescaped_by_regex(text)


def test_unescaping_cases() -> None:
    for text in ["", "\\", "a\\", "\\\\n", "\\\\\\n", "x\\qy", '\\"k\\"', "\\/\\/", "\\u0041", "\x01\\n\x01"]:
        assert engine._unescaped(text) == _unescaped_by_regex(text), text
    assert engine._unescaped("a\\\\nb") == ("a\\nb", [1])
    text = "no escapes"
    assert engine._unescaped(text)[0] is text


# -- the keywords' prefilter: a candidate the engine would find is never missed ---------------------------

_NAME_PIECES = st.sampled_from([
    "key", "KEY", "Key", "\u212aey", "secret", "SeCrEt", "token", "pass", "PASS", "pw", "credential", "contrase",
    "api_", "_", ".", "-", "x1", "db", "İ", "ı", "ſ", "é",
])
_ASSIGN_PIECES = st.sampled_from([
    "=", ":", ":=", "=>", "==", "!=", "!==", " ", "\t", "\\t", "\\n", "\n", '"', '\\"', "'", "`", "]", ")", "(", "@",
    "$", "{", "1", "12", "abc", "x.y(", "v", "\\\\", "\\/", "/", "\ud800", "\x00", ",", "#",
])
_candidate_text = st.lists(st.one_of(_NAME_PIECES, _ASSIGN_PIECES, st.text(max_size=3)), max_size=14).map("".join)


@given(text=_candidate_text)
@settings(max_examples=3000, deadline=None)
def test_the_keyword_prefilter_finds_every_text_holding_a_candidate(text: str) -> None:
    import re2

    view = engine._lower(engine._unescaped(text)[0])
    data = text.encode("utf-8", "surrogatepass")
    for kw, candidate in assignment_candidates().items():
        prefilter = gate.view_prefilter(candidate.pattern, candidate.flags)
        assert prefilter is not None
        if candidate.search(view) and "\ud800" not in text:  # not UTF-8: the gate counts it found
            assert re2.search(prefilter, data), (kw, text)


def test_a_text_not_utf8_is_looked_at_for_every_keyword() -> None:
    import checkpoint.redact as redact

    text = "api_key = 'a\ud800b1234567890abcdef'"
    gated, ungated = redact.redactor(), redact.Redactor(redact.redactor().detectors, gate=False)
    assert gated.redact_many([text]) == ungated.redact_many([text])
    assert gated._gate.plan(text) is not None
    assert gated._gate.plan(text).keywords  # type: ignore[union-attr]


def test_the_prefilter_renders_the_view_as_stored() -> None:
    import re2

    def hit(pattern: str, text: str) -> bool:
        prefilter = gate.view_prefilter(pattern, 0)
        assert prefilter is not None
        return re2.search(prefilter, text.encode()) is not None

    assert hit(r'k"=', 'K\\"=') and hit(r"k\t", "\u212a\\t") and hit(r"a[^x]b", "a\\nb")
    assert hit(r"ab{0,40}c", "a" + "b" * 99 + "c") and hit(r"ab{35}c", "abbbc")  # a long repeat: unbounded, 3 at least
    assert not hit(r"ab{35}c", "abbc")
    assert not hit(r"key=", "kex=") and not hit(r'k"', "k'")
    assert hit(r"a(?=b)c", "ac")  # an assertion is left out: the prefilter may say yes for nothing
    assert gate.view_prefilter(r"(a)\1", 0) == "(?:[aA])"  # up to what cannot be rendered
    assert gate.view_prefilter(r"(?i:a)b", 0) is None  # a flag group: nothing


def test_prose_full_of_s_dot_and_ac_reaches_neither_the_vault_nor_the_twilio_detector() -> None:
    """Their anchors (`s.`, `ac`) are in nearly every text: each is gated by its token's own shape
    (Detector.gate), so plain prose costs them nothing, and a token still goes."""
    import checkpoint.redact as redact

    redactor = redact.redactor(True)
    prose = "This is it. Yes. Back in place, we access each account as planned. " * 20
    plan = redactor._gate.plan(prose)
    running = {d.kind for d in (*plan.whole, *plan.triggered)} if plan is not None else set()
    assert not running & {"vault_token", "twilio_auth_token"}
    token = "s.Ab3dE5gH7jK9mN1pQ3sT5vW7"
    assert redactor.redact(f"{prose}The vault token is {token} now.").text.endswith(
        "The vault token is [REDACTED:vault_token] now.")
