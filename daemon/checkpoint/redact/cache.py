"""Where redaction keeps what is costly to derive at every start (the detect-secrets table, the
anchors of each regex), and how such a file is written: whole, so a reader never sees half of one."""

from __future__ import annotations

import json
import os
from pathlib import Path


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "checkpoint"


def write_whole(path: Path, data: object) -> bool:
    """Write a cache file whole (a reader never sees half of one); False: it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
        return True
    except OSError:
        return False
