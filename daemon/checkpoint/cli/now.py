"""`checkpoint now`: scan, then extract every pending chunk within the run budget, and say what it captured."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from checkpoint import config, pipeline, status_model
from checkpoint.cli.names import id_width, one_session
from checkpoint.cli.printing import (
    money,
    print_scan,
    print_table,
    print_totals,
    provenance,
    redactions,
    scan_json,
    short,
    usage_line,
    warn,
)
from checkpoint.model import RunReport, Totals, plain_text, plural
from checkpoint.store import Store


def now_command(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    # Imported here: `scan` and `status` start without the run layer (their start is measured).
    from checkpoint import runner
    from checkpoint.extract.choose import choose_extractor

    out = sys.stderr if args.json else sys.stdout
    turns_before = {s.id: s.turns for s in store.session_counts()}
    items_before = store.item_counts()
    choice = choose_extractor(settings)
    print(choice.brief or choice.sentence, file=out)
    if choice.extractor.name == "heuristic":
        from checkpoint.extract.choose import OFFLINE_CATCHES

        print(OFFLINE_CATCHES, file=out)
    show_progress = sys.stderr.isatty()

    def progress(report: RunReport) -> None:
        if show_progress:
            spent = report.usage
            spent_money = f" · {spent.tokens:,} tokens · {money(spent.cost_usd)}" if spent.requests else ""
            print(f"\rextracting: {report.done}/{max(report.total, report.tried)} chunks{spent_money}\033[K", end="",
                  file=sys.stderr, flush=True)

    def scan(scan_settings: config.Settings) -> pipeline.ScanReport:
        scan_report = pipeline.scan(store, scan_settings, two_processes=True)
        if args.json:
            warn(scan_report)
        else:
            print_scan(scan_report, out)
        return scan_report

    started = store.clock()
    captured = runner.capture(store, settings, choice=choice, scan=scan,
                              sessions=(lambda scanned: [one_session(scanned, args.session)]) if args.session
                              else None, concurrency=args.concurrency, on_update=progress)
    scan_report, report = captured.scan, captured.run
    assert scan_report is not None  # an explicit capture scans
    if show_progress and report.tried:
        print(file=sys.stderr)
    sessions = status_model.with_risk(store.session_counts(), at_risk_days=settings.at_risk_days)
    if args.json:
        print(json.dumps({"scan": scan_json(scan_report), "run": report.as_dict(),
                          "totals": Totals.of(sessions).as_dict()}, indent=2, ensure_ascii=False))
        return 0 if report.ok else 1

    new_items = store.items(created_after=started)
    held = report.held_sentence()
    if report.tried:
        print(report.sentence())
    elif not report.stopped_by and sessions and not held:
        print("Nothing new to extract.")
    if held:
        print(plain_text(held))
    if report.redacted:
        print(f"Redacted right before sending (stored before redaction covered them): "
              f"{redactions(report.redacted)}.")
    if report.usage.requests:
        print(f"Used {usage_line(report.usage)}.")
        if len(report.models) > 1 or (report.models and settings.model not in report.models):
            print("Answers by model: " + ", ".join(f"{m} {n}" for m, n in report.models.most_common()) + ".")
    for failure in report.failures[:20]:
        how = "not captured" if failure.lost else "failed"
        print(plain_text(f"  {how}: session {failure.session_id} chunk {failure.chunk_id}: {failure.cause}"))
    if len(report.failures) > 20:
        print(f"  … and {len(report.failures) - 20} more failures (checkpoint status shows their causes)")
    if report.stopped_by:
        print(plain_text(f"Stopped: {report.stopped_by}; the rest stays pending for the next run."))
    if report.left_chunks and (report.stopped_by or report.failed or report.lost):
        estimate = report.left_estimate
        cost = (f"; finishing them should cost about {money(estimate.cost_usd)} "
                f"({plural(estimate.requests, 'request')}, ~{estimate.tokens:,} tokens)") if estimate else ""
        print(f"Left for the next run: {plural(report.left_chunks, 'chunk')} "
              f"(~{report.left_tokens:,} tokens by the local estimate){cost}.")
    if not sessions:
        return 0 if report.ok else 1
    items_after = store.item_counts()
    new_per_session = {
        sid: sum((counts - items_before.get(sid, Counter())).values()) for sid, counts in items_after.items()
    }
    touched = [
        s for s in sessions
        if s.turns != turns_before.get(s.id) or new_per_session.get(s.id) or s.pending or s.failed
    ]
    if touched:
        print()
        print_table(touched[:20], new_per_session)
        if len(touched) > 20:
            print(f"  … and {len(touched) - 20} more sessions (checkpoint status lists them all)")
    print_totals(sessions, sys.stdout)
    if new_items:
        print()
        more = f", `checkpoint items` lists all {len(new_items)}" if len(new_items) > 10 else ""
        print(f"Captured in this run{more}:")
        width = id_width(store.session_ids(""))  # as wide as tells every stored session apart
        for item in new_items[:10]:
            print(f"  {item.kind.value:<10}  {short(item.statement, 96)}  [{plain_text(provenance(item, width))}]")
    return 0 if report.ok else 1
