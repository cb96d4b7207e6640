"""What `checkpoint check` prints: SARIF 2.1.0 that validates (with a check that cannot act as a tool
notification), and GitHub annotations that a line of code or a statement cannot turn into a command."""

from __future__ import annotations

import json
from pathlib import Path

from checkpoint.checks.engine import ActiveCheck, CheckIssue
from checkpoint.checks.model import read_check
from checkpoint.checks.report import github, render, sarif
from checkpoint.checks.run import run_checks
from tests.support.sarif import sarif_problems


def _checks() -> list[ActiveCheck]:
    return [ActiveCheck("c1", "item1", read_check({"uses": "requests"}), "Use httpx instead of requests", "decision",
                        "local"),
            ActiveCheck("c2", "item2", read_check({"uses": "eval", "calls": True}),
                        "Never call eval\n::error::forged", "constraint", "docs/decisions/x.md")]


def test_sarif_validates_and_names_each_check_as_a_rule(tmp_path: Path) -> None:
    root = tmp_path
    (root / "a.py").write_text("import requests\nx = eval('1')\n")
    run = run_checks(str(root), ["a.py"], _checks())
    run.issues.append(CheckIssue("c3", "item3", "the pattern is not valid python code"))
    log = sarif(run)
    assert sarif_problems(log) == []
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in results] == [("c1", "warning", 1), ("c2", "error", 2)]
    assert json.loads(render(run, "sarif")) == log
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert "not valid python" in notes[0]["message"]["text"]


def test_a_github_annotation_cannot_be_split_into_another_command(tmp_path: Path) -> None:
    root = tmp_path
    (root / "a,b.py").write_text("x = eval('1')\n")
    out = github(run_checks(str(root), ["a,b.py"], _checks()))
    assert out.count("\n") == 0 and out.startswith("::error file=a%2Cb.py,line=1,")
    assert "%0A::error::forged" in out
