"""The check engine on real ast-grep and re2: what each shape finds in each language, what it leaves
alone, and a malformed check as one problem, never an exception."""

from __future__ import annotations

from typing import Any

import pytest

from checkpoint.checks.engine import SUPPRESS, ActiveCheck, Engine, matches_paths
from checkpoint.checks.model import CheckProblem, read_check


def active(check_id: str, data: Any) -> ActiveCheck:
    return ActiveCheck(check_id, f"item-{check_id}", read_check(data), "We use httpx instead of requests", "decision",
                       "local")


def lines(engine: Engine, path: str, text: str) -> list[tuple[str, int]]:
    return [(h.check_id, h.line) for h in engine.scan(path, text)]


def test_uses_finds_python_imports_and_calls_and_leaves_lookalikes_alone() -> None:
    engine = Engine([active("c", {"uses": "requests"})])
    text = ("import os, requests\nfrom requests.adapters import HTTPAdapter\nimport httpx\nimport requests_mock\n"
            "r = requests.post(url)\nhttpx.get(url)\nself.requests.get(url)\n")
    assert lines(engine, "src/api.py", text) == [("c", 1), ("c", 2), ("c", 5)]
    assert engine.issues == []


def test_uses_in_typescript_javascript_go_and_rust() -> None:
    engine = Engine([active("c", {"uses": "requests"})])
    ts = 'import x from "requests";\nimport y from "httpx";\nconst r = require("requests/sub");\nrequests.get(1);\n'
    assert lines(engine, "web/a.ts", ts) == [("c", 1), ("c", 3), ("c", 4)]
    assert lines(engine, "web/a.tsx", 'import x from "requests";\nconst a = <div/>;\n') == [("c", 1)]
    assert lines(engine, "web/a.js", 'const r = require("requests");\n') == [("c", 1)]
    go = 'package m\nimport (\n  "fmt"\n  "example.com/requests"\n)\nfunc f() { requests.Get(1); fmt.Println(2) }\n'
    assert lines(engine, "m.go", go) == [("c", 4), ("c", 6)]
    assert lines(engine, "src/m.rs", "use requests::Client;\nuse std::fs;\nfn f() { requests::get(1); }\n") == [
        ("c", 1), ("c", 3)]


def test_a_calls_only_check_with_a_path_glob() -> None:
    engine = Engine([active("c", {"uses": "charge", "calls": True, "paths": ["src/util.py"]})])
    text = "from payments import charge\ncharge(1)\n"
    assert lines(engine, "src/util.py", text) == [("c", 2)]
    assert lines(engine, "src/billing.py", text) == []


def test_a_structural_rule_with_inside_and_not() -> None:
    rule = {"pattern": "print($$$)", "inside": {"kind": "function_definition", "stopBy": "end"},
            "not": {"has": {"regex": "debug", "stopBy": "end"}}}
    engine = Engine([active("c", {"lang": "python", "rule": rule})])
    text = "print(1)\ndef f():\n    print(2)\n    print(debug)\n"
    assert lines(engine, "a.py", text) == [("c", 3)]
    assert lines(engine, "a.go", "package m\n") == []  # another language: not read


def test_a_regex_check_on_a_justfile_and_yaml() -> None:
    engine = Engine([active("c", {"regex": r"\bpip install\b", "paths": ["Justfile", ".github/workflows/*.yml"]})])
    assert lines(engine, "Justfile", "build:\n    uv sync\n    pip install requests\n") == [("c", 3)]
    assert lines(engine, ".github/workflows/ci.yml", "steps:\n  - run: pip install -e .\n") == [("c", 2)]
    assert lines(engine, "docs/notes.yml", "pip install x\n") == []


def test_a_suppressed_line_is_left_alone() -> None:
    engine = Engine([active("c", {"uses": "requests"})])
    assert lines(engine, "a.py", f"import requests  # {SUPPRESS}\nimport requests\n") == [("c", 2)]


