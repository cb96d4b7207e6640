"""Sharing an item with the team: its decision record written into the repository's decisions folder
(never committed: the developer reviews, commits and pushes it like code), kept in step when the item
is superseded, dismissed or accepted here, and removed again while it is not committed.

What a record holds is the item as extracted (statement, rationale, kind, files, links), who shared it
(git's user.name and user.email of that repository) and one sentence on where it came from (the agent,
the day, the extractor): never a turn of the transcript. Every text is checked by the redactor (always,
whatever `redact` says): an item in which a secret is found is not shared.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from checkpoint import config
from checkpoint.checks.records import shared_lines, with_checks
from checkpoint.model import ItemRecord, ItemState, SharedDecision
from checkpoint.redact import redactor
from checkpoint.repository import Repository, repository_of
from checkpoint.store import Store
from checkpoint.team.records import STATUS_OF_STATE, RecordText, file_name, render, with_status
from checkpoint.team.sync import inside, read_records, records_dir, sync_folders

GIT_SECONDS = 10.0


class ShareRefused(Exception):
    """The item cannot be shared (or unshared): the sentence says why and what to do."""


class Shared(NamedTuple):
    item_id: str
    path: str  # the record, absolute
    relative: str  # the record, relative to the repository's top folder
    created: bool  # False: the item's record was there and is rewritten

    def as_json(self) -> dict[str, Any]:
        return {"id": self.item_id, "path": self.path, "record": self.relative, "created": self.created}


def shareable(item: ItemRecord) -> str | None:
    """None when the item may leave this machine in a record; else why not. The one place that says
    which items may be shared: every front end asks it before writing a record."""
    if item.state is ItemState.DISMISSED:
        return f"item {item.id} is dismissed: accept it (or capture the decision again) before sharing it"
    if not item.lasting:  # checkpoint.extract.one_off: an order about one task, not the project's decision
        return (f"item {item.id} is an order about the task it was said in (one-off), not a decision of the "
                "project: it is not shared")
    if item.held_back:  # checkpoint.extract.held: it reads as an instruction planted for an agent
        return (f"item {item.id} is held for your review (it reads as an instruction to an agent): accept it "
                f"first (`checkpoint accept {item.id}`, or Accept in the editor) if it is a real decision")
    return None


def _git(repository: Repository, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", repository.root, *args], capture_output=True, text=True,
                          timeout=GIT_SECONDS, check=False)


def decision_makers(repository: Repository) -> str:
    """`Name <email>` as this repository's commits will say it: GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL when
    set (git's own order: they win over the configuration), else git's user.name and user.email."""
    name = os.environ.get("GIT_AUTHOR_NAME", "").strip() or _git(repository, "config", "user.name").stdout.strip()
    email = (os.environ.get("GIT_AUTHOR_EMAIL", "").strip()
             or _git(repository, "config", "user.email").stdout.strip())
    if not name and not email:
        raise ShareRefused(f"git has no user.name or user.email for {repository.root}: set them (git config"
                           " user.name ...), or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL, so that the record says who"
                           " decided")
    return f"{name} <{email}>" if name and email else name or f"<{email}>"


def _repository(folder: str) -> Repository:
    repository = repository_of(folder)
    if repository is None:
        raise ShareRefused(f"{folder} is in no git repository: a decision is shared through its repository")
    return repository


def _records_by_id(repository: Repository, settings: config.Settings) -> dict[str, SharedDecision]:
    return {d.id: d for d in read_records(repository, settings.decisions_dir)[0]}


def _write(path: Path, text: str, repository: Repository) -> None:
    """Whole or not at all: a teammate's pull or the daemon's watcher never reads half a record. Never
    through a symlink out of the repository (a committed docs/decisions -> elsewhere): refused."""
    if not inside(path.parent, repository) or (path.is_symlink() and not inside(path, repository)):
        raise ShareRefused(f"{path.parent} leads outside the repository {repository.root} (a symlink): no record "
                           "is written through it; make the decisions folder a real folder of the repository")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".checkpoint-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _no_secret(item: ItemRecord, settings: config.Settings) -> None:
    found: dict[str, int] = {}
    check = redactor(True, settings.redact_patterns)
    for text in (item.statement, item.rationale or "", *item.files):
        for kind, n in check.redact(text).found.items():
            found[kind] = found.get(kind, 0) + n
    if found:
        kinds = ", ".join(sorted(found))
        raise ShareRefused(f"item {item.id} holds what reads as a secret ({kinds}): it is not shared; dismiss it,"
                           " or capture the decision again without the secret")


def _day(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d")


def _said_day(item: ItemRecord) -> str:
    """The day the item was said: its first source turn's (the transcript's time), else the capture's."""
    for source in item.sources:
        day = (source.timestamp or "")[:10]
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
            return day
    return _day(item.created_at)


def _status(item: ItemRecord) -> str:
    return "superseded" if item.superseded_by else STATUS_OF_STATE[item.state]


