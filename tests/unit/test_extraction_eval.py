"""scripts/extraction_eval.py and scripts/meaning_match.py: pairs that must and must not match (in
Japanese, Russian and English, and across languages), the one-to-one rule and the counts, the
held-out set kept apart from every set the rules were tuned on, and one labelled session through the
real pipeline with the offline extractor, printed as the table a user reads."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from scripts import extraction_eval
from scripts.meaning_match import Item, Label, Score, matches, pairs, score, tokens
from tests.support.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data"
HELDOUT = DATA / "extraction_eval" / "heldout"

FLAKE = Label("decision", "flake.nix は flake-parts を使う", "flake.nix uses flake-parts", (3, 5))
LICENSE = Label("decision", "PyPI プロバイダーで license が空の場合に license_expression にフォールバックする",
                "The PyPI provider falls back to license_expression when license is empty", (15, 21))
BRANCHES = Label("constraint", "Изменения сначала в feature ветку, потом develop, потом main",
                 "Changes go to a feature branch first, then develop, then main", (9,))
NO_VERIFY = Label("constraint", "git commit --no-verify skips all hooks, so run npm test manually when you use it",
                  None, (12,))


@pytest.mark.parametrize(("item", "label"), [
    # the user's own words, on the turn that says them
    (Item("decision", "flake.nix,flake partsを使うようにして、.envrc ignore", None, (3,)), FLAKE),
    # a paraphrase in the session's language, on another line that states it
    (Item("decision", "flake.nix を flake-parts に移行した", None, (5,)), FLAKE),
    # a model answering in English about a Japanese session: scored on the English words
    (Item("decision", "Fall back to license_expression in the PyPI provider when license is empty", None, (15,)),
     LICENSE),
    # the same statement restated in a summary far from the label's lines: the any-turn bar
    (Item("decision", "PyPI プロバイダー: license が空の場合に license_expression にフォールバック", None, (40,)),
     LICENSE),
    # Russian inflection: сначала/feature/develop/main agree whatever the endings
    (Item("constraint", "Сначала feature ветка, потом develop, потом main", None, (9,)), BRANCHES),
    (Item("constraint", "Run npm test by hand after git commit --no-verify: it skips all hooks", None, (12,)),
     NO_VERIFY),
])
def test_these_items_state_their_label(item: Item, label: Label) -> None:
    assert matches(item, label) is not None


@pytest.mark.parametrize(("item", "label"), [
    # the right turn, another subject
    (Item("decision", "`nix flake check` パスしました。", None, (3,)), FLAKE),
    (Item("constraint", "Run npm test before every release", None, (12,)), NO_VERIFY),
    # some of the words, on a turn that does not state it: under the any-turn bar
    (Item("decision", "license フィールドを読む", None, (40,)), LICENSE),
    # a page that holds the label among much else is not an item about it
    (Item("decision", "Summary: " + " ".join(f"{chr(97 + n % 26)}{chr(97 + n // 26)}word" for n in range(60))
          + " flake.nix uses flake-parts", None, (3,)), FLAKE),
    # particles alone say nothing: は, を, に
    (Item("decision", "は を に", None, (3,)), FLAKE),
])
def test_these_items_do_not(item: Item, label: Label) -> None:
    assert matches(item, label) is None


def test_tokens_are_bigrams_for_cjk_and_word_stems_elsewhere() -> None:
    assert tokens("flake-parts を使う") == {"flake", "part", "を使", "使う"}  # "parts": a plural s dropped
    assert tokens("Проверка проектов") == {"прове", "проек"}
    assert tokens("ＰｙＰＩ license_expression") == {"pypi", "licen", "expre"}  # NFKC: full-width letters


def test_one_item_takes_one_label_and_is_right_only_in_its_kind() -> None:
    labels = [FLAKE, BRANCHES]
    items = [Item("decision", "flake.nix uses flake-parts", None, (3,)),
             Item("decision", "flake.nix を flake-parts に移行した", None, (5,)),  # FLAKE again: taken already
             Item("decision", "Сначала feature ветка, потом develop, потом main", None, (9,)),  # wrong kind
             Item("decision", "Run bd ready to see available work.", None, (9,))]
    assert sorted(pairs(items, labels)) == [(0, 0), (2, 1)]
    result = score(items, labels)
    assert result == Score(found=Counter(decision=4), right=Counter(decision=1),
                           labelled=Counter(decision=1, constraint=1), recalled=Counter(decision=1),
                           kind_free=2, lasting_agrees=1)
    assert (result.precision(), result.recall()) == (0.25, 0.5)
    assert result.f1() == pytest.approx(1 / 3)


def _texts(session: Path) -> set[str]:
    """What the user and the assistant say in a Claude Code JSONL file, one entry a text block."""
    said: set[str] = set()
    for line in session.read_text(encoding="utf-8").splitlines():
        message = json.loads(line).get("message")
        content = message.get("content") if isinstance(message, dict) else None
        blocks = [content] if isinstance(content, str) else [
            b.get("text") for b in content or () if isinstance(b, dict) and b.get("type") == "text"]
        said.update(text.strip() for text in blocks if isinstance(text, str) and len(text.strip()) > 40)
    return said


def test_no_held_out_session_is_in_a_tuning_set() -> None:
    heldout = json.loads((HELDOUT / "labels.json").read_text(encoding="utf-8"))["sessions"]
    tuning_rows = [json.loads(line) for line in (DATA / "heuristic" / "turns.jsonl").read_text().splitlines()]
    tuning_rows = [row for row in tuning_rows if row["split"] == "tuning"]
    tuned_sources = {(row["repo"], row["path"]) for row in tuning_rows}
    tuned_texts = {row["text"].strip() for row in tuning_rows}
    tuned_files = [REPO_ROOT / s["file"] for s in json.loads((DATA / "extraction_eval" / "labels.json").read_text())[
        "sessions"]] + sorted((DATA / "samples").rglob("*.jsonl"))
    tuned_digests = {hashlib.sha256(path.read_bytes()).hexdigest() for path in tuned_files}
    assert len(heldout) >= 8
    assert sum(s["language"] != "en" for s in heldout) >= 2
    for session in heldout:
        file = REPO_ROOT / session["file"]
        assert file.parent == HELDOUT / "sessions"
        source = session["source"]
        assert (source.get("repo"), source.get("path")) not in tuned_sources, session["name"]
        assert hashlib.sha256(file.read_bytes()).hexdigest() not in tuned_digests, session["name"]
        assert not _texts(file) & tuned_texts, session["name"]


def test_every_held_out_label_names_lines_of_its_session() -> None:
    for session in extraction_eval.load(extraction_eval.SETS["heldout"]):
        lines = len(session.file.read_text(encoding="utf-8").splitlines())
        for label in session.labels:
            assert label.lines and all(1 <= line <= lines for line in label.lines), (session.name, label.text)


def test_one_labelled_session_with_the_heuristic_prints_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # the pipeline runs in the caller's environment
    for variable in ("CHECKPOINT_DB", "CHECKPOINT_SOURCES", "CHECKPOINT_EXTRACTOR"):
        monkeypatch.delenv(variable, raising=False)
    assert extraction_eval.main(["--extractor", "heuristic", "--set", "tuning", "--session", "spotter-subagent"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "extractor heuristic: 1 sessions, 9 labelled items",
        "P: right items / items found; R: labelled items found / labelled; F1 of the two",
        "  kind         labelled  found  right      P      R     F1",
        "  decision            5      3      3   1.00   0.60   0.75",
        "  constraint          4      6      4   0.67   1.00   0.80",
        "  question            0      0      0      -      -      -",
        "  overall             9      9      7   0.78   0.78   0.78",
        "  any kind: 7 of 9 labelled items found by an item of some kind; one-off/lasting right on 6 of 7 right items",
        "per session (language, labelled / found / right, P R F1):",
        "  spotter-subagent         en    9     9     7   0.78  0.78  0.78",
    ]
