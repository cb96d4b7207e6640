"""The `checkpoint` command. Thin: parse flags, call the pipeline, print what happened."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from checkpoint import config, pipeline
from checkpoint.extract import Extractor
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.store import SessionCounts, Store


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", type=Path, help="database file (env CHECKPOINT_DB)")
    parser.add_argument(
        "--source", action="append", type=Path, dest="sources", metavar="DIR",
        help="transcript root; repeat for several (env CHECKPOINT_SOURCES)",
    )
    parser.add_argument("--chunk-tokens", type=int, help="token budget of one chunk")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="checkpoint",
        description="Keep the decisions, constraints and open questions of your coding-agent sessions.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    scan = sub.add_parser("scan", help="ingest new turns and form chunks; no model calls")
    _common(scan)
    now = sub.add_parser("now", help="scan, then extract every pending chunk within the run budget")
    _common(now)
    now.add_argument("--extractor", choices=["anthropic", "heuristic"], help="env CHECKPOINT_EXTRACTOR")
    now.add_argument("--session", help="only this session")
    now.add_argument("--max-requests", type=int, help="stop after this many model requests")
    now.add_argument("--max-tokens", type=int, help="stop before sending more than this many input tokens")
    now.add_argument("--concurrency", type=int, help="chunks in flight at once")
    status = sub.add_parser("status", help="captured, pending and failed turns per session")
    _common(status)
    status.add_argument("--json", action="store_true", help="stable machine-readable output")
    items = sub.add_parser("items", help="captured decisions, constraints and open questions")
    _common(items)
    items.add_argument("--json", action="store_true", help="stable machine-readable output")
    items.add_argument("--session", help="only this session")
    items.add_argument("--kind", choices=["decision", "constraint", "question"])
    return parser


def choose_extractor(settings: config.Settings, out: TextIO) -> Extractor:
    wanted = settings.extractor
    has_key = bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))
    if wanted == "anthropic" or (wanted is None and has_key):
        print(
            "The Claude extractor is not built yet in this version; using the offline heuristic extractor.",
            file=out,
        )
    elif wanted is None:
        print("No ANTHROPIC_API_KEY set: using the offline heuristic extractor (phrase rules, no network).",
              file=out)
    return HeuristicExtractor()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    flags = {k: v for k, v in vars(args).items() if k in config.Settings.model_fields}
    settings = config.load(flags)
    store = Store(settings.db)
    try:
        if args.command == "scan":
            return _scan(store, settings)
        if args.command == "now":
            return _now(store, settings, args)
        if args.command == "status":
            return _status(store, args.json)
        return _items(store, args)
    finally:
        store.close()


# -- commands ---------------------------------------------------------------------------------------


def _print_scan(report: pipeline.ScanReport, out: TextIO) -> None:
    for warning in report.warnings[:50]:
        print(f"warning: {warning}", file=sys.stderr)
    if len(report.warnings) > 50:
        print(f"warning: … and {len(report.warnings) - 50} more (checkpoint status --json lists them)",
              file=sys.stderr)
    if not report.files_seen:
        looked = ", ".join(f"{r}{'' if r.is_dir() else ' (missing)'}" for r in report.roots)
        print(f"No transcripts found. Looked in: {looked}.", file=out)
        print("Point Checkpoint elsewhere with --source DIR or CHECKPOINT_SOURCES.", file=out)
        return
    print(
        f"Scanned {report.files_seen} transcript files ({report.files_read} changed): "
        f"{report.turns_added} new turns, {report.chunks_created} new chunks.",
        file=out,
    )


def _scan(store: Store, settings: config.Settings) -> int:
    report = pipeline.scan(store, settings)
    _print_scan(report, sys.stdout)
    return 0


def _now(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    scan_report = pipeline.scan(store, settings)
    _print_scan(scan_report, sys.stdout)
    extractor = choose_extractor(settings, sys.stdout)
    budget = pipeline.Budget(max_requests=settings.max_requests, max_tokens=settings.max_tokens)
    if args.max_requests is not None:
        budget.max_requests = args.max_requests
    if args.max_tokens is not None:
        budget.max_tokens = args.max_tokens
    show_progress = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if show_progress:
            print(f"\rextracting: {done}/{total} chunks", end="", file=sys.stderr, flush=True)

    report = pipeline.checkpoint(
        store, extractor, budget, concurrency=args.concurrency or settings.concurrency,
        session_id=args.session, progress=progress,
    )
    if show_progress and report.tried:
        print(file=sys.stderr)
    print(
        f"Checkpoint run with {extractor.description}: {report.tried} chunks tried, {report.captured} captured, "
        f"{report.failed} failed; {report.items_added} new items.",
    )
    for failure in report.failures[:20]:
        print(f"  failed: session {failure.session_id} chunk {failure.chunk_id}: {failure.cause}")
    if report.stopped_by:
        print(f"  stopped: {report.stopped_by}; the rest stays pending for the next run.")
    _print_totals(store.session_counts(), sys.stdout)
    items = [i for i in store.items() if i["extractor"] == extractor.name][-10:]
    if items:
        print("Latest items:")
        for item in items:
            print(f"  {item['kind']:<10} {item['statement'][:110]}")
    return 0 if report.ok else 1


def _print_totals(sessions: Sequence[SessionCounts], out: TextIO) -> None:
    t = pipeline.totals(sessions)
    print(
        f"Total: {len(sessions)} sessions, {t['turns']} turns: {t['captured']} captured, "
        f"{t['pending']} pending, {t['failed']} failed.",
        file=out,
    )


def _status(store: Store, as_json: bool) -> int:
    if as_json:
        print(json.dumps(pipeline.status(store), indent=2, ensure_ascii=False))
        return 0
    sessions = store.session_counts()
    _print_totals(sessions, sys.stdout)
    if sessions:
        print(f"  {'SESSION':<10} {'AGENT':<7} {'TURNS':>6} {'CAPTURED':>8} {'PENDING':>7} {'FAILED':>6}  TITLE")
    for s in sessions:
        title = (s.title or s.cwd or "")[:60]
        print(f"  {s.id[:10]:<10} {s.agent:<7} {s.turns:>6} {s.captured:>8} {s.pending:>7} {s.failed:>6}  {title}")
        for cause in s.causes[:3]:
            print(f"      failing: {cause}")
    dropped: dict[str, list[int]] = {}
    for s in sessions:
        for policy, counts in s.dropped.items():
            agg = dropped.setdefault(policy, [0, 0])
            agg[0] += counts["records"]
            agg[1] += counts["chars"]
    if dropped:
        summary = ", ".join(f"{p} {r} records ({c} chars)" for p, (r, c) in sorted(dropped.items()))
        print(f"Not sent, by policy: {summary}")
    problems = sum(s.problems for s in sessions)
    if problems:
        print(f"{problems} transcript lines could not be read (checkpoint status --json lists them).")
    return 0


def _items(store: Store, args: argparse.Namespace) -> int:
    items = store.items(session_id=args.session, kind=args.kind)
    if args.json:
        print(json.dumps({"items": items}, indent=2, ensure_ascii=False))
        return 0
    if not items:
        print("No items captured yet. Run `checkpoint now`.")
        return 0
    for item in items:
        source = item["sources"][0] if item["sources"] else {}
        where = f"{source.get('path', '?')}:{source.get('line', '?')}"
        print(f"[{item['kind']}] {item['statement']}")
        if item["rationale"]:
            print(f"    why: {item['rationale']}")
        if item["files"]:
            print(f"    files: {', '.join(item['files'][:5])}")
        print(f"    from: session {item['session_id'][:10]} · {where} · {item['extractor']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
