"""What a tool call wrote to files, as `FileEdit` records: the helpers every reader's edit tools use,
and the apply_patch format (Codex's, also offered by Copilot CLI and opencode).

An apply_patch body names each file (`*** Update File: p`, `*** Add File: p`, `*** Move to: p`) and
gives hunks (`@@ ...`) of context (` `), removed (`-`) and added (`+`) lines; what it wrote to a file
is the new side of each hunk (context and added lines), one edit per hunk.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

import orjson

from checkpoint.model import FileEdit
from checkpoint.sources.base import strings_in

PATCH_START = "*** Begin Patch"
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add) File: (.+?)\s*$")
_MOVE_TO = "*** Move to: "


def resolved(path: str, cwd: str | None) -> str:
    """A path an agent gave, absolute against the session's folder when it was relative."""
    if not os.path.isabs(path) and cwd:
        path = os.path.join(cwd, path)
    return os.path.normpath(path)


def file_edit(path: object, text: object, cwd: str | None) -> Iterator[FileEdit]:
    """The edit of a call that wrote `text` to `path`, if both are what they should be."""
    if isinstance(path, str) and path and isinstance(text, str):
        yield FileEdit(resolved(path, cwd), text)


def each_edit(path: object, changes: object, key: str, cwd: str | None) -> Iterator[FileEdit]:
    """A multi-edit call's edits: `changes` a list of objects whose `key` holds a new text."""
    for change in changes if isinstance(changes, list) else []:
        if isinstance(change, dict):
            yield from file_edit(path, change.get(key), cwd)


def decoded(arguments: str) -> object:
    """A call's arguments as rendered in its turn, decoded when they are JSON, else the text."""
    if arguments.lstrip().startswith(("{", "[", '"')):
        try:
            return orjson.loads(arguments)
        except orjson.JSONDecodeError:
            pass
    return arguments


def patch_edits(arguments: object, cwd: str | None) -> tuple[FileEdit, ...]:
    """The edits of every apply_patch body in a call's arguments: the arguments themselves (raw
    input), or any string inside them (a JSON argument, a shell command's words)."""
    bodies: Iterable[str] = [arguments] if isinstance(arguments, str) else strings_in(arguments)
    return tuple(edit for body in bodies if PATCH_START in body for edit in _hunks(body, cwd))


def _hunks(patch: str, cwd: str | None) -> Iterator[FileEdit]:
    path: str | None = None
    hunk: list[str] = []

    def flush() -> Iterator[FileEdit]:
        if path and any(line.strip() for line in hunk):
            yield FileEdit(path, "\n".join(hunk))
        hunk.clear()

    for line in patch[patch.index(PATCH_START):].splitlines():
        header = _PATCH_FILE.match(line)
        if header:
            yield from flush()
            path = resolved(header.group(2), cwd)
        elif line.startswith("*** "):  # End Patch, Delete File, Move to, End of File
            yield from flush()
            if line.startswith(_MOVE_TO):
                path = resolved(line[len(_MOVE_TO):].strip(), cwd)
            elif not line.startswith("*** End of File"):
                path = None
        elif line.startswith("@@"):
            yield from flush()
        elif path and line.startswith(("+", " ")):
            hunk.append(line[1:])
    yield from flush()
