"""checkpoint.supersede: a user marks an item as superseded by a later one, or undoes that (the
store keeps the link with the user as its author; the old item stays, marked)."""

from __future__ import annotations

from checkpoint.server.protocol import SupersedeArgs, SupersedeResult
from checkpoint.store import Store


def parse_arguments(args: tuple[object, ...]) -> SupersedeArgs:
    """[{"old", "new"?, "reason"?, "undo"?}] or [old, new]. ValueError says what is wrong."""
    if len(args) >= 2 and all(isinstance(a, str) and a for a in args[:2]):
        return {"old": str(args[0]), "new": str(args[1])}
    first = args[0] if args else None
    if not isinstance(first, dict) or not isinstance(first.get("old"), str) or not first["old"]:
        raise ValueError("expected [{old, new?, reason?, undo?}] or [old_id, new_id]")
    out: SupersedeArgs = {"old": first["old"]}
    for key in ("new", "reason"):
        value = first.get(key)
        if value is not None:
            if not isinstance(value, str) or not value:
                raise ValueError(f"`{key}` must be a non-empty string")
            out[key] = value
    undo = first.get("undo", False)
    if not isinstance(undo, bool):
        raise ValueError("`undo` must be true or false")
    out["undo"] = undo
    if not undo and "new" not in out:
        raise ValueError("`new` is required (the item that replaces `old`), unless `undo` is true")
    return out


def apply(store: Store, args: SupersedeArgs) -> SupersedeResult:
    """Raises SupersessionRefused (unknown item, itself, a loop)."""
    old, new = args["old"], args.get("new")
    removed = 0
    if args.get("undo"):
        removed = store.unsupersede(old, new)
        changed = bool(removed)
    else:
        assert new is not None  # parse_arguments makes sure
        changed = store.supersede(old, new, reason=args.get("reason"))
    records = store.items(ids=[old], include_dismissed=True)
    return {"old_id": old, "new_id": new, "changed": changed, "removed": removed,
            "superseded_by": records[0].superseded_by if records else None}