@pytest.mark.parametrize(("data", "says"), [
    ({"lang": "python", "rule": {"pattern": "$$$(("}}, "not valid python"),
    ({"lang": "python", "rule": {"kind": "no_such_kind"}}, "no_such_kind"),
    ({"lang": "python", "rule": {"regex": "("}}, "ast-grep refused"),
    ({"regex": "(", "paths": ["Justfile"]}, "re2"),
])
def test_a_check_that_cannot_compile_is_one_issue_and_the_others_still_act(data: Any, says: str) -> None:
    engine = Engine([active("bad", data), active("good", {"uses": "requests"})])
    assert [i.check_id for i in engine.issues] == ["bad"] and says in engine.issues[0].message
    assert "Stack backtrace" not in engine.issues[0].message
    assert lines(engine, "a.py", "import requests\n") == [("good", 1)]


@pytest.mark.parametrize(("data", "says"), [
    ({"lang": "cobol", "rule": "x"}, "cobol"),
    ({"lang": "python", "rule": {"fix": "x"}}, "'fix'"),
    ({"lang": "python", "rule": {"pattern": "x" * 5000}}, "longer than"),
    ({"regex": "x"}, "names the files"),
    ({"uses": "os; rm -rf /"}, "uses:"),
    ({"uses": "a", "regex": "b", "paths": ["x"]}, "exactly one"),
    ("not json", "not JSON"),
    ({"lang": "python", "rule": {"not": {"not": {"not": {"not": {"not": {"not": {"not": {"not": {"not": {
        "kind": "call"}}}}}}}}}}}, "deeper"),
])
def test_a_malformed_check_is_refused_with_a_sentence(data: Any, says: str) -> None:
    with pytest.raises(CheckProblem, match=None) as refused:
        read_check(data)
    assert says in str(refused.value)


def test_a_check_round_trips_through_its_text() -> None:
    for data in ({"uses": "requests", "paths": ["src/*.py"]}, {"lang": "ts", "rule": "foo($A)"},
                 {"regex": "x+", "paths": ["Justfile"], "message": "use uv"}):
        check = read_check(data)
        assert read_check(check.text()) == check


def test_globs_match_names_anywhere_and_paths_from_the_top() -> None:
    check = read_check({"regex": "x", "paths": ["Justfile", "src/**/*.py", "vendor"]})
    assert matches_paths(check, "Justfile") and matches_paths(check, "sub/Justfile")
    assert matches_paths(check, "src/a/b.py") and not matches_paths(check, "tests/a.py")
    assert not matches_paths(check, "vendor.py")


def test_the_needle_is_text_every_match_holds_or_none() -> None:
    from checkpoint.checks.engine import needle

    assert needle(read_check({"uses": "example.com/requests"}), "go") == "requests"
    assert needle(read_check({"uses": "serde-json"}), "rust") == "serde_json"
    assert needle(read_check({"lang": "python", "rule": {"pattern": "$CLIENT.get_session($$$)"}}), "python") == (
        "get_session")
    inside = {"pattern": "print($A)", "inside": {"kind": "function_definition"}}
    assert needle(read_check({"lang": "python", "rule": inside}), "python") == "print"
    assert needle(read_check({"lang": "python", "rule": {"kind": "call"}}), "python") is None
    assert needle(read_check({"lang": "python", "rule": {"any": [{"pattern": "a_b($A)"}, {"pattern": "c_d"}]}}),
                  "python") is None


def test_a_lazy_engine_compiles_a_rule_when_first_wanted_and_finds_the_same() -> None:
    checks = [active("c", {"uses": "requests"}), active("bad", {"lang": "go", "rule": {"kind": "no_such_kind"}})]
    lazy = Engine(checks, lazy=True)
    assert lazy.issues == []  # nothing compiled yet
    assert lines(lazy, "a.py", "import requests\n") == lines(Engine(checks), "a.py", "import requests\n") == [("c", 1)]
    assert lines(lazy, "m.go", "package m\n") == [] and [i.check_id for i in lazy.issues] == ["bad"]
