"""`checkpoint/turn`: an item's turn as it was said, for a client to render (VS Code's Open Turn):
the turns the item cites, whole up to TURN_CHARS, and the turns around them in the exchange, cut to
CONTEXT_CHARS, each with who said it, when, and its line in the transcript."""

from __future__ import annotations

from typing import Any

from checkpoint.model import Role
from checkpoint.server.folders import Folders, file_uri
from checkpoint.server.protocol import TurnResult, TurnText
from checkpoint.server.requests.items import QueryError, find_item, plain
from checkpoint.store import Store

TURN_CHARS = 20_000  # a cited turn shown whole up to this (a turn may be megabytes of tool output)
CONTEXT_CHARS = 600  # a turn around it: its start
AROUND = 2  # turns shown before the first cited turn and after the last


def parse_query(params: Any) -> str:
    raw = plain(params)
    if isinstance(raw, list) and raw:
        raw = raw[0]
    value = raw.get("item") if isinstance(raw, dict) else raw
    if not isinstance(value, str) or not value:
        raise QueryError('checkpoint/turn takes the item id: {"item": id}')
    return value


def turn_of(store: Store, folders: Folders, item_id: str) -> TurnResult:
    """The item's turns and those around them; `turns` is empty when the item or its turns are gone."""
    item = find_item(store, folders, item_id)
    if item is None:
        raise QueryError(f"checkpoint/turn: no item {item_id}")
    cited = store.item_excerpts(item_id, TURN_CHARS)
    turns: list[TurnText] = [
        {"id": c.turn_id, "role": c.role.value, "text": c.text, "length": c.length, "cited": True,
         "timestamp": c.timestamp, "path": c.path, "line": c.line, "uri": file_uri(c.path)}
        for c in cited
    ]
    if cited:
        seqs = {c.seq for c in cited}
        window = store.turn_window(item["session_id"], item["turn_ids"], limit=AROUND)
        # what the person and the agent said around it; tool calls and results are not words
        said = [t for t in window if t.role in (Role.USER, Role.ASSISTANT) and t.text.strip()]
        before = [t for t in said if t.seq < min(seqs)][-AROUND:]
        after = [t for t in said if t.seq > max(seqs)][:AROUND]
        around = {t.id: t for t in (*before, *after)}
        turns += [{"id": t.id, "role": t.role.value, "text": t.text[:CONTEXT_CHARS], "length": len(t.text),
                   "cited": False, "timestamp": None, "path": None, "line": None, "uri": None}
                  for t in around.values()]
        order = {t.id: t.seq for t in window} | {c.turn_id: c.seq for c in cited}
        turns.sort(key=lambda t: order.get(t["id"], 0))
    return {"item": item, "turns": turns}
