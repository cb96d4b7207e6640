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


def transcript_paths(roots: list[Path], warn: list[ReadProblem],
                     skip_dirs: Collection[str] = ()) -> Iterator[tuple[Path, str]]:
    """(root, path) of every file named like a transcript under the roots, as strings: a rescan
    skips the unchanged ones on a stat, before any Path or reader looks at them. Symlinked
    directories are not followed (no loops); unreadable directories are reported in `warn` and
    skipped. A directory named like a transcript is listed too (and walked into), so that reading
    it says what it is. Directories named in `skip_dirs` are not walked into (Checkpoint's own runs)."""

    def on_error(err: OSError) -> None:
        message = f"cannot list directory: {err.strerror}"
        warn.append(ReadProblem(str(err.filename), None, ProblemKind.UNLISTABLE, message))

    for root in roots:
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root, onerror=on_error):
            dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs)
            for name in sorted(filenames + [d for d in dirnames if claimed(d)]):
                if claimed(name):
                    yield root, os.path.join(dirpath, name)
