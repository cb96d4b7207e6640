"""What the features tell each other, as typed events on one bus.

A feature that has news publishes an event and does not know who listens; a feature that cares
subscribes in its constructor. This is how the notifications go that would otherwise make a cycle
(the watcher tells extraction of new turns, extraction tells the status of its run, and both tell
the diagnostics that items changed). A feature that needs an answer from another (extraction asks
the watcher for a scan) takes it as a constructor parameter instead.

Handlers run synchronously, in the order they subscribed, inside `publish`: as a direct call did,
so the order of effects on one event-loop step is the caller's. They must not block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from checkpoint.server.protocol import RunSummary


@dataclass(frozen=True)
class TurnsAdded:
    """A scan stored new turns or chunks (`count` turns; 0 when only chunks were made)."""

    count: int


@dataclass(frozen=True)
class CountsChanged:
    """The counts the status shows may have changed (a scan read files, an item was triaged, the
    periodic rescan came round and another window may have written)."""


@dataclass(frozen=True)
class ItemsChanged:
    """Items were added or changed state: what the diagnostics show is stale."""


@dataclass(frozen=True)
class ProblemSeen:
    """Something the user should know went wrong; the status shows it as its last error."""

    message: str


@dataclass(frozen=True)
class RunStarted:
    total: int


@dataclass(frozen=True)
class RunProgressed:
    done: int
    total: int


@dataclass(frozen=True)
class RunFinished:
    """A run ended: its summary, or None and the `error` it died of."""

    summary: RunSummary | None
    error: str | None = None


Event = TurnsAdded | CountsChanged | ItemsChanged | ProblemSeen | RunStarted | RunProgressed | RunFinished
E = TypeVar("E", bound=Event)


class EventBus:
    def __init__(self) -> None:
        self._handlers: dict[type[Any], list[Callable[[Any], None]]] = {}

    def subscribe(self, kind: type[E], handler: Callable[[E], None]) -> None:
        self._handlers.setdefault(kind, []).append(handler)

    def publish(self, event: Event) -> None:
        for handler in self._handlers.get(type(event), ()):
            handler(event)
