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
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import groupby
from operator import itemgetter
from typing import Any

from checkpoint.repository import workspace_key
from checkpoint.store.connection import StoreBase
from checkpoint.store.items import folder_of

FolderRow = tuple[str, str, str | None, str | None]  # session_folder_rows: session, cwd, workspace, first cwd


@lru_cache(maxsize=1 << 16)
def real_path(path: str) -> str:
    """The path with `~`, symlinks and `..` resolved (cached: asked for every folder sessions worked
    in when the workspace's sessions are read; a bound below their number made every look-up miss,
    4,096 against 5,000 folders: 28 % of the daemon's CPU in scripts.bench_status)."""
    return os.path.realpath(os.path.expanduser(path))


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or below it, by whole components (both spelled alike)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _spellings(path: str) -> tuple[str, ...]:
    """A path as written (without a trailing separator) and, when it differs, as resolved."""
    given = path.rstrip(os.sep) or path
    real = real_path(path)
    return (given,) if real == given else (given, real)


class FoldersInScope:
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


def held_cwds(pairs: Iterable[tuple[str, str | None]], scope: FoldersInScope,
              holders: dict[str, str | None] | None = None) -> dict[str, str]:
    """Each folder sessions worked in (as recorded; `pairs`: each with its recorded workspace) that
    one of the scope's folders holds, with the deepest that does. `holders`: the holder of each cwd
    as found before for this scope (kept by a caller that asks again: status_scope.py)."""
    if not scope.folders:
        return {}
    # a folder's repository holds every folder recorded with it as their workspace (deepest first:
    # the first folder named for a repository keeps it)
    by_workspace: dict[str, str] = {}
    for named, _ in scope.folders:
        by_workspace.setdefault(workspace_key(named), named)
    held = {}
    for cwd, workspace in pairs:
        if holders is None:
            folder = scope.holder(cwd)
        elif cwd in holders:
            folder = holders[cwd]
        else:
            folder = holders[cwd] = scope.holder(cwd)
        folder = folder or by_workspace.get(workspace or "")
        if folder is not None:
            held[cwd] = folder
    return held


def session_folder(rows: Iterable[tuple[str, str | None]], held: Mapping[str, str]) -> str | None:
    """The folder a session is shown under (`rows`: each folder it worked in that is held, with its
    first cwd): the deepest holding its first cwd, else the deepest holding a later one."""
    shown: str | None = None
    for cwd, first in rows:
        first_folder = held.get(folder_of(first) or "")
        folder = first_folder or held[cwd]
        if shown is None or (first_folder is None and len(real_path(folder)) > len(real_path(shown))):
            shown = folder
    return shown


class ScopeMixin(StoreBase):
    def _held_cwds(self, folders: Sequence[str]) -> dict[str, str]:
        """Each folder sessions worked in (as recorded) that one of these folders holds, with the
        deepest that does."""
        scope = FoldersInScope(folders)
        if not scope.folders:
            return {}
        return held_cwds(self.conn.execute("SELECT DISTINCT cwd, workspace FROM session_cwds"), scope)

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
        out: dict[str, str] = {}
        rows = self.conn.execute(
            "SELECT w.session_id, w.cwd, s.cwd FROM session_cwds w JOIN sessions s ON s.id = w.session_id"
            f" WHERE w.cwd IN ({','.join('?' * len(held))}) ORDER BY w.session_id",
            list(held),
        )
        for session_id, group in groupby(rows, key=itemgetter(0)):
            folder = session_folder(((cwd, first) for _, cwd, first in group), held)
            if folder is not None:
                out[session_id] = folder
        return out

    def session_folder_rows(self, session_ids: Sequence[str] | None = None) -> list[FolderRow]:
        """(session, a folder it worked in, that folder's recorded workspace, the session's first cwd)
        of these sessions (None: every one), in order of session: what folder_sessions is made of,
        for a caller that keeps it (status_scope.py)."""
        sql = ("SELECT w.session_id, w.cwd, w.workspace, s.cwd FROM session_cwds w"
               " JOIN sessions s ON s.id = w.session_id")
        if session_ids is None:
            return self.conn.execute(sql + " ORDER BY w.session_id").fetchall()
        out: list[FolderRow] = []
        for start in range(0, len(session_ids), 500):
            part = session_ids[start:start + 500]
            out += self.conn.execute(sql + f" WHERE w.session_id IN ({','.join('?' * len(part))})"
                                     " ORDER BY w.session_id", part).fetchall()
        return out
