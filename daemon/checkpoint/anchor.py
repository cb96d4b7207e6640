"""Where in a file an item belongs: on the lines the session wrote, if they are still there.

What the session wrote to each file comes from the store (the readers hand it over as `FileEdit`
records); `locate` finds such a text in the file's current content.
"""

from __future__ import annotations

from dataclasses import dataclass

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
