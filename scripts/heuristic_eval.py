"""Precision and recall of the offline heuristic on the labelled sentences of tests/data/heuristic,
per kind and overall, on the held-out part and the tuning part, beside a baseline: the heuristic as
it was at a fixed commit (read with `git show`, so no old copy of it lives in the tree).

    .venv/bin/python -m scripts.heuristic_eval [--baseline REV] [--split heldout|tuning]

Every labelled turn is given to the extractor as a chunk of its own. An extracted item is matched to
the labelled sentence of its turn that shares the most words with it (statement and rationale
together, words compared lower-cased); it matches only when the shared words are at least 60 % of
the sentence's words and 60 % of the item's, so a fragment of a sentence does not count as the
sentence. An item is right when it matches a sentence labelled with its own kind; an item that
matches nothing, matches a sentence labelled otherwise, or matches a sentence an earlier item
already took, is wrong. Recall of a kind: its labelled sentences matched by an item of that kind.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import types
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from checkpoint.answer import Extraction
from checkpoint.model import ChunkInput, ItemKind, Role, TurnSlice

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "heuristic"
BASELINE_REV = "2f91a44"  # main before round 3 changed the heuristic (9dfa79b: before round 1)
KINDS = [kind.value for kind in ItemKind]
SPLITS = ("heldout", "tuning")
MATCH_SHARE = 0.6


class Extractor(Protocol):
    def extract(self, chunk: ChunkInput) -> Extraction: ...


@dataclass(frozen=True)
class Labelled:
    turn: str
    index: int
    label: str
    text: str


@dataclass
class Turn:
    id: str
    split: str
    role: Role
    text: str
    sentences: list[Labelled] = field(default_factory=list)


@dataclass
class Score:
    right: Counter[str] = field(default_factory=Counter)  # items of a kind that match their label
    found: Counter[str] = field(default_factory=Counter)  # items of a kind
    labelled: Counter[str] = field(default_factory=Counter)  # sentences labelled with a kind
    recalled: Counter[str] = field(default_factory=Counter)

    def precision(self, kind: str | None = None) -> float | None:
        found = self.found[kind] if kind else sum(self.found.values())
        right = self.right[kind] if kind else sum(self.right.values())
        return right / found if found else None

    def recall(self, kind: str | None = None) -> float | None:
        labelled = self.labelled[kind] if kind else sum(self.labelled.values())
        recalled = self.recalled[kind] if kind else sum(self.recalled.values())
        return recalled / labelled if labelled else None


def load(data: Path = DATA) -> list[Turn]:
    turns: dict[str, Turn] = {}
    for line in (data / "turns.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        turns[row["turn"]] = Turn(row["turn"], row["split"], Role(row["role"]), row["text"])
    for line in (data / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        turns[row["turn"]].sentences.append(Labelled(row["turn"], row["index"], row["label"], row["text"]))
    return list(turns.values())


def _words(text: str) -> Counter[str]:
    return Counter("".join(c if c.isalnum() else " " for c in text.lower()).split())


def match(item_text: str, sentences: Iterable[Labelled]) -> Labelled | None:
    """The labelled sentence an item states, by shared words (both ways >= MATCH_SHARE), or None."""
    item = _words(item_text)
    best, best_share = None, 0.0
    for sentence in sentences:
        words = _words(sentence.text)
        shared = sum((item & words).values())
        if not words or not item:
            continue
        share = min(shared / sum(words.values()), shared / sum(item.values()))
        if share >= MATCH_SHARE and share > best_share:
            best, best_share = sentence, share
    return best


def score(extractor: Extractor, turns: list[Turn], split: str) -> Score:
    result = Score()
    for number, turn in enumerate(t for t in turns if t.split == split):
        for sentence in turn.sentences:
            if sentence.label != "none":
                result.labelled[sentence.label] += 1
        chunk = ChunkInput(number, "eval", "eval", None, [TurnSlice(turn.id, 0, turn.role, turn.text)], 0)
        taken: set[int] = set()
        for item in extractor.extract(chunk).items:
            kind = item.kind.value
            result.found[kind] += 1
            text = item.statement + (f" {item.rationale}" if item.rationale else "")
            hit = match(text, turn.sentences)
            if hit is not None and hit.label == kind and hit.index not in taken:
                taken.add(hit.index)
                result.right[kind] += 1
                result.recalled[kind] += 1
    return result


def _module_at(rev: str, name: str) -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{rev}:daemon/checkpoint/extract/{name}.py"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    module = types.ModuleType(f"checkpoint.extract.{name}")
    exec(compile(source, f"{rev}:{name}.py", "exec"), module.__dict__)  # the project's own code, at a commit
    return module


def baseline(rev: str = BASELINE_REV) -> Extractor:
    """The offline extractor as it was at `rev`: heuristic.py with the said.py and supersede.py of
    that commit (each loaded from git into a module of its own, put in place only while heuristic.py
    is loaded, which binds what it imports from them)."""
    names = ("said", "supersede")
    saved = {name: sys.modules.get(f"checkpoint.extract.{name}") for name in names}
    try:
        for name in names:
            sys.modules[f"checkpoint.extract.{name}"] = _module_at(rev, name)
        with _parent_attributes(names):
            module = _module_at(rev, "heuristic")
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(f"checkpoint.extract.{name}", None)
            else:
                sys.modules[f"checkpoint.extract.{name}"] = old
    extractor: Extractor = module.HeuristicExtractor()
    return extractor


@contextmanager
def _parent_attributes(names: tuple[str, ...]) -> Iterator[None]:
    """`from checkpoint.extract import supersede` reads the package's attribute, not sys.modules."""
    import checkpoint.extract as package

    saved = {name: getattr(package, name, None) for name in names}
    for name in names:
        setattr(package, name, sys.modules[f"checkpoint.extract.{name}"])
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                delattr(package, name)
            else:
                setattr(package, name, old)


