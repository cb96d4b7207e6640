"""scripts/extraction_eval.py: its matching rule, and one labelled session through the real pipeline
with the offline extractor, printed as the table a user reads."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from scripts import extraction_eval
from scripts.extraction_eval import Item, Label, Score


def test_an_item_takes_the_label_it_covers_best_once_and_is_right_only_in_its_kind() -> None:
    labels = (Label("decision", "Keep the Credo defaults, tune later"),
              Label("constraint", "No custom Credo checks"))
    items = [Item("decision", "Credo defaults may be strict — keep defaults, tune later"),
             Item("decision", "Keep defaults and tune them later."),  # the same label again: taken already
             Item("decision", "No custom Credo checks"),  # the right label, the wrong kind
             Item("decision", "Run bd ready to see available work.")]
    assert extraction_eval.score(items, labels) == Score(
        found=Counter(decision=4), right=Counter(decision=1),
        labelled=Counter(decision=1, constraint=1), recalled=Counter(decision=1))


def test_one_labelled_session_with_the_heuristic_prints_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # the pipeline runs in the caller's environment
    for variable in ("CHECKPOINT_DB", "CHECKPOINT_SOURCES", "CHECKPOINT_EXTRACTOR"):
        monkeypatch.delenv(variable, raising=False)
    assert extraction_eval.main(["--extractor", "heuristic", "--session", "spotter-subagent"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "extractor heuristic: 1 sessions, 9 labelled items",
        "P: right items / items found; R: labelled items found / labelled",
        "  kind         labelled  found  right      P      R",
        "  decision            5      3      3   1.00   0.60",
        "  constraint          4      6      4   0.67   1.00",
        "  question            0      0      0      -      -",
        "  overall             9      9      7   0.78   0.78",
        "per session (labelled / found / right):",
        "  spotter-subagent               9     9     7",
    ]
