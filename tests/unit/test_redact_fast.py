"""The redactor's fast paths against the plain ones they replace: the same text out, the same
offsets, whatever the text holds."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from checkpoint.redact import engine

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
