"""Whether a folder is the user's own, for the database (every front end: `now`, `scan`, `serve`,
the hooks, the MCP server) and for the agent front ends' small files beside it (`<db>.agent/`).

A folder another user owns, or one others may write, lets them swap the database for one of their
own (its items then reach the user's agent as recorded decisions) or plant a symlink where a hook
writes. Plain `os` only: this loads with every hook."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


class NotPrivate(OSError):
    """A folder or file that is not the user's own and private: the message names it and what to do."""


def database_folder_problem(directory: Path) -> str | None:
    """Why the database's folder must not be used, or None. A group-writable folder is fine when the
    group is the user's own (per-user groups, umask 002); any other group's members could swap the file."""
    info = directory.stat()
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.getuid():
        return (f"the database directory {directory} belongs to another user (uid {info.st_uid}): "
                "set CHECKPOINT_DB to a directory of your own")
    if info.st_mode & stat.S_IWOTH:
        return (f"the database directory {directory} is writable by everyone (mode {mode:o}): run "
                f"`chmod o-w '{directory}'`, or set CHECKPOINT_DB to a private directory")
    if info.st_mode & stat.S_IWGRP and info.st_gid != os.getgid():
        return (f"the database directory {directory} is writable by group {info.st_gid}, not your own group "
                f"(mode {mode:o}): run `chmod g-w '{directory}'`, or set CHECKPOINT_DB to a private directory")
    return None


def private_folder(folder: Path, *, create: bool = True) -> Path:
    """`folder`, made (0700) if missing and `create`; raises NotPrivate unless it is a real folder (no
    symlink) of the user's own that no one else may write."""
    if create:
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    info = folder.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise NotPrivate(f"{folder} is a symlink, not Checkpoint's own folder: remove it (Checkpoint makes its own)")
    if not stat.S_ISDIR(info.st_mode):
        raise NotPrivate(f"{folder} is not a folder: move it aside (Checkpoint makes its own)")
    if info.st_uid != os.getuid():
        raise NotPrivate(f"{folder} belongs to another user (uid {info.st_uid}), not private: "
                         "remove it (Checkpoint makes its own)")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise NotPrivate(f"{folder} is writable by others (mode {stat.S_IMODE(info.st_mode):o}), not private: "
                         f"run `chmod go-w '{folder}'`")
    return folder


def open_private(path: Path, flags: int) -> int:
    """os.open that never follows a symlink at `path` (O_NOFOLLOW: ELOOP), new files private."""
    return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
