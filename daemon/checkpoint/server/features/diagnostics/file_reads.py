"""Reading workspace files to anchor diagnostics, and only those worth reading.

An agent touches logs, datasets and dumps as readily as code; reading a 4 GB file to find where
an edit landed took 8 GiB and a core. A file over `MAX_BYTES` or not text is not read (its
diagnostics go to line 0 and say why); what was read is kept by (path, mtime, size) so a refresh
re-reads only what changed; and one refresh reads at most `REFRESH_BUDGET` bytes afresh.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass

MAX_BYTES = 2 * 1024 * 1024
REFRESH_BUDGET = 32 * 1024 * 1024
CACHE_BYTES = 32 * 1024 * 1024
_SNIFF = 8192


@dataclass(frozen=True)
class Unread:
    """A file that exists but was not read, and why (said in its diagnostics)."""

    reason: str


Content = str | Unread | None  # None: no such file (or not a regular one)


class Budget:
    """Bytes one refresh may still read from disk."""

    def __init__(self, limit: int = REFRESH_BUDGET) -> None:
        self.left = limit


class FileReads:
    def __init__(self, max_bytes: int = MAX_BYTES, cache_bytes: int = CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.cache_bytes = cache_bytes
        self._cache: OrderedDict[tuple[str, int, int], str | Unread] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()  # reads happen on worker threads and on the event loop
        self.disk_reads = 0  # how many files were opened, for tests

    def read(self, path: str, budget: Budget | None = None) -> Content:
        try:
            info = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None  # a FIFO or a device would block or never end
        if info.st_size > self.max_bytes:
            return Unread(f"not read: the file is over {self.max_bytes // (1024 * 1024)} MB")
        key = (path, info.st_mtime_ns, info.st_size)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        if budget is not None:
            if budget.left < info.st_size:
                return Unread("not read: too many files to read at once; it is read when next opened or saved")
            budget.left -= info.st_size
        content = self._load(path)
        if content is None:
            return None
        self._remember(key, content)
        return content

    def _load(self, path: str) -> str | Unread | None:
        self.disk_reads += 1
        try:
            with open(path, "rb") as fh:
                data = fh.read(self.max_bytes + 1)
        except OSError:
            return None
        if len(data) > self.max_bytes:  # it grew since the stat
            return Unread(f"not read: the file is over {self.max_bytes // (1024 * 1024)} MB")
        if b"\0" in data[:_SNIFF]:
            return Unread("not read: the file is not text")
        return data.decode("utf-8", errors="replace")

    def _remember(self, key: tuple[str, int, int], content: str | Unread) -> None:
        size = len(content) if isinstance(content, str) else 0
        with self._lock:
            for old in [k for k in self._cache if k[0] == key[0]]:  # older versions of this file
                self._drop(old)
            self._cache[key] = content
            self._held += size
            while self._held > self.cache_bytes and len(self._cache) > 1:
                self._drop(next(iter(self._cache)))

    def _drop(self, key: tuple[str, int, int]) -> None:
        old = self._cache.pop(key)
        self._held -= len(old) if isinstance(old, str) else 0
