"""The CLI's item commands: `items`, `accept`, and how one item is printed (`supersede` is supersessions.py)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from checkpoint import config
from checkpoint.cli.names import id_width, one_item, one_session
from checkpoint.cli.team import folder, read_records, reflect_changes
from checkpoint.model import Citation, ItemRecord, ItemState, kinds_phrase, plain_text, plural
from checkpoint.store import Store
from checkpoint.team.provenance import is_team_item, shared_phrase

# An item that reads as an instruction planted for an agent, not accepted yet: no agent is shown it.
HELD = "  [held for review]"
# An item whose model cited no turn of its chunk: its sources are the chunk's turns, not the lines that said it.
ATTRIBUTED = " · cited no turn: attributed to its chunk"


def print_item(item: ItemRecord, id_chars: int = 8) -> None:
    source = item.sources[0] if item.sources else None
    where = f"{source.path}:{source.line}" if source else "?:?"
    # Plain text, whatever a transcript or a model put there: no terminal escape reaches the screen.
    mark = f"  [superseded by {item.superseded_by}]" if item.superseded_by else ""
    team_only = is_team_item(item)
    mark += f"  [{shared_phrase(item)}]" if item.record and not team_only else ""
    mark += HELD if item.held_back else ""
    mark += "" if item.lasting else "  [one-off: for its own task only]"
    mark += f"  [answered by {item.answered_by}]" if item.answered_by else ""
    print(plain_text(f"[{item.kind.value}] {item.statement}  ({item.id}){mark}"))
    if item.rationale:
        print(plain_text(f"    why: {item.rationale}"))
    if item.files:
        print(plain_text(f"    files: {', '.join(item.files[:5])}"))
    if team_only:  # no session here said it: the record is where it comes from
        print(plain_text(f"    from: {shared_phrase(item)}"))
        return
    attributed = ATTRIBUTED if item.cited is Citation.CHUNK else ""
    print(plain_text(f"    from: session {item.session_id[:id_chars]} · {where} · {item.extractor}{attributed}"))


def items_command(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    if args.workspace and not args.workspace.expanduser().is_dir():
        print(plain_text(f"checkpoint: --workspace {args.workspace}: no such folder"), file=sys.stderr)
        return 2
    read_records(store, settings, args)
    session = one_session(store, args.session) if args.session else None
    workspaces = [folder(args)] if args.workspace else None
    items = store.items(session_id=session, kind=args.kind, include_superseded=args.all, workspaces=workspaces)
    if args.json:
        print(json.dumps({"items": [i.as_json() for i in items]}, indent=2, ensure_ascii=False))
        return 0
    width = id_width(store.session_ids(""))  # as wide as tells every stored session apart
    for item in items:
        print_item(item, width)
    if items:
        print(f"{plural(len(items), 'item')}: {kinds_phrase(Counter(i.kind.value for i in items))}.")
    elif workspaces and (elsewhere := len(store.items(session_id=session, kind=args.kind,
                                                      include_superseded=args.all))):
        print(plain_text(f"No {kind_words(args.kind)} in {workspaces[0]}'s workspace; "
                         f"{plural(elsewhere, 'item')} in other workspaces (`checkpoint items` without "
                         "--workspace lists them)."))
    else:
        print(none_captured(args.kind, session))
    if not args.all and (hidden := len(store.items(session_id=session, kind=args.kind,
                                                   workspaces=workspaces)) - len(items)):
        print(f"{plural(hidden, 'superseded item')} not shown (`checkpoint items --all` shows them).")
    if held := sum(i.held_back for i in items):
        print(f"{plural(held, 'item')} {'is' if held == 1 else 'are'} held for your review: agents are not shown "
              "them until you accept one (`checkpoint accept ID`, or Accept in the editor).")
    return 0


def accept_command(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    item_id = one_item(store, args.id)
    if item_id is None:
        return 2
    store.set_item_state(item_id, ItemState.ACCEPTED)
    reflect_changes(store, settings, [item_id])
    if args.json:
        print(json.dumps({"id": item_id, "state": ItemState.ACCEPTED.value}))
    else:
        print(f"Item {item_id} accepted: agents are shown it from now on.")
    return 0


def kind_words(kind: str | None) -> str:
    """"open questions" for --kind question; "items" for none."""
    return kinds_phrase(Counter({kind: 2})).removeprefix("2 ") if kind else "items"


def none_captured(kind: str | None, session: str | None) -> str:
    """What an empty `items` says: what was asked for ("No open questions captured in session ...")."""
    what = kind_words(kind)
    if kind is None and session is None:
        return "No items captured yet. Run `checkpoint now`."
    return f"No {what} captured" + (f" in session {session}." if session else ".")
