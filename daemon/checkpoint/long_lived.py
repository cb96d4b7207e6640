"""Imports that live as long as the process, made with the cyclic garbage collector held back: the
entry's (checkpoint.startup) and the daemon's (`checkpoint serve`). A leaf: it imports nothing of the
package, so the entry and the CLI both use it without importing each other."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def long_lived_imports() -> Iterator[None]:
    """What is imported here lives as long as the process, so collecting while it is built frees
    nothing (the CLI's imports ran 38 collections for nothing), and every later full collection
    would walk all of it again (the daemon's lsprotocol alone defines ~1,000 classes). The collector
    waits meanwhile, and what was imported is frozen out of its way after (gc.freeze)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
