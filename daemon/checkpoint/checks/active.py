"""Which checks act, gathered from the two places they live: this machine's store (the items captured
here) and the repository's decision records (what a teammate shared: a clone with no database of its
own enforces them). One rule says when a check acts, whatever its source:

- never when the check is dismissed, its item dismissed or superseded, or its item held for review
  (reads as an instruction planted for an agent) and not accepted here (a record's item: held by
  the same rule, whatever status the record claims);
- otherwise when its item is accepted, or the check itself is.

A check both places know (same item, same check) is judged by the store: it hears of a supersession or
a dismissal first, and `checkpoint share` writes it into the record afterwards.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field

from checkpoint.checks.engine import ActiveCheck, CheckIssue
from checkpoint.checks.model import CheckProblem, check_id, read_check
from checkpoint.checks.records import record_checks
from checkpoint.model import SharedDecision
from checkpoint.repository import repository_of, workspace_key
from checkpoint.store import CheckRow, Store


@dataclass
class Gathered:
    active: list[ActiveCheck] = field(default_factory=list)
    issues: list[CheckIssue] = field(default_factory=list)  # checks that cannot be read
    waiting: int = 0  # proposed: their item (or they) not accepted yet
    retired: int = 0  # dismissed, or their item superseded, dismissed or held


def acts(row: CheckRow) -> bool:
    if row.state == "dismissed" or row.superseded or row.item_state == "dismissed":
        return False
    if row.held:  # held for review and not accepted by this user
        return False
    return row.item_state == "accepted" or row.state == "accepted"


def record_acts(decision: SharedDecision, check_accepted: bool) -> bool:
    status = decision.status.lower().split(" ")[0]
    if decision.superseded_by or status in ("superseded", "rejected", "deprecated"):
        return False
    return status == "accepted" or check_accepted


def held_record(decision: SharedDecision) -> bool:
    """A record's statement that reads as an instruction planted for an agent (checkpoint.extract.held):
    its checks never act, whatever status its author wrote (a record's status is a claim)."""
    from checkpoint.extract.held import item_review_reason

    return item_review_reason(decision.statement, decision.rationale) is not None


def _retired(row: CheckRow) -> bool:
    return row.state == "dismissed" or row.superseded or row.item_state == "dismissed" or row.held


def gather(store: Store | None, folder: str, decisions_dir: str) -> Gathered:
    """The checks that act for the repository `folder` is in (or for the folder, outside any)."""
    from checkpoint.team.sync import read_records

    out = Gathered()
    by_id: dict[str, ActiveCheck] = {}
    repository = repository_of(folder)
    if repository is not None:
        decisions, _ = read_records(repository, decisions_dir)
        for found in record_checks(repository, decisions):
            d = found.decision
            try:
                check = read_check(found.text)
            except CheckProblem as exc:
                bad = hashlib.blake2b(f"{d.id}|{found.text}".encode(), digest_size=6).hexdigest()
                out.issues.append(CheckIssue(bad, d.id, f"{d.path}:{found.line}: {exc}", d.path))
                continue
            if held_record(d):  # reads as an instruction planted for an agent: held, as its item is
                out.retired += 1
                continue
            if not record_acts(d, found.accepted):
                out.retired += 1 if d.superseded_by or d.state.value == "dismissed" else 0
                out.waiting += 0 if d.superseded_by or d.state.value == "dismissed" else 1
                continue
            cid = check_id(d.id, check)
            by_id[cid] = ActiveCheck(cid, d.id, check, d.statement, d.kind.value, d.path,
                                     "accepted" if found.accepted else "proposed")
    if store is not None:
        where = workspace_key(repository.root if repository else folder)
        try:
            rows = store.checks_in(where)
        except sqlite3.OperationalError:  # a read-only database from before checks: the records' alone
            rows = []
        for row in rows:
            if not acts(row):
                by_id.pop(row.id, None)
                if _retired(row):
                    out.retired += 1
                else:
                    out.waiting += 1
                continue
            try:
                check = read_check(row.text)
            except CheckProblem as exc:
                out.issues.append(CheckIssue(row.id, row.item_id, str(exc)))
                continue
            by_id.setdefault(row.id, ActiveCheck(row.id, row.item_id, check, row.statement, row.kind, "local",
                                                 row.state))
    out.active = list(by_id.values())
    return out
