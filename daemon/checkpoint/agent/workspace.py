"""Which folder a workspace is: the path as given, absolute. Symlinks are the store's to resolve: its
scoping rule (store/scope.py) matches a folder and a session's cwds as written and as resolved."""

from __future__ import annotations

import os


def workspace_folders(path: str) -> list[str]:
    return [os.path.abspath(os.path.expanduser(path))]
