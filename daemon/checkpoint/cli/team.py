"""The CLI's part of team memory (checkpoint.team): which folder a command works for, the repository's
decision records read in first, `checkpoint share`, and shared records kept in step with what changed here."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys

from checkpoint import config
from checkpoint.cli.names import one_item
from checkpoint.model import plain_text, plural
from checkpoint.store import Store


def folder(args: argparse.Namespace) -> str:
    """The folder a command works for: --workspace, else the cwd."""
    given = getattr(args, "workspace", None)
    return str(given.expanduser().absolute()) if given else os.getcwd()


def read_records(store: Store, settings: config.Settings, args: argparse.Namespace,
                 lists_problems: bool = False) -> None:
    """The decision records of the repository the command works in, into the store first (a record
    that cannot be read is said on stderr, unless the command lists the problems itself: status)."""
    from checkpoint.team.sync import sync_folders

    try:
        report = sync_folders(store, [folder(args)], settings.decisions_dir)
    except sqlite3.OperationalError as exc:  # a read-only database (status, items, search read it still)
        print(plain_text(f"checkpoint: the decision records were not read in: {exc}"), file=sys.stderr)
        return
    if report.problems and not lists_problems:
        print(f"checkpoint: {plural(report.problems, 'decision record')} unreadable (see `checkpoint status`)",
              file=sys.stderr)


def reflect_changes(store: Store, settings: config.Settings, item_ids: list[str]) -> None:
    """Shared items changed here: their records in the cwd's repository say so (to be committed)."""
    from checkpoint.team.share import reflect

    for path in reflect(store, item_ids, [os.getcwd()], settings):
        print(plain_text(f"Updated the decision record {path} (commit it to share the change)."), file=sys.stderr)


def share_command(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    from checkpoint.team.share import ShareRefused, share, undo

    item_id = one_item(store, args.item)
    if item_id is None:
        return 2
    try:
        if args.undo:
            path = undo(store, item_id, folder(args), settings)
            print(json.dumps({"id": item_id, "removed": path}) if args.json else plain_text(f"Removed {path}."))
        shared = None if args.undo else share(store, item_id, folder(args), settings)
    except ShareRefused as exc:
        print(plain_text(f"checkpoint share: refused: {exc}."), file=sys.stderr)
        return 2
    if shared is not None:
        print(json.dumps(shared.as_json()) if args.json else plain_text(shared.path))
    return 0