def _figure(value: float | None) -> str:
    return "   -" if value is None else f"{value:.2f}"


def report(scores: dict[tuple[str, str], Score], names: list[str], splits: tuple[str, ...] = SPLITS) -> str:
    lines = []
    for split in splits:
        title = (
            "held-out (round 3: sessions no rule saw, labelled and committed before the heuristic changed)"
            if split == "heldout"
            else "tuning (rules were tuned on these; the earlier held-out and fresh splits moved here)"
        )
        first = scores[(names[0], split)]
        sentences = sum(first.labelled.values())
        lines.append(f"{title}: {sentences} labelled items")
        header = f"  {'kind':<11}{'labelled':>9}" + "".join(f"  {name + ' P':>14} {name + ' R':>9} {'found':>6}"
                                                          for name in names)
        lines.append(header)
        for kind in [*KINDS, None]:
            row = f"  {kind or 'overall':<11}{first.labelled[kind] if kind else sentences:>9}"
            for name in names:
                s = scores[(name, split)]
                found = s.found[kind] if kind else sum(s.found.values())
                row += f"  {_figure(s.precision(kind)):>14} {_figure(s.recall(kind)):>9} {found:>6}"
            lines.append(row)
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE_REV, help="the commit whose heuristic is the baseline")
    parser.add_argument("--split", choices=SPLITS, action="append", help="only these splits (default: all)")
    args = parser.parse_args(argv)
    splits = tuple(args.split or SPLITS)
    from checkpoint.extract.heuristic import HeuristicExtractor

    turns = load()
    extractors: dict[str, Extractor] = {"new": HeuristicExtractor(), f"base@{args.baseline}": baseline(args.baseline)}
    scores = {(name, split): score(ex, turns, split) for name, ex in extractors.items() for split in splits}
    print(f"{sum(len(t.sentences) for t in turns)} labelled sentences in {len(turns)} turns ({DATA.relative_to(ROOT)})")
    print("P: precision (right items / items found), R: recall (labelled items found / labelled)\n")
    print(report(scores, list(extractors), splits))


if __name__ == "__main__":
    main()
