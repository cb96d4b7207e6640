"""`checkpoint check` over a repository: which files (the staged and changed ones, those changed since
a ref, every file, or the paths given), read once each, bounded, with the active checks' engine.

Git is asked only for file names (`git diff --name-only`, `git ls-files`), with a timeout; nothing in
a file is ever executed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from checkpoint.checks.engine import MAX_FILE_BYTES, ActiveCheck, CheckIssue, Engine, Hit

GIT_SECONDS = 30.0
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "target", "dist", "build"})


class FilesUnknown(Exception):
    """Which files to check cannot be said (not a repository and no paths, an unknown ref): a usage error."""


@dataclass
class CheckRun:
    checks: Sequence[ActiveCheck]
    hits: list[Hit] = field(default_factory=list)
    issues: list[CheckIssue] = field(default_factory=list)
    files: int = 0  # files read
    skipped: int = 0  # too large, binary or unreadable


def _git(root: str, *args: str) -> list[str]:
    try:
        done = subprocess.run(["git", "-C", root, *args], capture_output=True, timeout=GIT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FilesUnknown(f"git {' '.join(args[:2])} failed: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise FilesUnknown(f"git {' '.join(args[:2])}: {said[-1] if said else 'failed'}")
    return [p for p in done.stdout.decode(errors="surrogateescape").split("\0") if p]


def changed_files(root: str, since: str | None) -> list[str]:
    """Staged, changed and new files (relative to the top folder); with `since`, also every file changed
    between that ref and HEAD (a pull request's files in CI)."""
    names: dict[str, None] = {}
    if since:
        names.update(dict.fromkeys(_git(root, "diff", "--name-only", "-z", "--diff-filter=ACMR", f"{since}...HEAD")))
    names.update(dict.fromkeys(_git(root, "diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR")))
    names.update(dict.fromkeys(_git(root, "diff", "--name-only", "-z", "--diff-filter=ACMR")))
    names.update(dict.fromkeys(_git(root, "ls-files", "-z", "--others", "--exclude-standard")))
    return list(names)


def _walk(top: Path, root: Path) -> Iterable[str]:
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            yield Path(folder, name).relative_to(root).as_posix()


def all_files(root: str, in_repository: bool) -> list[str]:
    if in_repository:
        return _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return list(_walk(Path(root), Path(root)))


def given_files(root: str, paths: Sequence[str], in_repository: bool) -> list[str]:
    """The files the PATH arguments name (a folder: the files below it), relative to the top folder."""
    out: dict[str, None] = {}
    top = Path(root).resolve()
    for given in paths:
        path = Path(given).resolve()
        if not path.exists():
            raise FilesUnknown(f"{given}: no such file or folder")
        try:
            relative = path.relative_to(top)
        except ValueError:
            raise FilesUnknown(f"{given}: not inside {root}") from None
        if path.is_dir():
            below = (_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                          relative.as_posix() or ".") if in_repository else _walk(path, top))
            out.update(dict.fromkeys(below))
        else:
            out[relative.as_posix()] = None
    return list(out)


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None  # binary
    return data.decode("utf-8", errors="replace")


def run_checks(root: str, files: Iterable[str], checks: Sequence[ActiveCheck]) -> CheckRun:
    engine = Engine(checks)
    run = CheckRun(checks)
    if engine.checks:
        for relative in files:
            if not engine.wants(relative):
                continue
            text = _read(Path(root) / relative)
            if text is None:
                run.skipped += 1
                continue
            run.files += 1
            run.hits += engine.scan(relative, text)
    run.issues = engine.issues
    return run
