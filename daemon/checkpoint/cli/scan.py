"""`checkpoint scan`: ingest new turns and form chunks; no model calls."""

from __future__ import annotations

import json
import sys

from checkpoint import config, pipeline
from checkpoint.cli.printing import print_scan, print_total_line, scan_json, warn
from checkpoint.store import Store


def scan_command(store: Store, settings: config.Settings, as_json: bool) -> int:
    with store.grouped_commits():  # one-shot and single-threaded: files committed a group at a time
        report = pipeline.scan(store, settings, two_processes=True)
    if as_json:
        warn(report)
        _, totals = store.totals()
        print(json.dumps({"scan": scan_json(report), "totals": totals.as_dict()}, indent=2, ensure_ascii=False))
        return 0
    print_scan(report, sys.stdout)
    if report.files_seen:
        print_total_line(*store.totals(), sys.stdout)
    return 0
