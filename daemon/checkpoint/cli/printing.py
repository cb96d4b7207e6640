"""How the CLI prints what a scan, a run and the status found: the lines and tables `scan`, `now`
and `status` share."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from checkpoint import pipeline
from checkpoint.cli.items import ATTRIBUTED
from checkpoint.cli.names import id_width
from checkpoint.model import Citation, ItemRecord, SessionCounts, Totals, Usage, plain_text, plural, session_title


def warn(report: pipeline.ScanReport) -> None:
    for problem in report.problems[:50]:
        print(f"warning: {plain_text(problem.text)}", file=sys.stderr)
    if len(report.problems) > 50:
        print(f"warning: … and {len(report.problems) - 50} more (checkpoint status --json lists them)",
              file=sys.stderr)


def where_looked(report: pipeline.ScanReport) -> str:
    parts = []
    for root in report.roots:
        if not root.is_dir():
            parts.append(f"{root} (missing)")
        else:
            n = report.files_per_root.get(root, 0)
            parts.append(f"{root} ({plural(n, 'transcript') if n else 'no transcripts'})")
    return ", ".join(parts) if parts else "no roots configured"


def print_scan(report: pipeline.ScanReport, out: TextIO) -> None:
    warn(report)
    if not report.files_seen:  # a problem to fix: said on stderr, as every other one
        print(f"No transcripts found. Looked in: {where_looked(report)}.", file=sys.stderr)
        print("Point Checkpoint elsewhere with --source DIR or CHECKPOINT_SOURCES.", file=sys.stderr)
        return
    print(f"Looked in: {where_looked(report)}.", file=out)
    print(
        f"Scanned {plural(report.files_seen, 'transcript file')} ({report.files_read} changed): "
        f"{plural(report.turns_added, 'new turn')}, {plural(report.chunks_created, 'new chunk')}.",
        file=out,
    )
    if report.redacted:
        print(f"Redacted before storing: {redactions(report.redacted)}.", file=out)
    if report.tool_output_left_out:
        print(f"Tool output left out by policy (tool_output_chars): {report.tool_output_left_out:,} characters"
              f" of tool results in {plural(report.tool_output_records, 'record')}; each kept as its head,"
              " size and kind.", file=out)
    if report.problems:
        problems = plural(len(report.problems), "problem")
        print(f"{problems} reading transcripts (on stderr; `checkpoint status` lists them).", file=out)


def scan_json(report: pipeline.ScanReport) -> dict[str, Any]:
    return {
        "roots": [
            {"path": str(r), "exists": r.is_dir(), "files": report.files_per_root.get(r, 0)} for r in report.roots
        ],
        "files_seen": report.files_seen,
        "files_read": report.files_read,
        "turns_added": report.turns_added,
        "chunks_created": report.chunks_created,
        "redacted": dict(sorted(report.redacted.items())),
        "tool_output_left_out": {"records": report.tool_output_records, "chars": report.tool_output_left_out},
        "warnings": [p.text for p in report.problems],
    }


def redactions(counts: Mapping[str, int]) -> str:
    total = sum(counts.values())
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{plural(total, 'secret')} ({kinds})"


def money(usd: float) -> str:
    return f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def usage_line(usage: Usage) -> str:
    cache = ""
    if usage.cache_creation_input_tokens or usage.cache_read_input_tokens:
        cache = (f", cache write {usage.cache_creation_input_tokens:,}, "
                 f"cache read {usage.cache_read_input_tokens:,}")
    return (f"{plural(usage.requests, 'request')}, {usage.tokens:,} tokens (input {usage.input_tokens:,}{cache}, "
            f"output {usage.output_tokens:,}): {money(usage.cost_usd)}")


def short(text: str, width: int) -> str:
    text = " ".join(plain_text(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def provenance(item: ItemRecord, id_chars: int = 8) -> str:
    source = item.sources[0] if item.sources else None
    where = f"{Path(source.path).name}:{source.line}" if source else "?"
    return f"session {item.session_id[:id_chars]} · {where}{ATTRIBUTED if item.cited is Citation.CHUNK else ''}"


def print_table(sessions: Sequence[SessionCounts], new_items: dict[str, int] | None = None) -> None:
    new_col = f" {'NEW ITEMS':>9}" if new_items is not None else ""
    priced = any(s.usage.requests for s in sessions)
    cost_col = f" {'COST':>9}" if priced else ""
    width = id_width(s.id for s in sessions)
    print(f"  {'SESSION':<{width}}  {'AGENT':<6} {'TURNS':>6} {'CAPTURED':>8} {'PENDING':>7} {'FAILED':>6}"
          f"{new_col}{cost_col}"
          "  TITLE")
    for s in sessions:
        title = short(session_title(s.title, s.cwd), 60)
        new = f" {new_items.get(s.id, 0):>9}" if new_items is not None else ""
        cost = f" {money(s.usage.cost_usd):>9}" if priced else ""
        print(f"  {s.id[:width]:<{width}}  {s.agent:<6} {s.turns:>6} {s.captured:>8} {s.pending:>7} {s.failed:>6}"
              f"{new}{cost}"
              f"  {title}")
        for cause in s.causes[:3]:
            print(f"      failing: {short(cause, 150)}")
        for hold in s.held[:3]:
            print(f"      held: {short(hold.phrase(), 150)}")
        if s.at_risk:
            print(f"      at risk: Claude Code deletes this transcript {in_days(s.deletes_in_days)} "
                  f"(cleanupPeriodDays); its {s.pending + s.failed} turns not captured yet are extracted first")


def in_days(days: int | None) -> str:
    return "within a day" if not days else f"in {plural(days, 'day')}"


def print_totals(sessions: Sequence[SessionCounts], out: TextIO) -> None:
    print_total_line(len(sessions), Totals.of(sessions), out)


def print_total_line(sessions: int, t: Totals, out: TextIO) -> None:
    print(
        f"Total: {plural(sessions, 'session')}, {plural(t.turns, 'turn')}: {t.captured} captured, "
        f"{t.pending} pending, {t.failed} failed.",
        file=out,
    )
