"""Two corpora of secrets, and benign text, for the redaction's tests and its figures
(scripts/secrets_corpus.py prints the detection rates):

- "own": fake secrets in the shapes real ones have, in the places transcripts hold them, written for
  these detectors (secrets_shapes.py, secrets_spoken.py). Every value is made up at run time from a
  seeded generator (prefixes are joined to random bodies, so no real or even static key-shaped string
  sits in these files).
- "gitleaks": the literal test cases of gitleaks' rules (tests/data/gitleaks_cases.json, with the
  repository, path and commit of each rule file): secrets and near misses written by someone else.
- "samples": every line of the real public transcripts (tests/data/samples, and the project's shared
  samples beside the checkout where it has them), which their sources sanitised.
"""
from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import REPO_ROOT
from tests.support.samples import SAMPLES
from tests.support.secrets_shapes import SHAPES, Maker, Secret, aws_access_key, github_token, pem_body, slack_token
from tests.support.secrets_spoken import SPOKEN_MAKERS

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


GITLEAKS_CASES = REPO_ROOT / "tests" / "data" / "gitleaks_cases.json"
# The samples in the repository, and the project's shared ones beside the checkout where it has them.
SAMPLE_ROOTS = (SAMPLES, REPO_ROOT.parent / "shared" / "samples")


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
