"""The detection rate of Checkpoint's redaction on two corpora of secrets, and its false positives on
benign text and on the real sample transcripts (the corpora: tests/support/secrets_corpus.py). Run it
to print the figures, for the detectors of this checkout or, with --baseline REV, of a git revision
(its daemon/ is read with `git archive` into a temporary directory and this script runs again against
it):

    .venv/bin/python -m scripts.secrets_corpus [--seed N] [--per-type N] [--baseline REV]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from tests.support.paths import REPO_ROOT as ROOT
from tests.support.secrets_corpus import BENIGN, corpus, gitleaks_cases, rates, sample_lines


def figures(seed: int, per_type: int) -> dict[str, Any]:
    """Everything the script prints, as data (so a baseline revision can compute it in its own process)."""
    from checkpoint import redact

    r = redact.redactor()
    own = rates(corpus(seed, per_type), lambda t: r.redact(t).text)
    cases = gitleaks_cases()
    found = r.redact_many([c.text for c in cases])
    by_rule: dict[str, list[int]] = {}
    for i, case in enumerate(cases):
        if case.secret:
            entry = by_rule.setdefault(case.rule, [0, 0])
            entry[0] += i in found
            entry[1] += 1
    gitleaks_fp = [cases[i].text for i in found if not cases[i].secret]
    lines = list(sample_lines())
    hits = r.redact_many([line for _, line in lines])
    kinds: Counter[str] = Counter()
    for red in hits.values():
        kinds.update(red.found)
    return {
        "own": own,
        "gitleaks": by_rule,
        "gitleaks_benign": [sum(not c.secret for c in cases), gitleaks_fp],
        "benign": [len(BENIGN), [t for t in BENIGN if r.redact(t).found]],
        "samples": [len(lines), len(hits), dict(kinds.most_common())],
    }


def baseline_figures(rev: str, seed: int, per_type: int) -> dict[str, Any]:
    """The figures with the detectors of a git revision: its daemon/ unpacked, this script run against it."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "daemon"], capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory(prefix="checkpoint-baseline-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(tmp) / "daemon"), str(ROOT)]),
               "XDG_CACHE_HOME": str(Path(tmp) / "cache")}  # its own anchor cache
        out = subprocess.run([sys.executable, "-m", "scripts.secrets_corpus", "--seed", str(seed), "--per-type",
                              str(per_type), "--json"], capture_output=True, text=True, check=True, env=env, cwd=tmp)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _rate(found: int, total: int) -> str:
    return f"{found:>5} / {total:<5} {found / total if total else 0:6.1%}"


def report(title: str, fig: dict[str, Any]) -> None:
    own: dict[str, tuple[int, int]] = {k: (v[0], v[1]) for k, v in fig["own"].items()}
    gl: dict[str, tuple[int, int]] = {k: (v[0], v[1]) for k, v in fig["gitleaks"].items()}
    width = max(map(len, [*own, *gl]))
    print(f"== {title}")
    print("own corpus (generated for these detectors), detected / total:")
    for kind, (found, total) in own.items():
        print(f"  {kind:<{width}}  {_rate(found, total)}")
    print(f"  {'all':<{width}}  {_rate(sum(f for f, _ in own.values()), sum(t for _, t in own.values()))}")
    print("gitleaks corpus (its rules' literal test cases, tests/data/gitleaks_cases.json), detected / total:")
    for rule, (found, total) in gl.items():
        print(f"  {rule:<{width}}  {_rate(found, total)}")
    print(f"  {'all':<{width}}  {_rate(sum(f for f, _ in gl.values()), sum(t for _, t in gl.values()))}")
    total_benign, gl_fp = fig["gitleaks_benign"]
    print(f"gitleaks' benign cases changed: {len(gl_fp)} of {total_benign}")
    for text in gl_fp:
        print(f"  {text[:110]!r}")
    n_benign, touched = fig["benign"]
    print(f"own benign texts changed: {len(touched)} of {n_benign}")
    for text in touched:
        print(f"  {text[:110]!r}")
    n_lines, n_hit, kinds = fig["samples"]
    print(f"real sample transcript lines changed (benign false positives): {n_hit} of {n_lines}; by kind: {kinds}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-type", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV", help="also print the figures of this git revision's detectors")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON (what --baseline reads)")
    args = parser.parse_args()
    fig = figures(args.seed, args.per_type)
    if args.json:
        print(json.dumps(fig))
        return
    if args.baseline:
        report(f"before: the detectors of {args.baseline}", baseline_figures(args.baseline, args.seed, args.per_type))
        print()
    report("after: the detectors of this checkout", fig)


if __name__ == "__main__":
    main()
