"""The pre-edit reminders' per-session ledger (`<db>.agent/reminders/<key>.json`: per file, the items
shown with a digest of what was shown), read and written by both of the hook's paths (the full one,
agent.pre_edit, and the narrow one, agent.pre_edit_narrow). Plain `os` only: it loads with the narrow
path, which must stay near the interpreter's own start.

Written only into folders that are the user's own and private (the database's folder by the rule of
checkpoint.ownership, the agent folder and its `reminders/`: real folders, the user's, no one else may
write), and no file is opened through a symlink (O_NOFOLLOW): a hook must never write where someone
else chose. Anything else is an OSError (NotPrivateLedger) for the hook to record."""

from __future__ import annotations

import contextlib
import os
import stat
import time

try:  # hashlib's own BLAKE2, without hashlib's load of OpenSSL's module (2 ms of every pre-edit hook)
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

from checkpoint.agent.plain_json import dumps, loads

LEDGER_KEEP_DAYS = 7  # ledgers of sessions untouched this long are removed (when a new one starts)
PRUNE_EVERY_SECONDS = 86_400.0  # at most this often: a look at every ledger was 1-3 ms of a new session's hook
PRUNED = ".pruned"  # in the ledgers' folder: its time is when they were last looked at
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

Shown = dict[str, dict[str, str]]  # resolved file path -> {item id: digest}


class NotPrivateLedger(OSError):
    """A folder the ledger would be written in that is not the user's own and private."""


def reminders_dir(db: str) -> str:
    """agent.problems.state_dir(db) / "reminders"."""
    return os.path.join(os.path.dirname(db), os.path.basename(db) + ".agent", "reminders")


def ledger_path(db: str, session_id: str) -> str:
    key = blake2b(session_id.encode(), digest_size=10).hexdigest()
    return os.path.join(reminders_dir(db), f"{key}.json")


def read_ledger(db: str, session_id: str | None) -> Shown:
    if session_id is None:
        return {}
    try:
        fd = os.open(ledger_path(db, session_id), os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            data = loads(fh.read())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(f): {str(i): str(d) for i, d in ids.items()} for f, ids in data.items() if isinstance(ids, dict)}


def _database_folder(folder: str) -> None:
    """ownership.database_folder_problem's rule, in os terms."""
    info = os.stat(folder)
    if info.st_uid != os.getuid() or info.st_mode & stat.S_IWOTH or (
            info.st_mode & stat.S_IWGRP and info.st_gid != os.getgid()):
        raise NotPrivateLedger(f"the database directory {folder} is not the user's own and private: "
                               "no reminder ledger is written there")


def _private_folder(folder: str) -> None:
    """ownership.private_folder's rule, in os terms: made 0700 if missing; a real folder, the user's, that
    no one else may write."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    if (stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
            or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        raise NotPrivateLedger(f"{folder} is not Checkpoint's own private folder (a symlink, another user's, "
                               "or writable by others): no reminder ledger is written there")


def write_ledger(db: str, session_id: str | None, shown: Shown) -> None:
    if session_id is None:
        return
    path = ledger_path(db, session_id)
    folder = os.path.dirname(path)
    _database_folder(os.path.dirname(db) or ".")
    _private_folder(os.path.dirname(folder))
    _private_folder(folder)
    fresh = not os.path.lexists(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | _CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(dumps(shown, ensure_ascii=False))
    os.replace(tmp, path)  # replaces a symlink planted at `path` itself, never writes through it
    if fresh:
        _prune(folder)


def forget_ledger(db: str, session_id: str) -> None:
    """Everything shown in this session may be shown again (its context was compacted or cleared)."""
    with contextlib.suppress(OSError):
        os.unlink(ledger_path(db, session_id))


def _prune(folder: str) -> None:
    now = time.time()
    marker = os.path.join(folder, PRUNED)
    with contextlib.suppress(OSError):
        if now - os.stat(marker, follow_symlinks=False).st_mtime < PRUNE_EVERY_SECONDS:
            return
    with contextlib.suppress(OSError):
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600))
        os.utime(marker, follow_symlinks=False)
    cutoff = now - LEDGER_KEEP_DAYS * 86_400
    with os.scandir(folder) as entries:
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue
