"""What a session or an item named on the command line is: its id, or a unique prefix of one."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from checkpoint.model import plain_text
from checkpoint.store import Store


class NoSuchSession(Exception):
    """A session named on the command line that names no one stored session (the message says why)."""


def one_session(store: Store, given: str, forgotten: bool = False) -> str:
    """The stored (or forgotten) session `given` names: its id, or a prefix of one id alone."""
    matches = store.session_ids(given, forgotten=forgotten)
    if len(matches) == 1:
        return matches[0]
    what = "forgotten session" if forgotten else "session"
    if matches:
        raise NoSuchSession(f"{given!r} names {len(matches)} {what}s: {', '.join(matches[:10])}"
                             f"{' …' if len(matches) > 10 else ''}; give more of the id.")
    if not forgotten and (gone := store.session_ids(given, forgotten=True)):
        raise NoSuchSession(f"session {gone[0] if len(gone) == 1 else repr(given)} is already forgotten "
                            f"(`checkpoint forget --undo {given}` reads it in again)")
    raise NoSuchSession(f"no {what} {given!r} in this database (`checkpoint status` lists them)")


def one_item(store: Store, prefix: str) -> str | None:
    matches = store.item_ids(prefix)
    if len(matches) == 1:
        return matches[0]
    if matches:
        print(plain_text(f"checkpoint: {prefix!r} names {len(matches)} items: {', '.join(matches[:10])}; give more "
                         "of the id."), file=sys.stderr)
    else:
        print(plain_text(f"checkpoint: no item {prefix!r} (`checkpoint items --all` lists them with their ids)."),
              file=sys.stderr)
    return None


def id_width(ids: Iterable[str], least: int = 8) -> int:
    """How many leading characters tell these ids apart (at least `least`): the width a table shows
    them at, so that no two rows show the same id ("spotter_" three times)."""
    unique = set(ids)
    width = least
    while len({i[:width] for i in unique}) < len(unique):
        width += 1
    return width
