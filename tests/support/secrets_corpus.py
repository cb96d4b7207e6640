"""Two corpora of secrets and the detection rate of Checkpoint's redaction on each, and its false
positives on benign text and on the real sample transcripts.

- "own": fake secrets in the shapes real ones have, in the places transcripts hold them, written for
  these detectors. Every value is made up at run time from a seeded generator (prefixes are joined to
  random bodies, so no real or even static key-shaped string sits in this file).
- "gitleaks": the literal test cases of gitleaks' rules (tests/data/gitleaks_cases.json, with the
  repository, path and commit of each rule file): secrets and near misses written by someone else.
  Detected: something in the case was redacted; a benign case is a false positive when anything is.
- "samples": every line of the real public transcripts (/work/shared/samples and tests/data, which
  their sources sanitised): what is redacted there is counted, by kind, as benign false positives.

Used by tests/unit/redact/test_redact.py and tests/e2e/test_privacy.py; run it to print the figures, for
the detectors of this checkout or, with --baseline REV, of a git revision (its daemon/ is read with
`git archive` into a temporary directory and this script runs again against it):

    .venv/bin/python -m scripts.secrets_corpus [--seed N] [--per-type N] [--baseline REV]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.secrets_shapes import SHAPES, Maker, Secret, aws_access_key, github_token, pem_body, slack_token
from scripts.secrets_spoken import SPOKEN_MAKERS

MAKERS: dict[str, Maker] = {**SHAPES, **SPOKEN_MAKERS}
SPOKEN = tuple(SPOKEN_MAKERS)
__all__ = ["MAKERS", "SPOKEN", "Secret", "aws_access_key", "github_token", "pem_body", "slack_token"]


def corpus(seed: int = 0, per_type: int = 3) -> list[Secret]:
    """`per_type` rounds of every maker: each round a fresh value in each of its contexts."""
    rng = random.Random(seed)
    return [secret for _ in range(per_type) for make in MAKERS.values() for secret in make(rng)]


BENIGN = [
    "The token budget is 16000 per chunk; max_tokens = 4096 for the answer.",
    "token_count = len(tokens)\nif token_count > MAX_TOKENS:\n    raise TooLong(token_count)",
    'api_key = os.environ["ANTHROPIC_API_KEY"]\nclient = anthropic.Anthropic(api_key=api_key)',
    "password = getpass.getpass()\nself.password_field = form.get('password')",
    "headers = {'Authorization': f'Bearer {token}'}\nTOKEN=$(gh auth token)\nexport API_KEY=${API_KEY:-}",
    "commit 3f9a8c2d1e7b6a5f4c3b2a1908f7e6d5c4b3a291 (HEAD -> main)",
    "session 5eed0000-1357-4131-8000-000000000001, turn 7c9e6679-7425-40de-944b-e07cc4dd7a1f",
    "See https://docs.example.com/guide?page=2#auth and git@github.com:org/repo.git",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "def check_password(password: str) -> bool:\n    return bcrypt.checkpw(password.encode(), stored)",
    "Keys are prefixed: sk-ant- for Anthropic, ghp_ for GitHub, AKIA for AWS access key ids.",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "The primary key is (session_id, seq); sort_key: created_at",
    '{"key": "value", "token_type": "bearer", "expires_in": 3600}',
    "/home/dev/projects/checkpoint/daemon/checkpoint/extract/anthropic.py:123: def fit(self)",
    "KEYBOARD_LAYOUT=us\nTOKENIZERS_PARALLELISM=false\nMAX_TOKENS=4096\nPASSWORD_MIN_LENGTH=12",
    "We'll use marker-1a2b3c4d5e6f for the parser layer.",
    "run(max_tokens=4096, sort_key=created_at) and GET /items?page=2&key=value&token_type=bearer",
    "checkpoint now --api-key=$ANTHROPIC_API_KEY --max-tokens=200000 token_budget=16000",
    "Decision: passwords are hashed with argon2id; never log the Authorization header.",
]


def rates(secrets: list[Secret], redact: Callable[[str], str]) -> dict[str, tuple[int, int]]:
    """Per type: (detected, total); detected means the value is gone from the redacted text."""
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for secret in secrets:
        total[secret.kind] += 1
        if secret.value not in redact(secret.text):
            found[secret.kind] += 1
    return {kind: (found[kind], total[kind]) for kind in total}


ROOT = Path(__file__).resolve().parents[1]
GITLEAKS_CASES = ROOT / "tests" / "data" / "gitleaks_cases.json"
SAMPLE_ROOTS = (ROOT / "tests" / "data" / "samples", ROOT.parent / "shared" / "samples", Path("/work/shared/samples"))


@dataclass(frozen=True)
class Case:
    rule: str  # the gitleaks rule the case tests
    text: str
    secret: bool  # True: gitleaks must flag it; False: it must not


def gitleaks_cases(path: Path = GITLEAKS_CASES) -> list[Case]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [Case(c["rule"], c["text"], c["label"] == "secret") for c in data["cases"]]


def sample_lines() -> Iterator[tuple[str, str]]:
    """(file, line) of every real sample transcript, once each (the two copies of the samples overlap)."""
    seen: set[str] = set()
    for root in SAMPLE_ROOTS:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.jsonl")):
            if "secrets" in path.relative_to(root).parts:
                continue  # the secret scanners' own test data: secrets on purpose
            key = str(path.relative_to(root))
            if key in seen:
                continue
            seen.add(key)
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.strip():
                    yield key, line


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
