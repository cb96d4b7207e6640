"""Meaning-level matching of extracted items to labelled items, for scripts/extraction_eval.py.

Stated once (docs/choosing-an-extractor.md quotes it):

- Tokens. Text is NFKC-normalised and case-folded. A run of Chinese, Japanese or Korean script gives
  its character bigrams (so 使う in "flake-partsを使うようにして" and in "flake-parts を使う" agree
  without a word splitter); a one-character run gives that character, unless it is kana (a particle
  such as は or を says nothing). Any other run of letters or digits is a word, cut to its first 5
  characters after a plural `s` is dropped (so "tools"/"tool", "falls"/"fall", "проверка"/"проверяем"
  agree), common words left out. `_` and `-`
  split words: `license_expression` is "licen" and "expre".
- Score of an item against a label: how much they say the same, both ways: the harmonic mean of the
  share of the label's tokens that the item (statement and rationale) holds and the share of the item
  statement's tokens that are the label's. So a long page that happens to contain a label's words
  scores low, as does a label's one shared word. Taken on the label's own words and on its English
  words (`text_en`), the higher: a model that answers in English about a Japanese session is scored on
  the English gloss.
- Same turn: one of the item's source lines is one of the lines the label lists. Then a score of
  SAME_TURN_SHARE is enough; elsewhere it takes ANY_TURN_SHARE (a statement repeated later in a
  summary is found there). A label that lists no lines is treated as said on every turn.
- One to one: pairs are taken best score first; an item takes at most one label and a label is taken
  by at most one item. An item is right when it takes a label of its own kind (`kind_free` counts a
  take of any kind, for the figure that forgives kind mix-ups).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

SAME_TURN_SHARE = 0.45
ANY_TURN_SHARE = 0.6
_STEM = 5
_COMMON = frozenset((
    # English
    "the", "a", "an", "and", "or", "of", "for", "to", "in", "on", "at", "by", "with", "via", "is", "are", "be",
    "it", "its", "this", "that", "these", "those", "we", "our", "i", "you", "as", "from", "into", "then", "all",
    "use", "uses", "using", "will", "should", "must", "do", "does", "not", "no", "yet", "so", "when", "now",
    # Russian
    "и", "в", "во", "на", "не", "что", "с", "со", "по", "для", "а", "это", "как", "то", "из", "к", "у", "же",
))
# Chinese (Han), Japanese (kana), Korean (Hangul): scripts written without spaces between words.
_CJK = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_RUN = re.compile(f"[{_CJK}]+|[^\\W_{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff]")


def tokens(text: str) -> set[str]:
    """The tokens of `text` (the module doc says how)."""
    found: set[str] = set()
    for run in _RUN.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _CJK_CHAR.match(run):  # a run of CJK script
            if len(run) == 1:
                found.update(() if _KANA.match(run) else (run,))
            else:
                found.update(run[n:n + 2] for n in range(len(run) - 1))
        elif run not in _COMMON:
            found.add((run[:-1] if run.isascii() and len(run) > 3 and run.endswith("s") and not run.endswith("ss")
                       else run)[:_STEM])
    return found


@dataclass(frozen=True)
class Label:
    kind: str
    text: str
    text_en: str | None = None
    lines: tuple[int, ...] = ()
    lasting: bool = True


@dataclass(frozen=True)
class Item:
    kind: str
    statement: str
    rationale: str | None = None
    lines: tuple[int, ...] = ()  # the transcript lines the item cites (its sources)
    lasting: bool = True


def similarity(item: Item, label: Label) -> float:
    """How much the item and the label say the same (the module doc's score), in [0, 1]."""
    held = tokens(" ".join(filter(None, (item.statement, item.rationale))))
    said = tokens(item.statement)
    best = 0.0
    for wording in filter(None, (label.text, label.text_en)):
        wanted = tokens(wording)
        if not wanted or not said:
            continue
        covered, about = len(wanted & held) / len(wanted), len(wanted & said) / len(said)
        if covered and about:
            best = max(best, 2 * covered * about / (covered + about))
    return best


def same_turn(item: Item, label: Label) -> bool:
    return not label.lines or bool(set(item.lines) & set(label.lines))


def matches(item: Item, label: Label) -> float | None:
    """The pair's score when it counts as a match, else None."""
    score = similarity(item, label)
    return score if score >= (SAME_TURN_SHARE if same_turn(item, label) else ANY_TURN_SHARE) else None


def pairs(items: list[Item], labels: list[Label]) -> list[tuple[int, int]]:
    """(item index, label index) of the one-to-one matching, best score first."""
    scored = sorted(
        ((score, n, m) for n, item in enumerate(items) for m, label in enumerate(labels)
         if (score := matches(item, label)) is not None),
        key=lambda pair: (-pair[0], pair[1], pair[2]),
    )
    taken_items: set[int] = set()
    taken_labels: set[int] = set()
    chosen: list[tuple[int, int]] = []
    for _, n, m in scored:
        if n not in taken_items and m not in taken_labels:
            taken_items.add(n)
            taken_labels.add(m)
            chosen.append((n, m))
    return chosen


@dataclass
class Score:
    found: Counter[str] = field(default_factory=Counter)  # items of a kind
    right: Counter[str] = field(default_factory=Counter)  # items that took a label of their kind
    labelled: Counter[str] = field(default_factory=Counter)
    recalled: Counter[str] = field(default_factory=Counter)  # labels taken by an item of their kind
    kind_free: int = 0  # labels taken by an item of any kind
    lasting_agrees: int = 0  # right items whose lasting/one-off flag is the label's

    def add(self, other: Score) -> None:
        for mine, theirs in ((self.found, other.found), (self.right, other.right),
                             (self.labelled, other.labelled), (self.recalled, other.recalled)):
            mine.update(theirs)
        self.kind_free += other.kind_free
        self.lasting_agrees += other.lasting_agrees

    def precision(self, kind: str | None = None) -> float | None:
        found = self.found[kind] if kind else sum(self.found.values())
        return (self.right[kind] if kind else sum(self.right.values())) / found if found else None

    def recall(self, kind: str | None = None) -> float | None:
        labelled = self.labelled[kind] if kind else sum(self.labelled.values())
        return (self.recalled[kind] if kind else sum(self.recalled.values())) / labelled if labelled else None

    def f1(self, kind: str | None = None) -> float | None:
        p, r = self.precision(kind), self.recall(kind)
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r) if p + r else 0.0


def score(items: list[Item], labels: list[Label]) -> Score:
    """Match items to labels (the module doc's rule) and count."""
    result = Score(found=Counter(i.kind for i in items), labelled=Counter(label.kind for label in labels))
    for n, m in pairs(items, labels):
        result.kind_free += 1
        if items[n].kind == labels[m].kind:
            result.right[items[n].kind] += 1
            result.recalled[labels[m].kind] += 1
            result.lasting_agrees += items[n].lasting == labels[m].lasting
    return result
