"""A reader fed records one line each, decoded and parsed as the pipeline does it, and what it made of them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from checkpoint.model import TurnDraft
from checkpoint.sources.base import LineError, ParsedLine, Reader, decode_line


def raw_of(record: dict[str, Any] | str) -> bytes:
    text = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return text.encode()


def parse_all(reader: Reader, records: list[Any], state: dict[str, Any] | None = None) -> list[ParsedLine]:
    """Each record as one line, decoded and parsed the way the pipeline does it."""
    state = {} if state is None else state
    out = []
    for record in records:
        raw = record if isinstance(record, bytes) else raw_of(record)
        try:
            objects, _ = decode_line(raw)
        except LineError:
            out.append(ParsedLine())
            continue
        for obj in objects:
            out.append(reader.parse(obj, raw, state))
    return out


def turns(parsed: list[ParsedLine]) -> list[TurnDraft]:
    return [t for p in parsed for t in p.turns]


def dropped(parsed: list[ParsedLine]) -> Counter[str]:
    total: Counter[str] = Counter()
    for p in parsed:
        total.update(p.dropped)
    return total


def dropped_records(parsed: list[ParsedLine]) -> Counter[str]:
    return Counter(policy for p in parsed for policy in p.dropped)


def session(parsed: list[ParsedLine]) -> tuple[str | None, str | None]:
    """(cwd, title) as the store keeps them: the first cwd, the latest title."""
    cwd = title = None
    for p in parsed:
        if p.session is not None:
            cwd = cwd or p.session.cwd
            title = p.session.title or title
    return cwd, title


def sample_lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    lines = data.split(b"\n")
    return lines[:-1] if data.endswith(b"\n") else lines
