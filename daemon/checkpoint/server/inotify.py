"""Linux inotify through ctypes, for the watcher: a wait that costs nothing at rest. The event loop
wakes only when the kernel has events for the watched directories, where watchfiles' thread wakes
every step (15 ms) to look at its stop event (about half the daemon's CPU at rest over 2,000
sessions). Elsewhere, or when inotify cannot be had (no libc symbol, the watch limit reached), the
watcher uses watchfiles as before."""

from __future__ import annotations

import ctypes
import errno
import os
import struct

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
_NONBLOCK = os.O_NONBLOCK
_CLOEXEC = getattr(os, "O_CLOEXEC", 0o2000000)
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)
_SKIPPED = frozenset({errno.EACCES, errno.ENOENT, errno.ENOTDIR, errno.ELOOP})  # gone or not ours: not watched


class Changes:
    """What one read found: the paths that changed, the directories that appeared (now watched), and
    whether the kernel's queue overflowed (events were lost: a full scan is due)."""

    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.new_dirs: set[str] = set()
        self.overflow = False

    def update(self, other: Changes) -> None:
        self.paths |= other.paths
        self.new_dirs |= other.new_dirs
        self.overflow = self.overflow or other.overflow


class Inotify:
    """One inotify instance watching directory trees (symlinked directories are not followed)."""

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        fd = self._libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self.fd: int = fd
        self._dirs: dict[int, str] = {}

    def watch_tree(self, root: str) -> None:
        """Watch root and every directory below it. Raises OSError when the kernel refuses a watch
        for another reason than the directory being gone or unreadable (the watch limit)."""
        for dirpath, _dirs, _files in os.walk(root):
            self._add(dirpath)

    def watch_dir(self, path: str) -> None:
        """Watch one directory, not below it. Raises OSError when it cannot be watched."""
        self._add(path)
        if not self._dirs:
            raise OSError(errno.ENOENT, f"cannot watch {path}")

    def _add(self, path: str) -> None:
        wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), MASK)
        if wd < 0:
            code = ctypes.get_errno()
            if code in _SKIPPED:
                return
            raise OSError(code, f"cannot watch {path}: {os.strerror(code)}")
        self._dirs[wd] = path

    def read(self) -> Changes:
        """Every event queued now (non-blocking); a directory created is watched at once, with the
        directories already in it (what was written there before is found by scanning it)."""
        out = Changes()
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return out
            if not data:
                return out
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
                name = data[pos + _EVENT.size:pos + _EVENT.size + length].rstrip(b"\0")
                pos += _EVENT.size + length
                if mask & IN_Q_OVERFLOW:
                    out.overflow = True
                    continue
                if mask & IN_IGNORED:
                    self._dirs.pop(wd, None)
                    continue
                directory = self._dirs.get(wd)
                if directory is None:
                    continue
                path = os.path.join(directory, os.fsdecode(name)) if name else directory
                if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                    self.watch_tree(path)
                    out.new_dirs.add(path)
                elif name:
                    out.paths.add(path)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
