"""Where what a session wrote to a file still is in it."""

from __future__ import annotations

from checkpoint.anchor import Span, locate


def test_locate_whole_text_then_longest_surviving_run_else_nothing() -> None:
    doc = "import os\n\n\ndef cache_get(key):\n    return STORE.get(key)\n\n\ndef other():\n    pass\n"
    assert locate(doc, "def cache_get(key):\n    return STORE.get(key)\n") == Span(3, 4)
    # edited since: the unchanged lines still anchor it
    assert locate(doc, "def cache_get(key):\n    return CACHE[key]\n") == Span(3, 3)
    assert locate(doc, "def gone():\n    return 42\n") is None
    assert locate(doc, "pass") is None  # too short to say where anything is
