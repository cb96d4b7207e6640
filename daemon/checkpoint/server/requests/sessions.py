"""`checkpoint/sessions`: every session in scope with its counts, the same session objects as
`checkpoint/status` (and `checkpoint status --json`), newest turn first, optionally one page of them.

`checkpoint/status` sends only the workspace folders' sessions (status.py); this is how a client
that lists the others (the VS Code side panel with scope "all") gets them, when it needs them."""

from __future__ import annotations

from typing import Any, cast

from checkpoint.repository import repository_of
from checkpoint.server.folders import Folders
from checkpoint.server.protocol import SessionsQuery, SessionsResult, SessionStatus
from checkpoint.server.requests.items import QueryError, plain
from checkpoint.status_model import with_risk
from checkpoint.store import Store

USAGE = "checkpoint/sessions takes an object: {scope?, workspace?, offset?, limit?}"


def parse_query(params: Any) -> SessionsQuery:
    raw = plain(params) or {}
    if not isinstance(raw, dict):
        raise QueryError(USAGE)
    unknown = sorted(set(raw) - {"scope", "workspace", "offset", "limit"})
    if unknown:
        raise QueryError(f"{USAGE}; unknown key {', '.join(unknown)}")
    query: SessionsQuery = {}
    if raw.get("scope") is not None:
        if raw["scope"] not in ("workspace", "all"):
            raise QueryError("checkpoint/sessions: `scope` must be workspace or all")
        query["scope"] = raw["scope"]
    if raw.get("workspace") is not None:
        if not isinstance(raw["workspace"], str):
            raise QueryError("checkpoint/sessions: `workspace` must be a folder URI")
        query["workspace"] = raw["workspace"]
    for key, least in (("offset", 0), ("limit", 1)):
        value = raw.get(key)
        if value is None:
            continue
        # bool is an int in Python; true is no count
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise QueryError(f"checkpoint/sessions: `{key}` must be an integer >= {least}")
        query[key] = value  # type: ignore[literal-required]
    return query


def list_sessions(store: Store, folders: Folders, query: SessionsQuery, default_scope: str) -> SessionsResult:
    """The sessions the query asks for, each with its `workspace` (the folder of the open ones it
    belongs to, even when `workspace` narrowed the list to one folder) and its `repository` (the top
    folder of the git repository its folder is in, else its folder), and how many there are."""
    belongs = folders.sessions(store)
    only = query.get("workspace")
    ids: list[str] | None
    if only is not None:
        ids = list(Folders([only]).sessions(store))
    else:
        ids = None if query.get("scope", default_scope) == "all" else list(belongs)
    sessions = []
    repos: dict[str, str | None] = {}  # by cwd: sessions of a project share it, and each asks the disk
    for s in with_risk(store.session_counts(ids)):
        session = cast("SessionStatus", s.as_dict())
        folder = belongs.get(s.id)
        session["workspace"] = folder.uri if folder else None
        # The panel groups scope "all" by repository (a folder in none is its own).
        if s.cwd and s.cwd not in repos:
            repo = repository_of(s.cwd)
            repos[s.cwd] = repo.root if repo else s.cwd
        session["repository"] = repos.get(s.cwd) if s.cwd else None
        sessions.append(session)
    offset = query.get("offset", 0)
    limit = query.get("limit")
    page = sessions[offset:] if limit is None else sessions[offset:offset + limit]
    return {"sessions": page, "total": len(sessions)}
