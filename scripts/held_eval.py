"""The held-item rule on the paraphrase corpus (tests/data/held/): how many malicious items would
reach an agent (not held) and how many benign decisions are held, on the tuning set and on the
held-out set, for the rule before issue 37 (checkpoint.extract.held at main 29cffd2, read from git)
and the rule now.

    python -m scripts.held_eval            # the table
    python -m scripts.held_eval --misses   # and every sentence judged wrong, by the rule now

An entry is an item's statement, or {statement, rationale}; both rules judge the item as the store
does (item_review_reason). The sets, in the order they were written: tuning (the rule was written on
it, the attacks of issue 37 among it); held_out (written before the rule); fresh, held_out_2,
held_out_3 (each written before the rule was tuned on the one before it, measured once untuned, then
tuned on; their untuned figures are in their "about" and in the report of issue 37). No set is
untuned now: a new one is the only honest measure of the next change."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

from checkpoint.extract.held import item_review_reason

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "held"
BEFORE_COMMIT = "29cffd2"  # main when issue 37 was filed: the phrase-matching rule it attacked
SETS = ("tuning", "held_out", "fresh", "held_out_2", "held_out_3")
Rule = Callable[[str, str | None], str | None]
Entry = str | dict[str, str]


def load(name: str) -> dict[str, list[Entry]]:
    data: dict[str, list[Entry]] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return data


def parts(entry: Entry) -> tuple[str, str | None]:
    if isinstance(entry, str):
        return entry, None
    return entry["statement"], entry.get("rationale")


def rule_before() -> Rule | None:
    """The rule at BEFORE_COMMIT, loaded from git (None: this checkout does not have that commit)."""
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{BEFORE_COMMIT}:daemon/checkpoint/extract/held.py"],
                           capture_output=True, text=True, check=False)
    if shown.returncode != 0:
        return None
    module = types.ModuleType("held_before")
    exec(compile(shown.stdout, f"held.py@{BEFORE_COMMIT}", "exec"), module.__dict__)  # our own past source
    judged: Rule = module.item_review_reason
    return judged


def score(rule: Rule, corpus: dict[str, list[Entry]]) -> tuple[int, int, int, int, list[str]]:
    """(malicious reaching an agent, malicious, benign held, benign, the sentences judged wrong)."""
    wrong: list[str] = []
    reached = sum(1 for e in corpus["malicious"] if rule(*parts(e)) is None)
    held = sum(1 for e in corpus["benign"] if rule(*parts(e)) is not None)
    wrong += [f"  reaches an agent: {parts(e)}" for e in corpus["malicious"] if rule(*parts(e)) is None]
    wrong += [f"  held: {parts(e)} ({rule(*parts(e))})" for e in corpus["benign"] if rule(*parts(e)) is not None]
    return reached, len(corpus["malicious"]), held, len(corpus["benign"]), wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="print every sentence the rule now judges wrong")
    args = parser.parse_args(argv)
    before = rule_before()
    print(f"{'set':10} {'rule':26} {'malicious reaching an agent':>28} {'benign held':>14}")
    misses: list[str] = []
    for name in SETS:
        corpus = load(name)
        rules: list[tuple[str, Rule | None]] = [(f"before (main {BEFORE_COMMIT})", before),
                                                ("after (this rule)", item_review_reason)]
        for label, rule in rules:
            if rule is None:
                print(f"{name:10} {label:26} {'(commit not in this checkout)':>43}")
                continue
            reached, bad, held, good, wrong = score(rule, corpus)
            print(f"{name:10} {label:26} {f'{reached}/{bad} ({reached / bad:.0%})':>28} "
                  f"{f'{held}/{good} ({held / good:.0%})':>14}")
            if rule is item_review_reason:
                misses += [f"{name}:", *wrong]
    if args.misses:
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
