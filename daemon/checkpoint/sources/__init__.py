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
