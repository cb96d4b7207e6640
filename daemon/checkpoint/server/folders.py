"""Session <-> workspace: which sessions belong to the workspace folders is the store's one rule
(`Store.folder_sessions`, store/scope.py); a file belongs to the folder that holds it. Paths are
compared as realpaths (symlinked checkouts, /tmp vs /private/tmp), but URIs are built from the
folder's own URI so they match what the editor opened.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pygls import uris

from checkpoint.store.scope import inside, real_path

if TYPE_CHECKING:
    from checkpoint.status_scope import FolderSessionsCache
    from checkpoint.store import Store


def item_path(path: str, cwd: str | None) -> str | None:
    """Where a path an item names is: a relative one against its session's cwd (never the daemon's:
    the daemon may be started anywhere), then symlinks and `..` resolved, so that two spellings of
    one file are one file. None for a relative path with no cwd to resolve it against."""
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        if not cwd:
            return None
        path = os.path.join(os.path.expanduser(cwd), path)
    return real_path(path)


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
                folders.append(Folder(uri.rstrip("/"), path, real_path(path)))
        # Deepest first: a file in a nested folder belongs to the innermost one.
        self.folders = sorted(folders, key=lambda f: len(f.real), reverse=True)

    @property
    def uris(self) -> list[str]:
        return sorted(f.uri for f in self.folders)

    def folder_of(self, path: str | None) -> Folder | None:
        if not path:
            return None
        real = real_path(path)
        for folder in self.folders:
            if inside(real, folder.real):
                return folder
        return None

    @property
    def paths(self) -> list[str]:
        """The folders' paths, as the store's scoping rule takes them."""
        return [f.path for f in self.folders]

    def sessions(self, store: Store, kept: FolderSessionsCache | None = None) -> dict[str, Folder]:
        """The sessions that belong to these folders (the store's rule), each with its folder.
        `kept`: the answer kept from the call before, read again for the sessions changed since."""
        by_path = {f.path: f for f in self.folders}
        found = store.folder_sessions(self.paths) if kept is None else kept.sessions(store, self.paths)
        return {sid: by_path[path] for sid, path in found.items()}

    def uri_for(self, path: str) -> str | None:
        """The URI of a file inside a workspace folder, spelled from the folder's URI; None outside."""
        folder = self.folder_of(path)
        if folder is None:
            return None
        rel = os.path.relpath(real_path(path), folder.real)
        if rel == ".":
            return folder.uri
        return file_uri(os.path.join(folder.path, rel))


def path_of(uri: str) -> str | None:
    return uris.to_fs_path(uri)


def file_uri(path: str) -> str:
    return uris.from_fs_path(path) or "file://" + path
