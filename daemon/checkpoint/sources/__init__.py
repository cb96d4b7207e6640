"""Transcript sources: discovery under the roots, the tailer, and one reader per format.

A new format is one module with a Reader, added to READERS.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from checkpoint.model import ProblemKind, ReadProblem
from checkpoint.sources.base import FileRole, Reader
from checkpoint.sources.claude_code import ClaudeCodeReader
from checkpoint.sources.codex import CodexReader
from checkpoint.sources.copilot import CopilotReader
from checkpoint.sources.gemini import GeminiReader
from checkpoint.sources.opencode import OpencodeReader

# Asked in order: the Claude reader claims any other .jsonl it is shown, so the readers of named
# layouts come first.
READERS: dict[str, Reader] = {reader.agent: reader for reader in (
    CodexReader(), GeminiReader(), CopilotReader(), OpencodeReader(), ClaudeCodeReader())}


@dataclass(frozen=True)
class FoundFile:
    path: Path
    role: FileRole


def locate(path: Path) -> FileRole | None:
    for reader in READERS.values():
        role = reader.locate(path)
        if role is not None:
            return role
    return None


def claimed(name: str) -> bool:
    """Whether a file of this name may be a transcript of some reader's format."""
    return any(reader.claims_name(name) for reader in READERS.values())


def _walk_into(path: str, real_root: str, walked: set[tuple[int, int]], warn: list[ReadProblem]) -> bool:
    """Whether to walk into the directory at `path` (a real one or a symlink to one): not twice into
    the same directory (a loop, or two links to one folder), never into one that holds the root."""
    try:
        st = os.stat(path)
    except OSError:
        return False  # gone meanwhile: os.walk saw it as a directory a moment ago
    key = (st.st_dev, st.st_ino)
    if key in walked:
        return False  # walked already, by this path or another: nothing to add
    if os.path.islink(path):
        target = os.path.realpath(path)
        if real_root == target or real_root.startswith(target.rstrip(os.sep) + os.sep):
            warn.append(ReadProblem(path, None, ProblemKind.UNLISTABLE,
                                    f"a symlink to {target}, which holds the transcript folder; not followed"))
            return False
    walked.add(key)
    return True


def transcript_paths(roots: list[Path], warn: list[ReadProblem],
                     skip_dirs: Collection[str] = ()) -> Iterator[tuple[Path, str]]:
    """(root, path) of every file named like a transcript under the roots, as strings: a rescan
    skips the unchanged ones on a stat, before any Path or reader looks at them. A symlinked
    directory (a project folder kept elsewhere) is followed, once per real directory (no loops), and
    never to a folder that holds the root (`/`, home: the whole disk); one that points nowhere or
    there is reported in `warn`, as are unreadable directories. A directory named like a transcript
    is listed too (and walked into), so that reading it says what it is. Directories named in
    `skip_dirs` are not walked into (Checkpoint's own runs)."""

    def on_error(err: OSError) -> None:
        message = f"cannot list directory: {err.strerror}"
        warn.append(ReadProblem(str(err.filename), None, ProblemKind.UNLISTABLE, message))

    for root in roots:
        if not root.is_dir():
            continue
        real_root = os.path.realpath(root)
        st = os.stat(root)
        walked = {(st.st_dev, st.st_ino)}
        for dirpath, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=True):
            dirnames[:] = [d for d in sorted(dirnames) if d not in skip_dirs
                           and _walk_into(os.path.join(dirpath, d), real_root, walked, warn)]
            for name in filenames if dirpath == str(root) else ():  # a project folder's link that points nowhere
                if not claimed(name) and os.path.islink(full := os.path.join(dirpath, name)) \
                        and not os.path.exists(full):
                    warn.append(ReadProblem(full, None, ProblemKind.UNLISTABLE,
                                            f"a symlink to {os.readlink(full)}, which is not there; not followed"))
            for name in sorted(filenames + [d for d in dirnames if claimed(d)]):
                if claimed(name):
                    yield root, os.path.join(dirpath, name)
