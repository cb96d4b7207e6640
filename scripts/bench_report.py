"""scripts/bench.py's figures: each with its baseline, ratio and target, shown as one table and its notes."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any


@dataclass
class Figure:
    name: str
    ours: float
    baseline: float | None
    unit: str
    target: str
    ok: bool | None  # None: informational
    ratio: float | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.ratio is None and self.baseline:
            self.ratio = self.ours / self.baseline


def show(figures: Sequence[Figure], out: IO[str]) -> None:
    headers = ("figure", "ours", "baseline", "ratio", "target", "")
    rows = [
        (
            f.name,
            f"{fmt(f.ours)} {f.unit}",
            f"{fmt(f.baseline)} {f.unit}" if f.baseline is not None else "-",
            f"{f.ratio:.2f}" if f.ratio is not None else "-",
            f.target,
            "-" if f.ok is None else ("PASS" if f.ok else "FAIL"),
        )
        for f in figures
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    print(line, file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)), file=out)
    notes = [f for f in figures if f.note]
    if notes:
        print(file=out)
        for f in notes:
            print(f"{f.name}: {f.note}", file=out)


def fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3f}"


def log(message: str) -> None:
    print(f"· {message}", file=sys.stderr, flush=True)
