"""`checkpoint search --said QUERY`: recall of what the user and the assistant said in every session
(checkpoint.store.said), with no model: each passage with its session, agent, time and transcript line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from checkpoint.model import plain_text, plural
from checkpoint.store import Store


def search_said(store: Store, args: argparse.Namespace) -> int:
    text = " ".join(args.query)
    workspaces = [str(Path(args.workspace).expanduser().absolute())] if args.workspace else None
    result = store.search_said(text, workspaces=workspaces, limit=args.limit)
    if args.json:
        print(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
        return 0 if result.terms else 2
    if not result.terms:
        print(plain_text(f"Nothing to search for in {text!r}: give a word or more."), file=sys.stderr)
        return 2
    for hit in result.hits:
        when = (hit.timestamp or "?")[:16].replace("T", " ")
        print(plain_text(f"[{hit.role}] {hit.agent} session {hit.session_id[:8]} · {when} · {hit.path}:{hit.line}"))
        print(plain_text(f"    {hit.snippet}"))
    scope = (f"in {workspaces[0]} and the folders below it" if workspaces else "in every workspace")
    print(plain_text(f"{plural(len(result.hits), 'passage')} found {scope} (what the user and the assistant said;"
                     " tool output is not searched)."))
    return 0
