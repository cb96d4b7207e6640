"""Item-level evaluation of an extractor on labelled real sessions: precision and recall per kind.

    .venv/bin/python -m scripts.extraction_eval --extractor NAME [--session NAME ...] [--labels FILE]

NAME is any extractor of the registry (checkpoint.extract.registry: heuristic, anthropic, claude-code,
codex, ...), set up as for `checkpoint now`: this script runs the real pipeline, the `checkpoint`
command of this checkout (`checkpoint now --extractor NAME`, then `checkpoint items --all --json`),
once per labelled session, each into a temp database over a temp copy of the session laid out where
its agent writes it, in your environment (your API key, CHECKPOINT_* settings, logins). Nothing is
written outside the temp directory.

The labels (tests/data/extraction_eval/labels.json, README.md there): per session, the items a
careful reader of the whole session would keep, each once, with its kind.

Matching, stated once: a word is a run of letters or digits, lower-cased, cut to its first 5
characters (so "tools"/"tool", "installs"/"install" agree), common words left out. An extracted item
(its statement and rationale) covers a label when it holds at least MATCH_SHARE of the label's words.
Each label is taken by at most one item and each item takes at most one label, the best-covering
pairs first. An item is right when it takes a label of its own kind; recall of a kind is the share
of its labels taken by an item of that kind. A superseded item counts like any other.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkpoint.extract.registry import NAMES

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "tests" / "data" / "extraction_eval" / "labels.json"
KINDS = ("decision", "constraint", "question")
MATCH_SHARE = 0.5
_STEM = 5
_COMMON = frozenset((
    "the", "a", "an", "and", "or", "of", "for", "to", "in", "on", "at", "by", "with", "via", "is", "are", "be",
    "it", "its", "this", "that", "these", "those", "we", "our", "i", "you", "as", "from", "into", "then", "all",
    "use", "uses", "using", "will", "should", "must", "do", "does", "not", "no", "yet",
))
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Label:
    kind: str
    text: str


@dataclass(frozen=True)
class Session:
    name: str
    agent: str  # "claude" or "codex": where the copy is laid out
    file: Path
    labels: tuple[Label, ...]


@dataclass(frozen=True)
class Item:
    kind: str
    text: str  # statement and rationale


@dataclass
class Score:
    found: Counter[str] = field(default_factory=Counter)  # items of a kind
    right: Counter[str] = field(default_factory=Counter)  # items that took a label of their kind
    labelled: Counter[str] = field(default_factory=Counter)
    recalled: Counter[str] = field(default_factory=Counter)  # labels taken by an item of their kind

    def add(self, other: Score) -> None:
        for mine, theirs in ((self.found, other.found), (self.right, other.right),
                             (self.labelled, other.labelled), (self.recalled, other.recalled)):
            mine.update(theirs)

    def precision(self, kind: str | None = None) -> float | None:
        found = self.found[kind] if kind else sum(self.found.values())
        return (self.right[kind] if kind else sum(self.right.values())) / found if found else None

    def recall(self, kind: str | None = None) -> float | None:
        labelled = self.labelled[kind] if kind else sum(self.labelled.values())
        return (self.recalled[kind] if kind else sum(self.recalled.values())) / labelled if labelled else None


def load(path: Path = LABELS) -> list[Session]:
    data = json.loads(path.read_text())
    return [
        Session(s["name"], s["agent"], ROOT / s["file"], tuple(Label(i["kind"], i["text"]) for i in s["items"]))
        for s in data["sessions"]
    ]


def words(text: str) -> set[str]:
    return {w[:_STEM] for w in _WORD.findall(text.casefold()) if w not in _COMMON}


def coverage(item: Item, label: Label) -> float:
    """The share of the label's words the item holds."""
    wanted = words(label.text)
    return len(wanted & words(item.text)) / len(wanted) if wanted else 0.0


def score(items: list[Item], labels: tuple[Label, ...]) -> Score:
    """Match items to labels (the rule in the module doc) and count."""
    result = Score(found=Counter(i.kind for i in items), labelled=Counter(label.kind for label in labels))
    pairs = sorted(
        ((coverage(item, label), n, m) for n, item in enumerate(items) for m, label in enumerate(labels)),
        key=lambda pair: (-pair[0], pair[1], pair[2]),
    )
    taken_items: set[int] = set()
    taken_labels: set[int] = set()
    for share, n, m in pairs:
        if share < MATCH_SHARE or n in taken_items or m in taken_labels:
            continue
        taken_items.add(n)
        taken_labels.add(m)
        if items[n].kind == labels[m].kind:
            result.right[items[n].kind] += 1
            result.recalled[labels[m].kind] += 1
    return result


