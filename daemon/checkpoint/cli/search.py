"""`checkpoint search`: full-text search over the items, best match first."""

from __future__ import annotations

import argparse
import json
import sys

from checkpoint import config
from checkpoint.cli.items import print_item
from checkpoint.cli.names import id_width
from checkpoint.cli.team import read_records
from checkpoint.model import plain_text, plural
from checkpoint.store import Store


def search_command(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    if args.limit < 1:
        print("checkpoint search: --limit must be at least 1", file=sys.stderr)
        return 2
    if args.said:
        from checkpoint.cli.said import search_said

        if args.kind:
            print("checkpoint search: --kind is for items; --said searches what was said", file=sys.stderr)
            return 2
        return search_said(store, args)
    read_records(store, settings, args)
    text = " ".join(args.query)
    workspaces = [str(args.workspace.expanduser().absolute())] if args.workspace else None
    result = store.search(text, kind=args.kind, workspaces=workspaces, limit=args.limit)
    if args.json:
        print(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
        return 0 if result.terms else 2
    if not result.terms:
        print(plain_text(f"Nothing to search for in {text!r}: give a word or more (letters or digits)."),
              file=sys.stderr)
        return 2
    scope = (plain_text(f"Searched {workspaces[0]} and the folders below it.") if workspaces
             else "Searched every workspace (--workspace DIR: one folder and those below it).")
    if not result.hits:
        print(plain_text(f"No item matches {' '.join(result.terms)!r}."))
        print(scope)
        return 0
    if result.matched == "any" and len(result.terms) > 1:
        print(plain_text(f"No item has all of {' '.join(result.terms)!r}; items with any of them:"))
    width = id_width(store.session_ids(""))
    for item, _ in result.hits:
        print_item(item, width)
    print(f"{plural(len(result.hits), 'item')} found.")
    print(scope)
    return 0
