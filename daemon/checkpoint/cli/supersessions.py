"""`checkpoint supersede`: mark an item as superseded by a later one, or undo that (the store's
supersessions, store/supersessions.py, with the user as its author)."""

from __future__ import annotations

import argparse
import json
import sys

from checkpoint import config
from checkpoint.cli.names import one_item
from checkpoint.cli.team import reflect_changes
from checkpoint.model import plain_text, plural
from checkpoint.store import Store


def supersede_command(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    from checkpoint.store import SupersessionRefused

    old = one_item(store, args.old)
    new = one_item(store, args.new) if args.new else None
    if old is None or (args.new and new is None):
        return 2
    if args.undo:
        removed = store.unsupersede(old, new)
        reflect_changes(store, settings, [i for i in (old, new) if i])
        if args.json:
            print(json.dumps({"old_id": old, "new_id": new, "undone": removed}))
        elif removed:
            print(f"Item {old} is no longer superseded" + (f" by {new}." if new else f" ({plural(removed, 'link')})."))
        else:
            print(f"Item {old} was not superseded" + (f" by {new}." if new else "."))
        return 0
    if new is None:
        print("checkpoint supersede: give the item that replaces OLD (or --undo)", file=sys.stderr)
        return 2
    try:
        changed = store.supersede(old, new, reason=args.reason)
    except SupersessionRefused as exc:
        print(plain_text(f"checkpoint supersede: refused: {exc}."), file=sys.stderr)
        return 2
    reflect_changes(store, settings, [old, new])
    if args.json:
        print(json.dumps({"old_id": old, "new_id": new, "changed": changed}))
    else:
        print(f"Item {old} is superseded by {new}." if changed else f"Item {old} was already superseded by {new}.")
    return 0
