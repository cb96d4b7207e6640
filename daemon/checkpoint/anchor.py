"""Where in a file an item belongs: on the few lines the session wrote, if they are still there,
else on the line saying it in its own words or naming what it names, else on one line.

What the session wrote to each file comes from the store (the readers hand it over as `FileEdit`
records); `locate` finds such a text in the file's current content, `mark` picks the lines an item's
diagnostic covers, never a whole file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

MIN_DISTINCT = 8  # a line shorter than this ("}", "return x") says nothing about where we are


@dataclass(frozen=True)
class Span:
    start: int  # 0-based first line
    end: int  # 0-based last line, inclusive


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


# -- marks: the few lines an item is shown on ------------------------------------------------------

MAX_MARK_LINES = 12  # a longer span (a rewritten file, a big new block) is narrowed: never a whole file
_COMMENT_STARTS = ("#", "//", "/*", "*", "--", "<!--", ";", "%", '"""', "'''")
# What a statement names in code: `backticked`, snake_case, camelCase/PascalCase, dotted.name, call().
_BACKTICKED = re.compile(r"`([^`\n]{2,60})`")
_CODE_WORD = re.compile(
    r"\b(?:[A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z_]\w*(?=\(\)))"
)
_TOO_COMMON = frozenset({"e.g", "i.e", "etc"})


class How(StrEnum):
    """How a mark was found, which its diagnostic says (and its severity follows)."""

    EDITED = "edited"  # the lines the session wrote, found in today's file
    NAMED = "named"  # the lines naming what the statement names
    LINE = "line"  # nothing found: the file's first line of code


@dataclass(frozen=True)
class Mark:
    start: int  # 0-based first line
    end: int  # 0-based last line, inclusive
    how: How
    found_written: bool  # one of the texts the session wrote is still in the file


def names_in(statement: str) -> list[str]:
    """The code-like names a statement mentions, in order, each once."""
    found = [m.strip().removesuffix("()") for m in _BACKTICKED.findall(statement)]
    found += [m.rstrip(".") for m in _CODE_WORD.findall(statement.replace("`", " "))]
    out: list[str] = []
    for name in found:
        if len(name) >= 3 and name.lower() not in _TOO_COMMON and name not in out:
            out.append(name)
    return out


def named_lines(lines: list[str], names: list[str], start: int = 0, end: int | None = None) -> list[int]:
    """The lines in [start, end] holding one of `names` as a whole word."""
    if not names:
        return []
    pattern = re.compile("|".join(rf"(?<![\w.]){re.escape(n)}(?![\w])" for n in names))
    last = len(lines) - 1 if end is None else min(end, len(lines) - 1)
    return [n for n in range(start, last + 1) if pattern.search(lines[n])]


MIN_QUOTED = 12  # a shorter statement ("Use WAL") is found in too many lines to say where it was written


def _folded(text: str) -> str:
    return " ".join(text.replace("`", "").split()).lower().rstrip(".")


def quoted_lines(lines: list[str], statement: str, start: int = 0, end: int | None = None) -> list[int]:
    """The lines in [start, end] holding the statement's own words (a plan or a README the session
    wrote, where the decision is written as said)."""
    said = _folded(statement)
    if len(said) < MIN_QUOTED:
        return []
    last = len(lines) - 1 if end is None else min(end, len(lines) - 1)
    return [n for n in range(start, last + 1) if said in _folded(lines[n])]


def first_code_line(lines: list[str], start: int = 0, end: int | None = None) -> int:
    """The first line in [start, end] that is neither blank nor a comment (`start` when none is)."""
    last = len(lines) - 1 if end is None else min(end, len(lines) - 1)
    for n in range(start, last + 1):
        text = lines[n].strip()
        if text and not text.startswith(_COMMENT_STARTS) and not text.startswith("#!"):
            return n
    return start


def mark(content: str, written: Sequence[str], statement: str) -> Mark:
    """Where an item is shown in `content`: the lines its session wrote, when a short run of them
    is still there (the one naming what the statement names, if several); within a longer run (a
    rewritten file) or else anywhere, the first line holding the statement's words, else the first
    line naming what it names; else the first line of code (of the
    long run, else of the file). Never more than MAX_MARK_LINES lines."""
    lines = content.splitlines()
    spans = [s for text in written if (s := locate(content, text)) is not None]
    names = names_in(statement)
    short = [s for s in spans if s.end - s.start < MAX_MARK_LINES]
    if short:
        best = next((s for s in short if named_lines(lines, names, s.start, s.end)), short[0])
        return Mark(best.start, best.end, How.EDITED, True)
    long = spans[0] if spans else None
    within = (quoted_lines(lines, statement, long.start, long.end) if long else quoted_lines(lines, statement)) or (
        named_lines(lines, names, long.start, long.end) if long else named_lines(lines, names))
    if within:
        return Mark(within[0], within[0], How.NAMED, bool(spans))
    line = first_code_line(lines, long.start, long.end) if long else first_code_line(lines)
    return Mark(line, line, How.LINE, bool(spans))
