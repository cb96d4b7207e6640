"""A client's copy of the workspace's sessions, kept from the `workspace_sessions` deltas of
`checkpoint/status` as docs/protocol.md tells any client to keep it (the VS Code extension's is
vscode-extension/src/sessionMirror.ts): the tests and scripts/bench_status.py read statuses through
it, so that what they check is what a client can rebuild from the wire."""

from __future__ import annotations

from typing import Any, cast

from checkpoint.server.features.status.workspace_sessions import newest_first
from checkpoint.server.protocol import SessionStatus


class SessionMirror:
    """The workspace's sessions as of `version`, rebuilt from deltas; a gap is reported, not guessed."""

    def __init__(self) -> None:
        self.by_id: dict[str, dict[str, Any]] = {}
        self.version = 0

    def apply(self, delta: dict[str, Any]) -> bool:
        """Apply one status's delta; False (nothing changed here) when it does not follow on from
        this copy's version: the client must ask `checkpoint/workspaceSessions` for the whole list."""
        if delta["since"] == 0:
            self.by_id.clear()  # a delta from nothing: the daemon's first, the whole list
        elif delta["version"] <= self.version:
            return True  # nothing changed, or already in a list asked for since
        elif delta["since"] != self.version:
            return False
        for session in delta["changed"]:
            self.by_id[session["id"]] = session
        for session_id in delta["removed"]:
            self.by_id.pop(session_id, None)
        self.version = delta["version"]
        return True

    def reset(self, answer: dict[str, Any]) -> None:
        """Start again from a `checkpoint/workspaceSessions` answer."""
        self.by_id = {s["id"]: s for s in answer["sessions"]}
        self.version = answer["version"]

    @property
    def sessions(self) -> list[dict[str, Any]]:
        ordered = newest_first([cast("SessionStatus", s) for s in self.by_id.values()])
        return [dict(s) for s in ordered]

    def full(self, status: dict[str, Any]) -> dict[str, Any]:
        """The status as a client shows it: its delta replaced by the whole list of the workspace's sessions."""
        out = {k: v for k, v in status.items() if k != "workspace_sessions"}
        out["sessions"] = self.sessions
        return out
