"""Where in a file an item belongs: on the lines the session wrote, if they are still there.

The turns' text keeps the tool calls as the readers rendered them: Claude Code's
`[tool Edit] {"file_path": ..., "new_string": ...}` (also MultiEdit and Write), Codex's
apply_patch bodies (`*** Update File: path` hunks, raw or inside a JSON argument). From them come
the texts the session wrote per file; `locate` finds such a text in the file's current content.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from checkpoint.sources.base import strings_in

_TOOL_LINE = re.compile(r"^\[tool (\w+)\] (\{.*\})\s*$", re.MULTILINE)
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add) File: (.+?)\s*$")
MIN_DISTINCT = 8  # a line shorter than this ("}", "return x") says nothing about where we are


@dataclass(frozen=True)
class Edit:
    path: str
    text: str


@dataclass(frozen=True)
class Span:
    start: int  # 0-based first line
    end: int  # 0-based last line, inclusive


def norm(path: str, cwd: str | None = None) -> str:
    if not os.path.isabs(path) and cwd:
        path = os.path.join(cwd, path)
    return os.path.normpath(path)


def edits_in(text: str, cwd: str | None = None) -> list[Edit]:
    """Every text a tool call in this turn wrote, with the file it went to, in order."""
    out: list[Edit] = []
    for match in _TOOL_LINE.finditer(text):
        try:
            args = json.loads(match.group(2))
        except ValueError:
            continue
        if isinstance(args, dict):
            out.extend(_claude_edits(match.group(1), args, cwd))
    if "*** Begin Patch" in text:
        for patch in _patches(text):
            out.extend(_patch_edits(patch, cwd))
    return out


def _claude_edits(tool: str, args: dict[str, Any], cwd: str | None) -> Iterator[Edit]:
    path = args.get("file_path")
    if not isinstance(path, str) or not path:
        return
    path = norm(path, cwd)
    if tool in ("Edit", "MultiEdit"):
        edits = args.get("edits") if tool == "MultiEdit" else [args]
        for edit in edits if isinstance(edits, list) else []:
            if isinstance(edit, dict) and isinstance(edit.get("new_string"), str):
                yield Edit(path, edit["new_string"])
    elif tool == "Write" and isinstance(args.get("content"), str):
        yield Edit(path, args["content"])


def _patches(text: str) -> Iterator[str]:
    """apply_patch bodies: JSON-encoded inside a tool call's arguments, or raw."""
    found = False
    for line in text.splitlines():
        start = line.find("{")
        if start < 0 or "Begin Patch" not in line:
            continue
        try:
            args = json.loads(line[start:])
        except ValueError:
            continue
        for value in strings_in(args):
            if "*** Begin Patch" in value:
                found = True
                yield value
    if not found:
        yield text[text.index("*** Begin Patch") :]


def _patch_edits(patch: str, cwd: str | None) -> Iterator[Edit]:
    """The new side of each hunk (context and added lines) of an apply_patch body."""
    path: str | None = None
    hunk: list[str] = []

    def flush() -> Iterator[Edit]:
        if path and any(line.strip() for line in hunk):
            yield Edit(path, "\n".join(hunk))
        hunk.clear()

    for line in patch.splitlines():
        header = _PATCH_FILE.match(line)
        if header:
            yield from flush()
            path = norm(header.group(2), cwd)
        elif line.startswith("*** "):  # End Patch, Delete File, Move to, End of File
            yield from flush()
            if line.startswith("*** Move to: "):
                path = norm(line[len("*** Move to: ") :].strip(), cwd)
            elif not line.startswith("*** End of File"):
                path = None
        elif line.startswith("@@"):
            yield from flush()
        elif path and line.startswith(("+", " ")):
            hunk.append(line[1:])
    yield from flush()


def locate(content: str, written: str) -> Span | None:
    """The lines of `content` holding what was written: the whole text if it is still there,
    else the longest run of its lines still there (at least one of them distinctive)."""
    lines = [line.rstrip() for line in written.strip("\n").splitlines()]
    if not any(len(line.strip()) >= MIN_DISTINCT for line in lines) and len("".join(lines).strip()) < MIN_DISTINCT:
        return None
    doc = content.splitlines()
    core = "\n".join(lines)
    index = content.find(core) if core else -1
    if index >= 0:
        start = content.count("\n", 0, index)
        return Span(start, start + core.count("\n"))
    return _longest_run([line.strip() for line in lines], [line.strip() for line in doc])


def _longest_run(written: list[str], doc: list[str]) -> Span | None:
    where: dict[str, list[int]] = {}
    for number, line in enumerate(doc):
        if line:
            where.setdefault(line, []).append(number)
    best: tuple[int, int] | None = None  # (length, first doc line)
    for i, line in enumerate(written):
        if len(line) < MIN_DISTINCT:
            continue
        for j in where.get(line, []):
            k = 0
            while i + k < len(written) and j + k < len(doc) and written[i + k] == doc[j + k]:
                k += 1
            # extend upwards over short lines that also match, so a block keeps its head
            up = 0
            while i - up > 0 and j - up > 0 and written[i - up - 1] == doc[j - up - 1]:
                up += 1
            length = k + up
            if best is None or length > best[0]:
                best = (length, j - up)
    if best is None:
        return None
    return Span(best[1], best[1] + best[0] - 1)
