"""Which git repository a folder is in, read from the `.git` entries on disk (no git process: the
store asks this for every folder a session worked in, and a hook has well under a second).

A workspace is a repository: every worktree of a clone, and every folder below one, share its items.
The repository is named by its git common directory (`<clone>/.git`, or the bare repository a
worktree was added from), resolved: a worktree's `.git` file says `gitdir: <clone>/.git/worktrees/x`,
whose `commondir` file says where the common directory is. A folder in no repository is its own
workspace (the folder, as recorded, without a trailing separator).

A `.git` FILE is a link (a worktree's, a submodule's, `git init --separate-git-dir`'s), and anyone can
write one: a folder whose `.git` file names another repository's git directory joins that repository's
workspace only when git's own metadata there names this folder: a worktree's administrative folder
(it has a `commondir`) whose `gitdir` file names this folder's `.git`, or a submodule's git directory
whose `core.worktree` names this folder. Any other linked folder (a forged link, a copied `.git`
file) is a repository of its own, named by its `.git` file: its records act on its own items only
(checkpoint.team).

Answers are cached per process: a repository does not move under a running daemon, and a folder that
becomes one later (`git init`) is seen by the next process.
"""

from __future__ import annotations

import os
from collections import namedtuple
from functools import lru_cache

GIT = ".git"
TYPE_CHECKING = False  # typing is not loaded at run time: the pre-edit hook asks this module (4 ms to import it)
if TYPE_CHECKING:  # mypy reads this name as typing's
    from typing import NamedTuple

    class Repository(NamedTuple):
        root: str  # the worktree's top folder (where `.git` is), resolved
        # the git common directory, resolved: the same for every worktree of the clone; for a folder
        # linked by a `.git` file that is not a listed worktree (a submodule, a forged link), that file
        common_dir: str
else:
    Repository = namedtuple("Repository", ("root", "common_dir"))


def _read_line(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline(4096).strip()
    except OSError:
        return None


def _git_dir_of(entry: str, top: str) -> str | None:
    """The git directory a `.git` entry stands for: itself (a directory), or the one its `gitdir:`
    line names (a worktree's or a submodule's file)."""
    if os.path.isdir(entry):
        return entry
    line = _read_line(entry)
    if line is None or not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(top, line[len("gitdir:"):].strip()))


def _common_dir(git_dir: str) -> str:
    """The common directory of a git directory: what its `commondir` file names, else itself."""
    line = _read_line(os.path.join(git_dir, "commondir"))
    if line:
        return os.path.realpath(os.path.join(git_dir, line))
    return os.path.realpath(git_dir)


def _listed_worktree(git_dir: str, entry: str) -> bool:
    """Whether `git_dir` is the administrative folder of a worktree whose `.git` file is `entry`: git
    wrote a `commondir` there and a `gitdir` file naming the worktree's `.git` file."""
    if not os.path.isfile(os.path.join(git_dir, "commondir")):
        return False
    named = _read_line(os.path.join(git_dir, "gitdir"))
    if not named:
        return False
    return os.path.realpath(os.path.join(git_dir, named)) == os.path.realpath(entry)


def _own_submodule(git_dir: str, entry: str) -> bool:
    """Whether `git_dir` is a submodule's (or a separate) git directory whose `core.worktree` names the
    folder of `entry`: git wrote that setting there for this very folder."""
    if os.path.isfile(os.path.join(git_dir, "commondir")):
        return False
    try:
        with open(os.path.join(git_dir, "config"), encoding="utf-8", errors="replace") as f:
            lines = f.read(65536).splitlines()
    except OSError:
        return False
    for line in lines:
        key, sep, value = line.strip().partition("=")
        if sep and key.strip().lower() == "worktree":
            named = os.path.realpath(os.path.join(git_dir, value.strip()))
            return named == os.path.realpath(os.path.dirname(entry))
    return False


def _identity(entry: str, git_dir: str) -> str:
    """The workspace name of a repository found at `entry`: the common directory of a real `.git`
    folder, of a listed worktree, or of a git directory whose `core.worktree` names this folder (a
    submodule's); the `.git` file itself for any other link."""
    if os.path.isdir(entry) or _listed_worktree(git_dir, entry) or _own_submodule(git_dir, entry):
        return _common_dir(git_dir)
    return os.path.realpath(entry)


@lru_cache(maxsize=4096)
def repository_of(path: str) -> Repository | None:
    """The repository holding `path` (a folder, or a path below one that may be gone), or None."""
    folder = os.path.realpath(os.path.expanduser(path))
    while True:
        entry = os.path.join(folder, GIT)
        if os.path.lexists(entry):
            git_dir = _git_dir_of(entry, folder)
            if git_dir is not None and os.path.isdir(git_dir):
                return Repository(root=folder, common_dir=_identity(entry, git_dir))
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def workspace_key(folder: str) -> str:
    """The workspace a folder belongs to: its repository's common directory, else the folder itself
    (as given, without a trailing separator)."""
    repository = repository_of(folder)
    if repository is not None:
        return repository.common_dir
    return folder.rstrip(os.sep) or folder
