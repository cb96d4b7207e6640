"""Checks in shared decision records: the `checks:` list of a record's front matter, one JSON object a
line (a YAML flow mapping, so a YAML reader sees a list of mappings), written by `checkpoint share` and
read by `checkpoint check` in any clone, with no transcript and no database of its own:

    checks:
      - {"uses": "requests"}
      - {"lang": "python", "rule": {"pattern": "print($$$)"}, "paths": ["src/**"], "state": "accepted"}

The record's status says whether its checks act (accepted; not superseded, rejected or deprecated); a
check marked `"state": "accepted"` acts while the record is still proposed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from checkpoint.model import SharedDecision
from checkpoint.repository import Repository

if TYPE_CHECKING:
    from checkpoint.store import Store

KEY = "checks"
FENCE = "---"


class RecordCheck(NamedTuple):
    decision: SharedDecision
    text: str  # the line's JSON, as written
    line: int  # 1-based, in the record
    accepted: bool  # the line says "state": "accepted"


def _head_end(lines: list[str]) -> int:
    if not lines or lines[0].strip() != FENCE:
        return 0
    return next((n for n in range(1, len(lines)) if lines[n].strip() == FENCE), 0)


def check_lines(source: str) -> list[tuple[int, str]]:
    """(1-based line, text) of each item of the front matter's `checks:` list."""
    lines = source.replace("\r\n", "\n").split("\n")
    end = _head_end(lines)
    out: list[tuple[int, str]] = []
    inside = False
    for n in range(1, end):
        line = lines[n]
        if not line.startswith((" ", "\t", "-")):
            inside = line.split(":", 1)[0].strip() == KEY
            continue
        if inside and line.strip().startswith("-"):
            out.append((n + 1, line.strip()[1:].strip()))
    return out


def with_checks(source: str, checks: Sequence[str]) -> str:
    """The record's text with its `checks:` list replaced (removed when there are none), the rest as is."""
    lines = source.split("\n")
    end = _head_end(lines)
    if end == 0:
        return source
    head: list[str] = []
    skipping = False
    for line in lines[1:end]:
        if not line.startswith((" ", "\t", "-")):
            skipping = line.split(":", 1)[0].strip() == KEY
        if not skipping:
            head.append(line)
    block = [f"{KEY}:", *(f"  - {c}" for c in checks)] if checks else []
    return "\n".join([lines[0], *head, *block, *lines[end:]])


def record_checks(repository: Repository, decisions: Sequence[SharedDecision]) -> list[RecordCheck]:
    """The checks the records hold (each record read again: a few KB)."""
    out: list[RecordCheck] = []
    for decision in decisions:
        try:
            source = (Path(repository.root) / decision.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # read_records said so already
        for line, text in check_lines(source):
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            accepted = isinstance(data, dict) and data.get("state") == "accepted"
            out.append(RecordCheck(decision, text, line, accepted))
    return out


def record_text(check_json: dict[str, object], accepted: bool) -> str:
    """A check's line in a record (the check's own keys, then its state when accepted on its own)."""
    data = {**check_json, **({"state": "accepted"} if accepted else {})}
    return json.dumps(data, ensure_ascii=False, separators=(", ", ": "))


def shared_lines(store: Store, item_id: str, existing: str | None) -> list[str]:
    """The `checks:` lines of an item's record: those the record has (a teammate's, by hand) and the
    item's checks here that are not dismissed, each once."""
    from checkpoint.checks.model import CheckProblem, read_check

    lines = dict.fromkeys(text for _, text in check_lines(existing)) if existing else {}
    for row in store.checks_of_item(item_id):
        if row.state == "dismissed":
            continue
        try:
            check = read_check(row.text)
        except CheckProblem:
            continue
        lines[record_text(check.as_json(), row.state == "accepted")] = None
    return list(lines)
