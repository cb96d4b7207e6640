"""Where what a session wrote to a file still is in it."""

from __future__ import annotations

from checkpoint.anchor import MAX_MARK_LINES, How, Mark, Span, first_code_line, locate, mark, named_lines, names_in


def test_locate_whole_text_then_longest_surviving_run_else_nothing() -> None:
    doc = "import os\n\n\ndef cache_get(key):\n    return STORE.get(key)\n\n\ndef other():\n    pass\n"
    assert locate(doc, "def cache_get(key):\n    return STORE.get(key)\n") == Span(3, 4)
    # edited since: the unchanged lines still anchor it
    assert locate(doc, "def cache_get(key):\n    return CACHE[key]\n") == Span(3, 3)
    assert locate(doc, "def gone():\n    return 42\n") is None
    assert locate(doc, "pass") is None  # too short to say where anything is


LONG = "".join(f"def step_{n}(x):\n    return x + {n}\n\n" for n in range(30))  # 90 lines


def test_mark_is_the_short_run_the_session_wrote() -> None:
    written = "def step_10(x):\n    return x + 10\n"
    assert mark(LONG, [written], "We'll keep it simple") == Mark(30, 31, How.EDITED, True)
    # of several runs, the one naming what the statement names
    three = "def step_3(x):\n    return x + 3\n"
    assert mark(LONG, [three, written], "step_10 stays") == Mark(30, 31, How.EDITED, True)
    assert mark(LONG, [three, written], "it stays") == Mark(9, 10, How.EDITED, True)


def test_a_rewritten_file_is_narrowed_to_the_named_line_or_its_first_line_of_code() -> None:
    whole = '"""Module."""\n# about it\n\n' + LONG
    assert mark(whole, [whole], "We'll use `step_12()` for the totals") == Mark(39, 39, How.NAMED, True)
    assert mark(whole, [whole], "We'll use snake_case names") == Mark(3, 3, How.LINE, True)
    assert mark(whole, [whole], "We'll use snake_case names").end - 3 < MAX_MARK_LINES


def test_a_written_plan_marks_the_line_saying_the_statement_in_its_own_words() -> None:
    plan = ("# Plan\n\n## Rabbit Holes\n- Credo defaults may be strict — keep defaults, tune later\n\n## No-gos\n"
            "- No CI/CD integration yet (separate task)\n- No custom Credo checks\n\n"
            "Appetite: small. Target: `mix.exs`. Architecture: Igniter for dep installation. Sources: `mix.exs`.\n"
            + "\n".join(f"- step {n}" for n in range(20)) + "\n")
    assert mark(plan, [plan], "No custom Credo checks") == Mark(7, 7, How.NAMED, True)
    assert mark(plan, [plan], "Architecture: Igniter for dep installation.") == Mark(9, 9, How.NAMED, True)
    assert mark(plan, [], "No CI/CD integration yet (separate task)") == Mark(6, 6, How.NAMED, False)
    assert mark(plan, [plan], "No CI") == Mark(3, 3, How.LINE, True)  # too short to say where: one quiet line


def test_nothing_found_is_one_line_never_the_whole_file() -> None:
    assert mark(LONG, ["def gone():\n    return 42\n"], "about parse_config") == Mark(0, 0, How.LINE, False)
    assert mark(LONG + "def parse_config():\n    pass\n", [], "about parse_config") == Mark(90, 90, How.NAMED, False)
    assert mark("", [], "anything") == Mark(0, 0, How.LINE, False)


def test_the_names_a_statement_mentions_are_code_like() -> None:
    assert names_in("Use `load()` in parse_config, CacheLayer and os.path, not the cache e.g. here") == [
        "load", "parse_config", "CacheLayer", "os.path"]
    assert names_in("We'll keep the defaults because they are simple.") == []
    assert first_code_line(["#!/bin/sh", "", "# comment", "  run"]) == 3
    assert named_lines(["x = parse_config()", "my_parse_config = 1", "self.parse_config"], ["parse_config"]) == [0]
