"""The offline rules: a sentence that names code derives a `uses` check; one that names no code, none."""

from __future__ import annotations

from typing import Any

import pytest

from checkpoint.checks.derive import derive_check
from checkpoint.checks.model import read_check
from checkpoint.model import ItemKind


@pytest.mark.parametrize(("sentence", "check"), [
    ("We'll use httpx instead of requests because it supports async.", {"uses": "requests"}),
    ("Switch from axios to fetch.", {"uses": "axios"}),
    ("We switched from the requests library to httpx", {"uses": "requests"}),
    ("moment is no longer used", {"uses": "moment"}),
    ("Never use eval.", {"uses": "eval"}),
    ("We no longer use Redis for caching", {"uses": "redis"}),
    ("Stop using `os.system` anywhere", {"uses": "os.system"}),
    ("Replace lodash with native methods", {"uses": "lodash"}),
    ("Do not import numpy in the CLI", {"uses": "numpy"}),
    ("Don't call charge() from src/util.py", {"uses": "charge", "calls": True, "paths": ["src/util.py"]}),
    ("never call payments.charge from util", {"uses": "payments.charge", "calls": True, "paths": ["util.*"]}),
])
def test_a_sentence_naming_code_derives_a_check(sentence: str, check: dict[str, Any]) -> None:
    derived = derive_check(sentence, ItemKind.DECISION)
    assert derived == check
    read_check(derived)  # and the check model reads it


@pytest.mark.parametrize("sentence", [
    "Use plain text instead of plain text files",
    "Use SQLite instead of it",
    "Store it in JSON rather than YAML.",
    "Avoid mocks in tests.",
    "We'll use SQLite for the job queue because it is one file.",
])
def test_a_sentence_naming_no_code_derives_nothing(sentence: str) -> None:
    assert derive_check(sentence, ItemKind.DECISION) is None


def test_a_question_derives_nothing() -> None:
    assert derive_check("Should we use httpx instead of requests?", ItemKind.QUESTION) is None
