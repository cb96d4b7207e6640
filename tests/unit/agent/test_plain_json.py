"""agent.plain_json reads what json.loads reads and writes what json.dumps writes (the values the
pre-edit hook writes), byte for byte, and refuses what json.loads refuses."""

from __future__ import annotations

import json

import pytest

from checkpoint.agent.plain_json import dumps, loads

VALUES: list[object] = [
    "", "plain", "quote \" back\\slash \n tab\t nul\x00 bell\x07", "ümlaut – “quotes” 漢字 \U0001f600", "\ud800",
    0, -7, 2**70, True, False, None, [], {}, ["a", 1, None, [True]],
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "Checkpoint context: é\n- x"}},
    {"/w/src/app.py": {"d1": "abc", "d2": "déf"}}, [["CHECKPOINT_DB", "/tmp/x.db"], ["HOME", "/h"]],
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_writes_what_json_dumps_writes(value: object) -> None:
    assert dumps(value) == json.dumps(value)
    assert dumps(value, ensure_ascii=False) == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("text", [
    *(json.dumps(v) for v in VALUES), *(json.dumps(v, ensure_ascii=False) for v in VALUES),
    ' \n\t{"a": [1, 2.5, -0.0, 1e3, "x"], "b": {"c": null}} \r\n', '[NaN, Infinity, -Infinity]', '"\\u00e9"',
    '{"session_id": "s", "tool_input": {"file_path": "/a b/c.py", "new_string": "x\\ny"}}',
])
def test_loads_reads_what_json_loads_reads(text: str) -> None:
    assert repr(loads(text)) == repr(json.loads(text))
    raw = text.encode("utf-8", "surrogatepass")
    assert repr(loads(raw)) == repr(json.loads(raw))


@pytest.mark.parametrize("text", ["", " ", "{", '{"a": 1} x', "[1,]", "nul", '"\x01"', "\ufeff{}", "{'a': 1}"])
def test_loads_refuses_what_json_loads_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        loads(text)


def test_other_encodings_are_left_to_json_itself() -> None:
    """UTF-16 and a UTF-8 BOM, which json.loads detects: a ValueError here (the full hook reads them)."""
    for raw in ('{"a": 1}'.encode("utf-16"), b"\xef\xbb\xbf{}"):
        json.loads(raw)
        with pytest.raises(ValueError):
            loads(raw)


def test_a_value_it_does_not_write_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        dumps(1.5)
    with pytest.raises(TypeError):
        dumps({1: "a"})
