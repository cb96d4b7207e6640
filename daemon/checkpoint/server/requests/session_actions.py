"""A session's own actions, as the panel's session menu offers them: its transcript files
(`checkpoint/transcripts`, for Open Transcript) and `checkpoint.forget` (what `checkpoint forget`
does: everything stored for it removed, its transcripts read no more; or, with `undo`, read again)."""

from __future__ import annotations

from typing import Any

from checkpoint.model import TEAM_SESSION_PREFIX
from checkpoint.server.folders import file_uri
from checkpoint.server.protocol import ForgetResult, TranscriptsResult
from checkpoint.server.requests.items import QueryError, plain
from checkpoint.store import Store


def parse_session(params: Any) -> str:
    """{"session": id} or the id bare."""
    raw = plain(params)
    value = raw.get("session") if isinstance(raw, dict) else raw
    if not isinstance(value, str) or not value.strip():
        raise QueryError('checkpoint/transcripts takes {"session": session_id}')
    return value.strip()


def transcripts_of(store: Store, session_id: str) -> TranscriptsResult:
    paths = store.transcript_files(session_id)
    if paths is None:
        raise QueryError(f"no session {session_id!r} (checkpoint/sessions lists them)")
    return {"session_id": session_id, "files": [{"path": p, "uri": file_uri(p)} for p in paths]}


def parse_forget(args: tuple[object, ...]) -> tuple[str, bool]:
    """[session_id] or [{"session": session_id, "undo"?: bool}]: the session and whether to undo."""
    first = args[0] if args else None
    if isinstance(first, str) and first.strip():
        return first.strip(), False
    if isinstance(first, dict) and isinstance(first.get("session"), str) and first["session"].strip():
        undo = first.get("undo", False)
        if not isinstance(undo, bool):
            raise ValueError("`undo` must be true or false")
        return first["session"].strip(), undo
    raise ValueError('expected the session id as the first argument, or {"session": id, "undo"?: bool}')


def forget(store: Store, session_id: str, undo: bool) -> ForgetResult:
    """Raises ValueError for a team session or an id that names no (forgotten) session."""
    if session_id.startswith(TEAM_SESSION_PREFIX):
        raise ValueError("a repository's shared decisions are its decision records: remove a record's file to"
                         " stop sharing it")
    if undo:
        if not store.unforget(session_id):
            raise ValueError(f"session {session_id!r} is not forgotten")
        return {"session_id": session_id, "removed": {}, "undone": True}
    removed = store.forget_session(session_id)
    if removed is None:
        raise ValueError(f"no session {session_id!r} (checkpoint/sessions lists them)")
    return {"session_id": session_id, "removed": removed, "undone": False}
