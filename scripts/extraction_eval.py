"""Item-level evaluation of extractors on labelled real sessions: precision, recall and F1 per kind,
per session and overall, items matched to labels by meaning (scripts/meaning_match.py states how).

    .venv/bin/python -m scripts.extraction_eval --extractor NAME [--extractor NAME ...]
        [--set heldout|tuning] [--session NAME ...] [--labels FILE] [--show]

NAME is any extractor of the registry (checkpoint.extract.registry: heuristic, openai, anthropic,
claude-code, codex, ...), set up as for `checkpoint now`: this script runs the real pipeline, the
`checkpoint` command of this checkout (`checkpoint now --extractor NAME`, then `checkpoint items --all
--json`), once per labelled session, each into a temp database over a temp copy of the session laid
out where its agent writes it, in your environment (your API key, CHECKPOINT_* settings, logins, a
local server). Nothing is written outside the temp directory.

The sets (README.md beside each labels file):
- heldout (the default), tests/data/extraction_eval/heldout/: 8 real sessions no rule was tuned on,
  2 Japanese and 1 Russian among them, labelled before any extractor ran on them. The honest figure.
- tuning, tests/data/extraction_eval/labels.json: the spotter fixtures, which the offline rules were
  tuned on; better than the truth for `heuristic`, kept to compare model extractors.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkpoint.extract.registry import NAMES
from scripts.meaning_match import Item, Label, Score, pairs, score

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "extraction_eval"
SETS = {"heldout": DATA / "heldout" / "labels.json", "tuning": DATA / "labels.json"}
KINDS = ("decision", "constraint", "question")


@dataclass(frozen=True)
class Session:
    name: str
    agent: str  # "claude" or "codex": where the copy is laid out
    file: Path
    labels: tuple[Label, ...]
    language: str = "en"


def load(path: Path) -> list[Session]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        Session(s["name"], s["agent"], ROOT / s["file"], tuple(
            Label(i["kind"], i["text"], i.get("text_en"), tuple(i.get("lines", ())), i.get("lasting", True))
            for i in s["items"]), s.get("language", "en"))
        for s in data["sessions"]
    ]


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


def as_item(found: dict[str, Any]) -> Item:
    """An item of `checkpoint items --json` as the matcher sees it (its cited lines, its own kind)."""
    return Item(found["kind"], found["statement"], found.get("rationale"),
                tuple(int(s["line"]) for s in found.get("sources") or ()), bool(found.get("lasting", True)))


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
    return [as_item(i) for i in json.loads(listed.stdout)["items"]], problem


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _totals(one: Score, kind: str | None) -> tuple[int, int, int]:
    if kind:
        return one.labelled[kind], one.found[kind], one.right[kind]
    return sum(one.labelled.values()), sum(one.found.values()), sum(one.right.values())


def table(scores: dict[str, Score], extractor: str, languages: dict[str, str] | None = None) -> str:
    total = Score()
    for one in scores.values():
        total.add(one)
    labelled, _, right = _totals(total, None)
    lines = [f"extractor {extractor}: {len(scores)} sessions, {labelled} labelled items",
             "P: right items / items found; R: labelled items found / labelled; F1 of the two",
             f"  {'kind':<12}{'labelled':>9}{'found':>7}{'right':>7}{'P':>7}{'R':>7}{'F1':>7}"]
    for kind in (*KINDS, None):
        counts = _totals(total, kind)
        lines.append(f"  {kind or 'overall':<12}{counts[0]:>9}{counts[1]:>7}{counts[2]:>7}"
                     f"{_figure(total.precision(kind)):>7}{_figure(total.recall(kind)):>7}{_figure(total.f1(kind)):>7}")
    lines.append(f"  any kind: {total.kind_free} of {labelled} labelled items found by an item of some kind; "
                 f"one-off/lasting right on {total.lasting_agrees} of {right} right items")
    lines.append("per session (language, labelled / found / right, P R F1):")
    for name, one in scores.items():
        counts = _totals(one, None)
        language = (languages or {}).get(name, "")
        lines.append(f"  {name:<24}{language:>3}{counts[0]:>5}{counts[1]:>6}{counts[2]:>6}"
                     f"{_figure(one.precision()):>7}{_figure(one.recall()):>6}{_figure(one.f1()):>6}")
    return "\n".join(lines)


def show(session: Session, items: list[Item]) -> str:
    """Every item found, with the label it took (or none), then the labels no item took."""
    chosen = dict(pairs(items, list(session.labels)))
    lines = [f"{session.name}:"]
    for n, item in enumerate(items):
        label = session.labels[chosen[n]] if n in chosen else None
        took = f"~ {label.kind}: {label.text}" if label else "~ (no label)"
        lines.append(f"  {item.kind} {list(item.lines)}: {item.statement}\n    {took}")
    missed = sorted(set(range(len(session.labels))) - set(chosen.values()))
    lines += [f"  missed {session.labels[m].kind} {list(session.labels[m].lines)}: {session.labels[m].text}"
              for m in missed]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extractor", required=True, action="append", choices=NAMES,
                        help="a registered extractor (repeat for several)")
    parser.add_argument("--set", choices=sorted(SETS), default="heldout", help="labelled set (default: heldout)")
    parser.add_argument("--labels", type=Path, help="a labels file instead of --set's")
    parser.add_argument("--session", action="append", help="only this labelled session (repeat for more)")
    parser.add_argument("--show", action="store_true", help="also print every item found, with what it took")
    args = parser.parse_args(argv)
    sessions = load(args.labels or SETS[args.set])
    if args.session:
        unknown = sorted(set(args.session) - {s.name for s in sessions})
        if unknown:
            parser.error(f"no labelled session {', '.join(unknown)}")
        sessions = [s for s in sessions if s.name in args.session]
    problems: list[str] = []
    for extractor in args.extractor:
        scores: dict[str, Score] = {}
        for session in sessions:
            with tempfile.TemporaryDirectory(prefix="checkpoint-eval-") as tmp:
                items, problem = extract(session, extractor, Path(tmp))
            scores[session.name] = score(items, list(session.labels))
            if problem:
                problems.append(f"{extractor} on {session.name}: {problem}")
            if args.show:
                print(show(session, items))
        print(table(scores, extractor, {s.name: s.language for s in sessions}))
    for problem in problems:
        print(f"not every chunk was captured: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
