"""`checkpoint/items`: captured items with provenance, filtered by workspace, session, kind, state
or file. The same item shape as `checkpoint items --json`, with a `uri` on each source and the
`workspace` folder of the item's session."""

from __future__ import annotations

from typing import Any, cast

from checkpoint.model import ItemRecord
from checkpoint.server.folders import Folders, file_uri, item_path, path_of
from checkpoint.server.protocol import Item, ItemsQuery
from checkpoint.store import Store
from checkpoint.team.provenance import stored_shared_by

STATES = ("new", "accepted", "dismissed", "any")


class QueryError(ValueError):
    pass


def plain(value: Any) -> Any:
    """pygls hands custom requests' params over as namedtuples; back to JSON-like values."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def parse_query(params: Any) -> ItemsQuery:
    raw = plain(params) or {}
    if not isinstance(raw, dict):
        raise QueryError("checkpoint/items takes an object: {scope?, workspace?, session?, kind?, state?, file?}")
    query: ItemsQuery = {}
    for key in ("scope", "workspace", "session", "kind", "state", "file"):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise QueryError(f"checkpoint/items: `{key}` must be a string")
        query[key] = value
    if query.get("state", "new") not in STATES:
        raise QueryError(f"checkpoint/items: `state` must be one of {', '.join(STATES)}")
    if query.get("kind") not in (None, "decision", "constraint", "question"):
        raise QueryError("checkpoint/items: `kind` must be decision, constraint or question")
    return query


def find_items(store: Store, folders: Folders, query: ItemsQuery, default_scope: str) -> list[Item]:
    """The items the query asks for, as sent on the wire: each with its `workspace`, each source with its `uri`."""
    state = query.get("state")
    workspaces: list[str] | None = None
    only_folder = query.get("workspace")
    if only_folder is not None:
        workspaces = Folders([only_folder]).paths
    elif query.get("scope", default_scope) == "workspace" and "session" not in query:
        workspaces = folders.paths
    rows = store.items(session_id=query.get("session"), kind=query.get("kind"), workspaces=workspaces,
                       state=state if state in ("new", "accepted", "dismissed") else None,
                       include_dismissed=state == "any")
    if "file" in query:
        # Resolved as the diagnostics resolve them, so both name the same items for a file. A
        # relative `file` has no cwd of its own (the daemon's is no one's): it matches nothing.
        target = item_path(path_of(query["file"]) or query["file"], None)
        rows = [r for r in rows if target and any(item_path(f, r.cwd) == target for f in r.files)]
    return _wire(rows, folders, store)


def _wire(rows: list[ItemRecord], folders: Folders, store: Store) -> list[Item]:
    belongs = folders.sessions(store)
    out: list[Item] = []
    for row in rows:
        item = cast("Item", row.as_json())  # the record's JSON is the wire's Item but for the two keys added here
        folder = belongs.get(row.session_id)
        item["workspace"] = folder.uri if folder else None
        # Who shared it, as the sync stored it (no record read here): the panel's "shared by … · when".
        item["shared_by"] = stored_shared_by(row)
        item["accepted_here"] = row.accepted_here
        for source in item["sources"]:
            source["uri"] = file_uri(source["path"])
        out.append(item)
    return out


def find_item(store: Store, folders: Folders, item_id: str) -> Item | None:
    """One item by id, in any state and session, as `find_items` sends it."""
    rows = store.items(ids=[item_id], include_dismissed=True)
    return _wire(rows, folders, store)[0] if rows else None
