"""A repository's decision records into the store: every front end calls `sync_folders` for the
folders it reads (the CLI for its cwd or --workspace, the hooks and the MCP server for their cwd, the
daemon for its workspace folders, again when a record changes), then reads items as it always does.

The records are read from the worktree the folder is in (`<top>/<decisions_dir>/*.md`); a folder in
no repository has none. Cheap when nothing changed: the files are read (a few KB each) and the store
writes only what differs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from checkpoint.model import SharedDecision
from checkpoint.repository import Repository, repository_of
from checkpoint.store import SharedProblem, Store, SyncReport
from checkpoint.team.records import RecordProblem, parse

MAX_RECORD_BYTES = 256 * 1024  # a decision is a paragraph or two; a larger file is not one


def records_dir(repository: Repository, decisions_dir: str) -> Path:
    return Path(repository.root) / decisions_dir


def inside(path: Path | str, repository: Repository) -> bool:
    """Whether `path`, its symlinks followed, is in the repository's worktree: a committed symlink
    (docs/decisions -> ~/.ssh, a record -> /etc/passwd) must not make Checkpoint read or write
    elsewhere."""
    root = os.path.realpath(repository.root)
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def record_files(repository: Repository, decisions_dir: str) -> list[Path]:
    folder = records_dir(repository, decisions_dir)
    if not inside(folder, repository):
        return []
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
    except OSError:
        return []


def read_records(repository: Repository, decisions_dir: str) -> tuple[list[SharedDecision], list[SharedProblem]]:
    """Every record of the worktree, in name order; a file that is not one is a problem (file:line)."""
    decisions: list[SharedDecision] = []
    problems: list[SharedProblem] = []
    seen: dict[str, str] = {}
    for path in record_files(repository, decisions_dir):
        relative = os.path.relpath(path, repository.root)
        if not inside(path, repository):
            problems.append(SharedProblem(str(path), 0, "a symlink to a file outside the repository: not read"))
            continue
        try:
            if path.stat().st_size > MAX_RECORD_BYTES:
                problems.append(SharedProblem(str(path), 0, f"over {MAX_RECORD_BYTES} bytes: not a decision record"))
                continue
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(SharedProblem(str(path), 0, f"cannot be read: {exc}"))
            continue
        found = parse(text, relative)
        if isinstance(found, RecordProblem):
            problems.append(SharedProblem(str(path), found.line, found.message))
        elif found.id in seen:
            problems.append(SharedProblem(str(path), 1, f"item {found.id} is shared in {seen[found.id]} already"))
        else:
            seen[found.id] = relative
            decisions.append(found)
    return decisions, problems


def repositories(folders: Iterable[str]) -> list[Repository]:
    """The repositories of these folders, each once (two worktrees of a clone: the first named)."""
    out: dict[str, Repository] = {}
    for folder in folders:
        repository = repository_of(folder)
        if repository is not None:
            out.setdefault(repository.common_dir, repository)
    return list(out.values())


def without_secrets(decision: SharedDecision) -> SharedDecision:
    """A record's text as it may be stored: a teammate's record is text from outside like a transcript,
    and a key pasted into it is replaced before it reaches the database (and from there the agent,
    search, the editor), whatever the `redact` setting says."""
    from checkpoint import redact

    redactor = redact.redactor()
    statement = redactor.redact(decision.statement).text
    rationale = redactor.redact(decision.rationale).text if decision.rationale else decision.rationale
    files = tuple(redactor.redact(f).text for f in decision.files)
    if (statement, rationale, files) == (decision.statement, decision.rationale, decision.files):
        return decision
    return decision._replace(statement=statement, rationale=rationale, files=files)


def judge(statement: str, rationale: str | None) -> bool:
    """Whether a record is held for review: a record is as untrusted as a transcript (a pull request
    brings whatever its author wrote), so it passes the same rule (checkpoint.extract.held) and
    reaches agents only once this user accepts it. The store asks only for a new or reworded record:
    a hook over unchanged records never loads the rule."""
    from checkpoint.extract.held import held_for_review  # on use: its patterns take a while to compile

    return held_for_review(statement, rationale)


def sync_folders(store: Store, folders: Sequence[str], decisions_dir: str) -> SyncReport:
    """The records of the repositories these folders are in, their secrets replaced, into the store."""
    changed = records = problems = 0
    for repository in repositories(folders):
        decisions, bad = read_records(repository, decisions_dir)
        decisions = [without_secrets(d) for d in decisions]
        report = store.sync_shared(repository.common_dir, repository.root, decisions, bad, judge)
        changed += report.changed
        records += report.records
        problems += report.problems
    return SyncReport(changed=changed, records=records, problems=problems)


def refresh(db: Path, folders: Sequence[str], decisions_dir: str, busy_seconds: float = 0.5) -> SyncReport:
    """`sync_folders` for a front end that otherwise only reads (the hooks, the MCP server): the
    store is opened for writing only when a folder is in a repository, and only when it exists at the
    current schema (neither created nor migrated on an agent's path). Raises what opening the store
    raises (StoreUnavailable) and sqlite3 errors (a writer holding the lock past `busy_seconds`, which
    applies from the first statement)."""
    if not repositories(folders):
        return SyncReport(0, 0, 0)
    store = Store(db, busy_seconds=busy_seconds, migrating=False)
    try:
        return sync_folders(store, folders, decisions_dir)
    finally:
        store.close()
