"""`checkpoint forget`: remove everything stored for a session and read its transcripts no more (or again)."""

from __future__ import annotations

import argparse
import json

from checkpoint.cli.names import one_session
from checkpoint.model import plural
from checkpoint.store import Store


def forget_command(store: Store, args: argparse.Namespace) -> int:
    session_id = one_session(store, args.session, forgotten=args.undo)
    if args.undo:
        store.unforget(session_id)
        if args.json:
            print(json.dumps({"session_id": session_id, "undone": True}))
        else:
            print(f"Session {session_id} is no longer forgotten: the next scan reads its transcripts in again, "
                  "from their start (those still on disk).")
        return 0
    removed = store.forget_session(session_id) or {}
    if args.json:
        print(json.dumps({"session_id": session_id, "removed": removed}, indent=2))
        return 0
    print(f"Forgot session {session_id}: {plural(removed.get('turns', 0), 'turn')}, "
          f"{plural(removed.get('items', 0), 'item')}, {plural(removed.get('chunks', 0), 'chunk')} and "
          f"{plural(removed.get('files', 0), 'file cursor')} removed; the database was compacted.")
    print("Its transcripts will not be read in again; `checkpoint forget --undo "
          f"{session_id[:8]}` undoes that.")
    return 0
