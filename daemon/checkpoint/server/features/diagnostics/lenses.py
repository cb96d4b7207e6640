"""Items as CodeLens: one short line above the lines an item concerns, for the items that ask nothing of
the user (`marks: codelens`).

A squiggle says "something is wrong here"; an item about this code that needs no action reads better
as a line above the block, the way a blame line does (decided from the screenshots in docs/usage.md).
What needs action stays a diagnostic: an item held for review, and one whose lines were rewritten
since the session (the checks' violations are diagnostics of their own). A lens's title is the
item's kind and statement, cut, and when it was said; clicking it opens the turn. A line with many
items shows MAX_CARDS lenses and a count, as its hover does.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from checkpoint.model import ItemRecord, plain_text
from checkpoint.server.features.diagnostics.cards import KIND_TITLE, MAX_CARDS, relative_time, when_said
from checkpoint.server.protocol import EDITOR_OPEN_TURN

TITLE_WIDTH = 70  # the statement in a lens: the lens is one line above the code, as short as a blame line


def needs_action(diagnostic: types.Diagnostic) -> bool:
    """Held for review, or the code it was about changed since the session: a diagnostic either way."""
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    return bool(data.get("held") or data.get("stale"))


def _short(text: str, width: int) -> str:
    text = " ".join(plain_text(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def title(item: ItemRecord, now: float) -> str:
    """"Decision: We'll use … · 3 days ago"."""
    kind = KIND_TITLE.get(item.kind, item.kind.value)
    when = when_said(item)
    ago = f" · {relative_time(when, now)}" if when is not None else ""
    superseded = " (superseded)" if item.superseded_by else ""
    return f"{kind}: {_short(item.statement, TITLE_WIDTH)}{superseded}{ago}"


def code_lenses(marks: Sequence[tuple[types.Range, ItemRecord]], now: float) -> list[types.CodeLens]:
    """A lens per item at the first line of its mark, at most MAX_CARDS a line, then one that counts
    the rest (it opens the first of them)."""
    by_line: dict[int, list[tuple[types.Range, ItemRecord]]] = {}
    for where, item in marks:
        by_line.setdefault(where.start.line, []).append((where, item))
    lenses: list[types.CodeLens] = []
    for line in sorted(by_line):
        group = by_line[line]
        at = types.Range(types.Position(line, 0), types.Position(line, 0))
        for _, item in group[:MAX_CARDS]:
            lenses.append(types.CodeLens(range=at, command=types.Command(
                title=title(item, now), command=EDITOR_OPEN_TURN, arguments=[item.id])))
        rest = group[MAX_CARDS:]
        if rest:
            lenses.append(types.CodeLens(range=at, command=types.Command(
                title=f"+{len(rest)} more (hover the line)", command=EDITOR_OPEN_TURN, arguments=[rest[0][1].id])))
    return lenses
