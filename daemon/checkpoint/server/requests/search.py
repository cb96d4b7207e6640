"""`checkpoint/search`: the store's full-text search over items, for the editor's search box. The
same item shape as `checkpoint/items` (a `workspace` on each item, a `uri` on each source), with the
bm25 `score` of each, best first; the scope setting applies as it does to `checkpoint/items`."""

from __future__ import annotations

from typing import Any, cast

from checkpoint.server.folders import Folders, file_uri, path_of
from checkpoint.server.protocol import SearchHit, SearchQuery, SearchResponse
from checkpoint.server.requests.items import QueryError, plain
from checkpoint.store import Store

MAX_LIMIT = 200
DEFAULT_LIMIT = 20


def parse_query(params: Any) -> SearchQuery:
    raw = plain(params)
    if isinstance(raw, str):
        raw = {"query": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("query"), str):
        raise QueryError("checkpoint/search takes an object: {query, kind?, workspace?, scope?, limit?, state?}")
    query: SearchQuery = {"query": raw["query"]}
    for key in ("kind", "workspace", "scope", "state"):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise QueryError(f"checkpoint/search: `{key}` must be a string")
        query[key] = value
    if query.get("kind") not in (None, "decision", "constraint", "question"):
        raise QueryError("checkpoint/search: `kind` must be decision, constraint or question")
    if query.get("scope") not in (None, "workspace", "all"):
        raise QueryError("checkpoint/search: `scope` must be workspace or all")
    if query.get("state") not in (None, "current", "any"):
        raise QueryError("checkpoint/search: `state` must be current or any")
    limit = raw.get("limit")
    if limit is not None:
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise QueryError(f"checkpoint/search: `limit` must be a whole number from 1 to {MAX_LIMIT}")
        query["limit"] = limit
    return query


def search(store: Store, folders: Folders, query: SearchQuery, default_scope: str) -> SearchResponse:
    """The items the query's words find, as sent on the wire. An empty query (no word in it) finds
    nothing and says so with empty `terms`: a search box being cleared is not an error."""
    only = query.get("workspace")
    workspaces: list[str] | None = None
    if only is not None:
        workspaces = [path_of(only) or only]
    elif query.get("scope", default_scope) == "workspace":
        workspaces = folders.paths
    result = store.search(
        query["query"], kind=query.get("kind"), workspaces=workspaces, limit=query.get("limit", DEFAULT_LIMIT),
        include_dismissed=query.get("state") == "any",
    )
    belongs = folders.sessions(store)
    hits: list[SearchHit] = []
    for record, score in result.hits:
        hit = cast("SearchHit", {**record.as_json(), "score": score})
        folder = belongs.get(record.session_id)
        hit["workspace"] = folder.uri if folder else None
        for source in hit["sources"]:
            source["uri"] = file_uri(source["path"])
        hits.append(hit)
    return {"terms": list(result.terms), "matched": result.matched, "items": hits}
