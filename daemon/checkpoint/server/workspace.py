"""Session <-> workspace: a session belongs to the workspace folder that holds its cwd, a file to
the folder that holds it. Paths are compared as realpaths (symlinked checkouts, /tmp vs
/private/tmp), but URIs are built from the folder's own URI so they match what the editor opened.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from pygls import uris

if TYPE_CHECKING:
    from checkpoint.store import Store


@lru_cache(maxsize=4096)
def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def resolve(path: str, cwd: str | None) -> str | None:
    """Where a path an item names is: a relative one against its session's cwd (never the daemon's:
    the daemon may be started anywhere), then symlinks and `..` resolved, so that two spellings of
    one file are one file. None for a relative path with no cwd to resolve it against."""
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        if not cwd:
            return None
        path = os.path.join(os.path.expanduser(cwd), path)
    return _real(path)


@dataclass(frozen=True)
class Folder:
    uri: str
    path: str  # as the editor gave it
    real: str


class Folders:
    def __init__(self, folder_uris: Iterable[str]) -> None:
        folders = []
        for uri in folder_uris:
            path = uris.to_fs_path(uri)
            if path:
                folders.append(Folder(uri.rstrip("/"), path, _real(path)))
        # Deepest first: a file in a nested folder belongs to the innermost one.
        self.folders = sorted(folders, key=lambda f: len(f.real), reverse=True)

    @property
    def uris(self) -> list[str]:
        return sorted(f.uri for f in self.folders)

    def folder_of(self, path: str | None) -> Folder | None:
        if not path:
            return None
        real = _real(path)
        for folder in self.folders:
            if real == folder.real or real.startswith(folder.real.rstrip(os.sep) + os.sep):
                return folder
        return None

    def uri_for(self, path: str) -> str | None:
        """The URI of a file inside a workspace folder, spelled from the folder's URI; None outside."""
        folder = self.folder_of(path)
        if folder is None:
            return None
        rel = os.path.relpath(_real(path), folder.real)
        if rel == ".":
            return folder.uri
        return file_uri(os.path.join(folder.path, rel))


def scope_sessions(store: Store, folders: Folders, scope: str) -> list[str] | None:
    """Session ids in scope; None means all of them."""
    if scope == "all":
        return None
    return [sid for sid, cwd in store.session_cwds_by_id().items() if folders.folder_of(cwd)]


def path_of(uri: str) -> str | None:
    return uris.to_fs_path(uri)


def file_uri(path: str) -> str:
    return uris.from_fs_path(path) or "file://" + path
