"""Triage: checkpoint.accept and checkpoint.dismiss (stored with the item, shared by every window
on the database), and the code actions that offer them on a checkpoint diagnostic."""

from __future__ import annotations

from lsprotocol import types

from checkpoint.model import ItemRecord, ItemState
from checkpoint.server.protocol import CMD_ACCEPT, CMD_DISMISS, DIAGNOSTIC_SOURCE, TriageResult
from checkpoint.store import Store


def set_state(store: Store, item_id: str, state: ItemState) -> TriageResult:
    """Raises ValueError for an id that names no item: an answer of `changed: false` read as "it was so already"."""
    changed = store.set_item_state(item_id, state)
    if not changed:
        raise ValueError(f"no item {item_id!r} (checkpoint/items lists them with their ids)")
    return {"id": item_id, "state": state.value, "changed": changed}


def item_id_argument(args: tuple[object, ...]) -> str:
    """[item_id] or [{"id": item_id}] / [{"item_id": item_id}]."""
    if args:
        first = args[0]
        if isinstance(first, str) and first:
            return first
        if isinstance(first, dict):
            value = first.get("id") or first.get("item_id")
            if isinstance(value, str) and value:
                return value
    raise ValueError("expected the item id as the first argument")


def item_id_of(diag: types.Diagnostic) -> str:
    """The item a checkpoint diagnostic is of (its `data`; a client may send the data back as it got it)."""
    data = diag.data
    value = data.get("item_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def code_actions(
    params: types.CodeActionParams, published: list[types.Diagnostic], items: dict[str, ItemRecord]
) -> list[types.CodeAction]:
    """Accept and dismiss for each checkpoint diagnostic in the request's context, or, when the
    client sends none, for those of ours that overlap the requested range."""
    wanted = [d for d in params.context.diagnostics if d.source == DIAGNOSTIC_SOURCE and item_id_of(d)]
    if not wanted:
        first, last = params.range.start.line, params.range.end.line
        wanted = [d for d in published if d.range.start.line <= last and first <= d.range.end.line]
    actions: list[types.CodeAction] = []
    for diag in wanted:
        if str(diag.code).startswith("check:"):  # a line breaking a check (server/features/checks): its own fix
            continue
        item_id = item_id_of(diag)
        item = items.get(item_id)
        what = _short(item.statement) if item else item_id
        for command, verb in ((CMD_ACCEPT, "Accept"), (CMD_DISMISS, "Dismiss")):
            title = f"Checkpoint: {verb} “{what}”"
            actions.append(types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diag],
                command=types.Command(title=title, command=command, arguments=[item_id]),
            ))
    return actions


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
