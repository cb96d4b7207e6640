"""Does a change to the redactor change what it finds? Collect texts once, redact them with each
checkout (one process each: PYTHONPATH names the checkout), and compare the dumps byte for byte.

    python scripts/redact_check.py collect texts.json --db-scan ROOT... --samples DIR...
    PYTHONPATH=/work/main/daemon python scripts/redact_check.py dump texts.json base.json
    PYTHONPATH=$PWD/daemon python scripts/redact_check.py dump texts.json new.json
    cmp base.json new.json

`collect` takes, in batches: the batches a real scan of the roots hands the redactor (captured with
redaction on; nothing is stored but a scratch database), every line of the sample transcripts and
every string in them, and the secrets corpus plain and JSON-escaped. `dump` redacts each batch at
once (`redact_many`: the grouping the gate makes) and each text alone, and writes every text it
changed, with what was found in it, by kind.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _lines_and_strings(root: Path) -> list[str]:
    from checkpoint.sources.base import strings_in

    out: list[str] = []
    for path in sorted(root.rglob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            out.append(line)
            with contextlib.suppress(ValueError):
                out += [s for s in strings_in(json.loads(line)) if len(s) > 3]
    return out


def _scan_batches(roots: list[str]) -> list[list[str]]:
    """What a cold scan of the roots hands `redact_many`, batch by batch."""
    from checkpoint import cli
    from checkpoint.redact import engine

    batches: list[list[str]] = []
    inner = engine.Redactor.redact_many

    def spy(self: engine.Redactor, texts: list[str]) -> object:
        batches.append(list(texts))
        return inner(self, texts)

    with tempfile.TemporaryDirectory() as scratch, open(os.devnull, "w") as devnull:
        engine.Redactor.redact_many = spy  # type: ignore[assignment,method-assign]
        out, sys.stdout = sys.stdout, devnull
        try:
            cli.main(["scan", "--db", str(Path(scratch) / "r.db"), *(a for r in roots for a in ("--source", r))])
        finally:
            sys.stdout = out
            engine.Redactor.redact_many = inner  # type: ignore[method-assign]
    return batches


def collect(out: Path, roots: list[str], samples: list[str]) -> None:
    sys.path.insert(0, str(REPO))
    from tests.support import secrets_corpus

    batches = _scan_batches(roots) if roots else []
    rng = random.Random(5)

    def chop(texts: list[str]) -> None:  # in batches of various sizes, as the scan makes them
        i = 0
        while i < len(texts):
            n = rng.choice([1, 2, 3, 7, 30, 200, 1000])
            batches.append(texts[i:i + n])
            i += n

    for root in [*roots, *samples]:
        chop(_lines_and_strings(Path(root)))
    secrets = [s.text for seed in (1, 2, 3) for s in secrets_corpus.corpus(seed=seed, per_type=3)]
    secrets += list(secrets_corpus.BENIGN)
    secrets += [c["text"] for c in json.loads((REPO / "tests/data/gitleaks_cases.json").read_text())["cases"]]
    escaped = [json.dumps(t)[1:-1] for t in secrets]
    secrets += escaped + [t.replace("/", "\\/") for t in escaped]
    rng.shuffle(secrets)
    chop(secrets)
    out.write_text(json.dumps(batches))
    print(f"{len(batches)} batches, {sum(map(len, batches))} texts, {sum(len(t) for b in batches for t in b)} chars")


def dump(texts: Path, out: Path) -> None:
    from checkpoint import redact

    redactor = redact.redactor()
    results: list[dict[str, list[object]]] = []
    for batch in json.loads(texts.read_text()):
        results.append({str(i): [r.text, r.found] for i, r in redactor.redact_many(batch).items()})
        alone = {str(i): redactor.redact(t) for i, t in enumerate(batch)}
        results.append({i: [r.text, r.found] for i, r in alone.items() if r.found})
    out.write_text(json.dumps(results, sort_keys=True))
    print(f"{sum(map(len, results))} texts redacted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("out", type=Path)
    c.add_argument("--db-scan", nargs="*", default=[], metavar="ROOT", help="transcript roots to scan")
    c.add_argument("--samples", nargs="*", default=[str(REPO / "tests/data/samples")], metavar="DIR")
    d = sub.add_parser("dump")
    d.add_argument("texts", type=Path)
    d.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.out, args.db_scan, args.samples)
    else:
        dump(args.texts, args.out)


if __name__ == "__main__":
    main()
