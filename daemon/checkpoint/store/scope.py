"""Which sessions belong to a workspace: the one scoping rule every surface asks the store (the
daemon's status, sessions, items and search, the agent hooks and MCP tools, the CLI).

A session belongs to a folder when one of the folders it worked in (session_cwds: its first cwd and
every later one, after a `cd`, a relocation, a Codex turn elsewhere) is that folder or inside it, or
is in the same workspace: the same git repository (any worktree of the clone, any folder of it;
checkpoint.repository, recorded with each folder when it is stored).
Paths are compared as recorded and with symlinks and `~` resolved, on both sides: a symlinked
checkout, /tmp and /private/tmp, are one folder however the editor opened it or the agent recorded
its cwd. Inside means below by whole path components (`/w/li` holds neither `/w/lib` nor anything
in it); `/` holds every path.

SQLite cannot resolve a symlink, so the rule runs in two steps: the distinct folders sessions worked
in (one query over an index: few, however long the history) are matched here, each resolved once
per process; the sessions and items are then selected in SQL by those recorded folders.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from checkpoint.repository import workspace_key
from checkpoint.store.connection import StoreBase
from checkpoint.store.items import folder_of


@lru_cache(maxsize=4096)
def real_path(path: str) -> str:
    """The path with `~`, symlinks and `..` resolved (cached: asked for every session's folder on
    every status)."""
    return os.path.realpath(os.path.expanduser(path))


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or below it, by whole components (both spelled alike)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _spellings(path: str) -> tuple[str, ...]:
    """A path as written (without a trailing separator) and, when it differs, as resolved."""
    given = path.rstrip(os.sep) or path
    real = real_path(path)
    return (given,) if real == given else (given, real)


class _Folders:
    """Workspace folders as given, deepest first (a path in nested folders belongs to the innermost)."""

    def __init__(self, folders: Sequence[str]) -> None:
        unique = [f for f in dict.fromkeys(folders) if f]
        self.folders = sorted(((f, _spellings(f)) for f in unique), key=lambda f: len(real_path(f[0])), reverse=True)

    def holder(self, path: str) -> str | None:
        """The deepest folder holding the path, by either spelling of each; None: none does."""
        mine = _spellings(path)
        for folder, theirs in self.folders:
            if any(inside(p, f) for p in mine for f in theirs):
                return folder
        return None


class ScopeMixin(StoreBase):
    def _held_cwds(self, folders: Sequence[str]) -> dict[str, str]:
        """Each folder sessions worked in (as recorded) that one of these folders holds, with the
        deepest that does."""
        scope = _Folders(folders)
        if not scope.folders:
            return {}
        # a folder's repository holds every folder recorded with it as their workspace (deepest first:
        # the first folder named for a repository keeps it)
        by_workspace: dict[str, str] = {}
        for named, _ in scope.folders:
            by_workspace.setdefault(workspace_key(named), named)
        held = {}
        for cwd, workspace in self.conn.execute("SELECT DISTINCT cwd, workspace FROM session_cwds"):
            folder = scope.holder(cwd) or by_workspace.get(workspace or "")
            if folder is not None:
                held[cwd] = folder
        return held

    def _scope_clause(self, folders: Sequence[str]) -> tuple[str, list[Any]]:
        """SQL for "session `s` belongs to one of these folders", and its arguments."""
        cwds = list(self._held_cwds(folders))
        if not cwds:
            return "0", []
        marks = ",".join("?" * len(cwds))
        return f"EXISTS (SELECT 1 FROM session_cwds w WHERE w.session_id = s.id AND w.cwd IN ({marks}))", cwds

    def folder_sessions(self, folders: Sequence[str]) -> dict[str, str]:
        """The sessions that belong to these folders, by id, each with the folder it is shown under:
        the deepest holding its first cwd, else the deepest holding a later one. In order of id."""
        held = self._held_cwds(folders)
        if not held:
            return {}
        depth = {folder: len(real_path(folder)) for folder in set(held.values())}
        out: dict[str, str] = {}
        rows = self.conn.execute(
            "SELECT w.session_id, w.cwd, s.cwd FROM session_cwds w JOIN sessions s ON s.id = w.session_id"
            f" WHERE w.cwd IN ({','.join('?' * len(held))}) ORDER BY w.session_id",
            list(held),
        )
        for session_id, cwd, first in rows:
            first_folder = held.get(folder_of(first) or "")
            folder = first_folder or held[cwd]
            shown = out.get(session_id)
            if shown is None or (first_folder is None and depth[folder] > depth[shown]):
                out[session_id] = folder
        return out
