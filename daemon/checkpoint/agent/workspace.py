"""Which folders a workspace is: the path as given and, when it differs, its real path (a symlinked
checkout is the same workspace whichever way the agent recorded its cwd)."""

from __future__ import annotations

import os


def workspace_folders(path: str) -> list[str]:
    given = os.path.abspath(os.path.expanduser(path))
    real = os.path.realpath(given)
    return [given] if real == given else [given, real]