def lay_out(session: Session, tmp: Path) -> Path:
    """A copy of the session where its agent writes it (a source root under `tmp`), settled (old mtime,
    so a last line without a newline is read). Returns the source root."""
    session_id = uuid.uuid5(uuid.NAMESPACE_URL, session.name)
    if session.agent == "claude":
        root = tmp / "claude" / "projects"
        target = root / "-eval" / f"{session_id}.jsonl"
    elif session.agent == "codex":
        root = tmp / "codex" / "sessions"
        target = root / "2026" / "01" / "01" / f"rollout-2026-01-01T00-00-00-{session_id}.jsonl"
    else:
        raise SystemExit(f"{session.name}: agent {session.agent!r} is not laid out by this script (claude, codex)")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(session.file, target)
    old = time.time() - 3600
    os.utime(target, (old, old))
    return root


def _checkpoint(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checkpoint", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=3600)


def extract(session: Session, extractor: str, tmp: Path) -> tuple[list[Item], str | None]:
    """The items the real pipeline makes of the session with this extractor, and what went wrong (None:
    every chunk captured)."""
    where = ["--db", str(tmp / "checkpoint.db"), "--source", str(lay_out(session, tmp))]
    now = _checkpoint(["now", "--json", "--extractor", extractor, *where])
    problem = None
    if now.returncode != 0:
        said = (now.stderr.strip() or now.stdout.strip()).splitlines()
        problem = f"`checkpoint now` exit {now.returncode}: {said[-1] if said else 'nothing said'}"
    listed = _checkpoint(["items", "--all", "--json", *where])
    if listed.returncode != 0:
        return [], problem or f"`checkpoint items` exit {listed.returncode}: {listed.stderr.strip()[-300:]}"
    found: list[dict[str, Any]] = json.loads(listed.stdout)["items"]
    return [Item(i["kind"], " ".join(filter(None, (i["statement"], i.get("rationale"))))) for i in found], problem


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(scores: dict[str, Score], extractor: str) -> str:
    total = Score()
    for one in scores.values():
        total.add(one)
    lines = [f"extractor {extractor}: {len(scores)} sessions, {sum(total.labelled.values())} labelled items",
             "P: right items / items found; R: labelled items found / labelled",
             f"  {'kind':<12}{'labelled':>9}{'found':>7}{'right':>7}{'P':>7}{'R':>7}"]
    for kind in (*KINDS, None):
        lines.append(
            f"  {kind or 'overall':<12}{total.labelled[kind] if kind else sum(total.labelled.values()):>9}"
            f"{total.found[kind] if kind else sum(total.found.values()):>7}"
            f"{total.right[kind] if kind else sum(total.right.values()):>7}"
            f"{_figure(total.precision(kind)):>7}{_figure(total.recall(kind)):>7}"
        )
    lines.append("per session (labelled / found / right):")
    for name, one in scores.items():
        counts = (sum(one.labelled.values()), sum(one.found.values()), sum(one.right.values()))
        lines.append(f"  {name:<28}{counts[0]:>4}{counts[1]:>6}{counts[2]:>6}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extractor", required=True, choices=NAMES, help="a registered extractor")
    parser.add_argument("--labels", type=Path, default=LABELS, help="the labels file (default: %(default)s)")
    parser.add_argument("--session", action="append", help="only this labelled session (repeat for more)")
    parser.add_argument("--show", action="store_true", help="also print every item found, with what it took")
    args = parser.parse_args(argv)
    sessions = load(args.labels)
    if args.session:
        unknown = sorted(set(args.session) - {s.name for s in sessions})
        if unknown:
            parser.error(f"no labelled session {', '.join(unknown)}")
        sessions = [s for s in sessions if s.name in args.session]
    scores: dict[str, Score] = {}
    problems: list[str] = []
    for session in sessions:
        with tempfile.TemporaryDirectory(prefix="checkpoint-eval-") as tmp:
            items, problem = extract(session, args.extractor, Path(tmp))
        scores[session.name] = score(items, session.labels)
        if problem:
            problems.append(f"{session.name}: {problem}")
        if args.show:
            print(f"{session.name}:")
            for item in items:
                best = max(session.labels, key=lambda label: coverage(item, label), default=None)
                took = f"  ~ {best.kind}: {best.text}" if best and coverage(item, best) >= MATCH_SHARE else "  ~ (none)"
                print(f"  {item.kind}: {item.text}\n  {took}")
    print(table(scores, args.extractor))
    for problem in problems:
        print(f"not every chunk was captured: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