def _in_repository(files: tuple[str, ...], roots: set[str]) -> tuple[str, ...]:
    """The files relative to the repository's top folder (a teammate's clone is elsewhere): an absolute
    path inside this worktree or the session's is made relative; any other is kept as it is."""
    out = []
    for f in files:
        real = os.path.realpath(f) if os.path.isabs(f) else f
        root = next((r for r in roots if real == r or real.startswith(r + os.sep)), None)
        out.append(os.path.relpath(real, root) if root else f)
    return tuple(dict.fromkeys(out))


def share(store: Store, item_id: str, folder: str, settings: config.Settings) -> Shared:
    """Write (or rewrite) the item's record in the repository `folder` is in; the records of items it
    supersedes say so too. Raises ShareRefused."""
    item = store.item(item_id)
    if item is None:
        raise ShareRefused(f"no item {item_id}")
    why = shareable(item)
    if why is not None:
        raise ShareRefused(why)
    _no_secret(item, settings)
    repository = _repository(folder)
    makers = decision_makers(repository)
    known = _records_by_id(repository, settings)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    existing = known.get(item.id)
    relative = existing.path if existing else os.path.join(settings.decisions_dir,
                                                             file_name(today, item.statement, item.id))
    session_repository = repository_of(item.cwd) if item.cwd else None
    roots = {repository.root, *([session_repository.root] if session_repository else [])}
    decision = SharedDecision(
        id=item.id, kind=item.kind, statement=item.statement, rationale=item.rationale,
        files=_in_repository(item.files, roots),
        state=item.state, status=_status(item), date=today, supersedes=item.supersedes,
        superseded_by=(item.superseded_by,) if item.superseded_by else (), path=relative,
    )
    agent = item.agent or "coding-agent"
    origin = (f"Said in a {agent} session on {_said_day(item)}; captured by Checkpoint ({item.extractor} extractor) on "
              f"{_day(item.created_at)}; shared by {makers} on {today}.")
    path = Path(repository.root) / relative
    text = render(decision, RecordText(decision_makers=makers, origin=origin))
    # the item's checks travel with it: a teammate's `checkpoint check` (CI) enforces them
    before = path.read_text(encoding="utf-8") if existing and path.is_file() else None
    _write(path, with_checks(text, shared_lines(store, item.id, before)), repository)
    for old in item.supersedes:
        if old in known:
            _restatus(Path(repository.root) / known[old].path, "superseded", (item.id,), repository)
    sync_folders(store, [repository.root], settings.decisions_dir)
    return Shared(item_id=item.id, path=str(path), relative=relative, created=existing is None)


def _restatus(path: Path, status: str, superseded_by: tuple[str, ...] | None, repository: Repository) -> None:
    text = path.read_text(encoding="utf-8")
    updated = with_status(text, status, superseded_by)
    if updated != text:
        _write(path, updated, repository)


def reflect(store: Store, item_ids: list[str], folders: list[str], settings: config.Settings) -> list[str]:
    """After items changed here (superseded, dismissed, accepted): the records of those that are
    shared in these folders' repositories say their new status. Returns the records rewritten."""
    rewritten: list[str] = []
    for folder in folders:
        repository = repository_of(folder)
        if repository is None:
            continue
        known = _records_by_id(repository, settings)
        for item_id in item_ids:
            item = store.item(item_id)
            if item is None or item_id not in known:
                continue
            path = Path(repository.root) / known[item_id].path
            before = path.read_text(encoding="utf-8")
            _restatus(path, _status(item), (item.superseded_by,) if item.superseded_by else (), repository)
            if path.read_text(encoding="utf-8") != before:
                rewritten.append(str(path))
        sync_folders(store, [repository.root], settings.decisions_dir)
    return rewritten


def committed(repository: Repository, relative: str) -> bool:
    """Whether the record is in the repository's HEAD commit (then only git can take it back)."""
    return _git(repository, "cat-file", "-e", f"HEAD:{relative}").returncode == 0


def undo(store: Store, item_id: str, folder: str, settings: config.Settings) -> str:
    """Remove the item's record while it is not committed; returns its path. Raises ShareRefused."""
    repository = _repository(folder)
    record = _records_by_id(repository, settings).get(item_id)
    if record is None:
        raise ShareRefused(f"item {item_id} has no record in {records_dir(repository, settings.decisions_dir)}")
    if committed(repository, record.path):
        raise ShareRefused(f"{record.path} is committed: remove it with `git rm {record.path}` and commit that,"
                           " so that your teammates' clones retire it too")
    _git(repository, "rm", "--cached", "--quiet", "--ignore-unmatch", "--", record.path)  # staged: unstaged
    path = Path(repository.root) / record.path
    path.unlink()
    store.mark_shared(item_id, None)
    sync_folders(store, [repository.root], settings.decisions_dir)
    return str(path)

