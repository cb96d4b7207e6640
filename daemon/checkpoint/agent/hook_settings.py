"""The settings the pre-edit hook's narrow path needs (agent.pre_edit_narrow), cached so that it does
not parse the TOML config file on each call (`import tomllib` alone costs more than the rest of its
start): the database, whether reminders are on, the key of the redactor the stored lines must have
been rendered with, the schema version it reads, and the MCP tools' prefixes.

The full hook writes the cache each time it runs the pre-edit hook (`remember`); the narrow path uses
it only while what the settings came from is unchanged: the config file (path, size, times, inode) and
every environment variable a setting is read from. Anything else (no cache, a change, a cache file not
the user's own and private) sends the call down the full path, which loads the settings and writes the
cache again. The file lives in the user's cache folder (`$XDG_CACHE_HOME/checkpoint/`, 0700), one per
environment, and is opened without following symlinks. Plain `os` and `_json` (agent.plain_json): it
loads with the narrow path."""

from __future__ import annotations

import contextlib
import os
import stat

try:  # hashlib's own BLAKE2, without hashlib's load of OpenSSL's module (2 ms of every pre-edit hook)
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

from checkpoint.agent.plain_json import dumps, loads

TYPE_CHECKING = False  # typing itself is not loaded on the narrow path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

FORMAT = 2  # the cache file's shape; another one is not read
# What a setting is read from besides the config file: every CHECKPOINT_ variable, and the folders the
# defaults and `~` are read from.
_ALSO = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or os.path.expanduser("~")


def config_path(environ: Mapping[str, str]) -> str:
    """config.config_file(), from `environ`."""
    if environ.get("CHECKPOINT_CONFIG"):
        return environ["CHECKPOINT_CONFIG"]
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(_home(environ), ".config")
    return os.path.join(base, "checkpoint", "config.toml")


def _inputs(environ: Mapping[str, str]) -> dict[str, Any]:
    """What the settings are made of: the environment's part, and the config file as it is on disk."""
    env = {k: v for k, v in environ.items() if k.startswith("CHECKPOINT_") or k in _ALSO}
    path = config_path(environ)
    try:
        info = os.stat(path)
        on_disk: list[int] | None = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev]
    except OSError:
        on_disk = None
    return {"format": FORMAT, "env": dict(sorted(env.items())), "config": path, "config_stat": on_disk}


def cache_file(environ: Mapping[str, str]) -> str:
    """One file per environment (a second agent with another CHECKPOINT_DB keeps its own)."""
    env = dumps(sorted((k, v) for k, v in environ.items() if k.startswith("CHECKPOINT_") or k in _ALSO))
    key = blake2b(env.encode(), digest_size=8).hexdigest()
    base = environ.get("XDG_CACHE_HOME") or os.path.join(_home(environ), ".cache")
    return os.path.join(base, "checkpoint", f"hook-settings-{key}.json")


def load(environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The cached settings, or None when there is none this environment and config file can use."""
    try:
        fd = os.open(cache_file(environ), os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return None  # someone else's settings would choose the database the agent is shown
        try:
            cached = loads(fh.read(1 << 20))
        except ValueError:
            return None
    if not isinstance(cached, dict) or cached.get("inputs") != _inputs(environ):
        return None
    settings = cached.get("settings")
    return settings if isinstance(settings, dict) else None


def remember(db: Path, reminders: bool, redact: bool, patterns: Mapping[str, str],
             environ: Mapping[str, str] | None = None, decisions_dir: str | None = None) -> None:
    """Cache these settings (loaded by the full hook just now) for the narrow path; never raises."""
    with contextlib.suppress(Exception):
        _remember(db, reminders, redact, patterns, os.environ if environ is None else environ, decisions_dir)


def _remember(db: Path, reminders: bool, redact: bool, patterns: Mapping[str, str],
              environ: Mapping[str, str], decisions_dir: str | None) -> None:
    import json  # the full hook's: it has loaded json already

    from checkpoint import redact as redaction
    from checkpoint.agent.context import PLUGIN_TOOLS, SERVER_TOOLS
    from checkpoint.shown_text import redaction_key
    from checkpoint.store.migrations import APPLICATION_ID, MIGRATIONS

    settings = {"db": str(db), "agent_reminders": reminders,
                "redaction": redaction_key(redaction.redactor(redact, dict(patterns))) if reminders else None,
                "custom_patterns": bool(patterns), "schema": len(MIGRATIONS), "application_id": APPLICATION_ID,
                "tools": {"plugin": PLUGIN_TOOLS, "server": SERVER_TOOLS},
                # where a repository's decision records are (their checks: the narrow path leaves a
                # repository that has any to the full hook)
                "decisions_dir": decisions_dir}
    path = cache_file(environ)
    body = {"inputs": _inputs(environ), "settings": settings}
    if load(environ) == settings:
        return
    folder = os.path.dirname(path)
    os.makedirs(os.path.dirname(folder), mode=0o700, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
            or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        return  # not our own private folder: no cache (the narrow path falls back each time)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | _CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(body, fh, ensure_ascii=False)
    os.replace(tmp, path)
