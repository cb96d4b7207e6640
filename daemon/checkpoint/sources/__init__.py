"""Transcript sources: discovery under the roots, the tailer, and one reader per format.

A new format is one module with a Reader, added to READERS.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from checkpoint.model import ProblemKind, ReadProblem
from checkpoint.sources.base import NOT_YET, Claim, FileRole, Head, JsonObject, Look, Reader
from checkpoint.sources.claude_code import ClaudeCodeReader
from checkpoint.sources.codex import CodexReader
from checkpoint.sources.copilot import CopilotReader
from checkpoint.sources.gemini import GeminiReader
from checkpoint.sources.opencode import OpencodeReader
from checkpoint.sources.tailer import SETTLE_SECONDS

# Asked in order: the Claude reader claims any other .jsonl it is shown, so the readers of named
# layouts come first.
READERS: dict[str, Reader] = {reader.agent: reader for reader in (
    CodexReader(), GeminiReader(), CopilotReader(), OpencodeReader(), ClaudeCodeReader())}
# The agents whose CLI deletes old transcripts (a reader that `Expires`): their sessions can be at risk.
EXPIRING = frozenset(agent for agent, reader in READERS.items() if getattr(reader, "deletes_old_transcripts", False))


@dataclass(frozen=True)
class FoundFile:
    path: Path
    role: FileRole
    facts: JsonObject = field(default_factory=dict)  # the claim's: seeds the reader's state at each reading


def find(path: Path, readers: Iterable[Reader] | None = None) -> FoundFile | None:
    """The reader whose file this is, and the session it belongs to: what every reader asked to see
    of it is read once, then each is asked in turn (the first "mine" wins; a "not yet" means the
    file is asked again once it changes). None: no reader's file, or not yet."""
    asked = list(READERS.values() if readers is None else readers)
    head = read_head(path, [reader.looks_at(path) for reader in asked])
    for reader in asked:
        answer = reader.locate(path, head)
        if answer is NOT_YET:
            return None
        if isinstance(answer, Claim):
            return FoundFile(path, answer.role, answer.facts)
    return None


def locate(path: Path, readers: Iterable[Reader] | None = None) -> FileRole | None:
    """The session a file belongs to (`find` without what the claim learnt for the reading)."""
    found = find(path, readers)
    return None if found is None else found.role


def read_head(path: Path, looks: Iterable[Look]) -> Head:
    """Once, what the readers asked to see of a file: as many of its first bytes as the most any asked
    for (all of it if one did), and the files beside it they named that can be read. A FIFO or a
    directory is not opened (that would wait for a writer): `regular` is False, as for a file that
    cannot be read; reading it then says what it is."""
    looks = list(looks)
    size = max((look.head for look in looks), default=0)
    whole = any(look.whole for look in looks)
    beside: dict[Path, bytes] = {}
    for near in dict.fromkeys(p for look in looks for p in look.beside):
        try:
            if near.is_file():
                beside[near] = near.read_bytes()
        except OSError:
            continue  # unreadable: as if it were not there
    if not size and not whole:
        return Head(b"", beside=beside)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return Head(b"", regular=False, beside=beside)
        with open(path, "rb") as fh:
            data = fh.read() if whole else fh.read(size)
    except OSError:
        return Head(b"", regular=False, beside=beside)
    return Head(data, settled=time.time() - st.st_mtime >= SETTLE_SECONDS, beside=beside)


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
