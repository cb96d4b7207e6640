"""The hover on a marked line: one short card per item, the way a blame line reads.

A card says what the item is (kind, statement, held for review), who said it and when in relative
time ("said by you in a Claude Code session, 3 days ago"; for a team record, that it was shared in the
repository's records, and when), its state, and its actions as command links (Open Turn, Accept and
Dismiss where they apply, Open Decision Record). A line with many items shows MAX_CARDS cards and
says how many more there are. Everything quoted from a transcript or a model goes through `md_text`,
so it reads as itself.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import datetime

from checkpoint.extract.held import item_review_reason
from checkpoint.model import ORIGIN_SHARED, Citation, ItemRecord, ItemState, plain_text
from checkpoint.server.protocol import (
    EDITOR_ACCEPT,
    EDITOR_DISMISS,
    EDITOR_OPEN_RECORD,
    EDITOR_OPEN_TURN,
    command_link,
)

MAX_CARDS = 3  # more items on one line: the rest are counted, not shown (Problems lists them all)
STATEMENT_WIDTH = 160
KIND_TITLE = {"decision": "Decision", "constraint": "Constraint", "question": "Open question"}
_KIND_ORDER = {kind: n for n, kind in enumerate(KIND_TITLE)}  # a line's cards: held first, then by kind
HELD_LABEL = "Needs review"
# The agents' names as their users know them (the store keeps the reader's short name).
AGENT_NAMES = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "copilot": "Copilot CLI",
               "opencode": "opencode"}


_MD_INLINE = re.compile(r"([\\`*_\[\]<>!|~&#])")
_MD_LINE_START = re.compile(r"^(\s*)(?:([-+=])|(\d+)([.)]))", re.MULTILINE)


def md_text(value: object) -> str:
    """Text from a transcript or a model, shown as itself in Markdown: no emphasis, link, image,
    HTML, heading or list can come out of it (and no control character)."""
    text = _MD_INLINE.sub(r"\\\1", plain_text(str(value)))
    return _MD_LINE_START.sub(
        lambda m: m.group(1) + ("\\" + m.group(2) if m.group(2) else m.group(3) + "\\" + m.group(4)), text
    )


def relative_time(then: float, now: float) -> str:
    """`then` as a person says it from `now`: "just now", "5 minutes ago", "yesterday", "3 days ago"."""
    seconds = max(0.0, now - then)
    if seconds < 60:
        return "just now"
    for size, unit in ((365 * 86400, "year"), (30 * 86400, "month"), (7 * 86400, "week"), (86400, "day"),
                       (3600, "hour"), (60, "minute")):
        if seconds >= size:
            n = int(seconds // size)
            if unit == "day" and n == 1:
                return "yesterday"
            return f"{n} {unit}{'s' if n > 1 else ''} ago"
    return "just now"  # unreachable: 60 s and more matched a unit above


def when_said(item: ItemRecord) -> float | None:
    """When the item was said: its first cited turn's time, else when it was captured."""
    for source in item.sources:
        if source.timestamp:
            try:
                return datetime.fromisoformat(source.timestamp.replace("Z", "+00:00")).timestamp()
            except ValueError:
                continue
    return item.created_at or None


def provenance(item: ItemRecord, now: float) -> str:
    """Who said it, where and when, in one line of plain words (Markdown-safe)."""
    when = when_said(item)
    ago = relative_time(when, now) if when is not None else None
    if item.origin == ORIGIN_SHARED:
        by = f" by {md_text(item.record_by)}" if item.record_by else ""
        where = f"shared{by} in the team's decision records" + (f" ({md_text(item.record)})" if item.record else "")
        return where + (f", {ago}" if ago else "")
    roles = {s.role for s in item.sources if s.role}
    who = "by you" if roles == {"user"} else "by the agent" if roles == {"assistant"} else ""
    agent = AGENT_NAMES.get(item.agent or "", item.agent or "")
    session = f"in a {md_text(agent)} session" if agent else "in a session"
    said = " ".join(p for p in ("said", who, session) if p) + (f", {ago}" if ago else "")
    # An item that cited no turn points at its chunk's turns: said, so that no one reads them as its words.
    return said + (" (it cited no turn: from its chunk)" if item.cited is Citation.CHUNK else "")


def state_label(item: ItemRecord) -> str:
    if item.record is not None and item.state is ItemState.ACCEPTED and not item.accepted_here:
        # a decision record's status is its author's claim, not your acceptance (issue 37)
        who = md_text(item.record_by) if item.record_by else "its author"
        return f"accepted by {who} in the repository's record, not by you"
    if item.held_back:
        return "held for review: no agent is shown it until you accept it"
    if item.superseded_by:
        return "superseded"
    return {ItemState.NEW: "new", ItemState.ACCEPTED: "accepted", ItemState.DISMISSED: "dismissed"}[item.state]


def actions(item: ItemRecord) -> list[str]:
    """The command links that apply to the item, in a fixed order."""
    links = [f"[Open Turn]({command_link(EDITOR_OPEN_TURN, item.id)})"] if item.sources else []
    if item.state is not ItemState.ACCEPTED:
        verb = "Review and Accept" if item.held_back else "Accept"
        links.append(f"[{verb}]({command_link(EDITOR_ACCEPT, item.id)})")
    if item.state is not ItemState.DISMISSED:
        links.append(f"[Dismiss]({command_link(EDITOR_DISMISS, item.id)})")
    if item.record:
        links.append(f"[Open Decision Record]({command_link(EDITOR_OPEN_RECORD, item.id)})")
    return links


def card(item: ItemRecord, now: float, newer: str | None = None) -> str:
    """One item's card: three or four short lines."""
    kind = KIND_TITLE.get(item.kind, item.kind.value)
    head = f"**⚠ {HELD_LABEL} · {kind}**" if item.held_back else f"**{kind}**"
    lines = [f"{head} {md_text(_short(item.statement, STATEMENT_WIDTH))}"]
    if item.rationale:
        lines.append(f"*Why:* {md_text(_short(item.rationale, 100))}")
    if item.held_back:
        why = item_review_reason(item.statement, item.rationale) or "it reads as an instruction to an agent"
        lines.append(f"*Held:* {md_text(why)}")
    elif item.superseded_by:
        lines.append(f"*Superseded by:* {md_text(_short(newer or item.superseded_by, 80))}")
    lines.append(f"{provenance(item, now)} · {state_label(item)}")
    links = actions(item)
    if links:
        lines.append(" · ".join(links))
    return "  \n".join(lines)  # hard breaks: one card, several lines


def cards(items: Sequence[tuple[ItemRecord, str | None]], now: float | None = None) -> str:
    """The hover of a line: a card per item (held ones first, then decisions, constraints, questions),
    at most MAX_CARDS, then a count."""
    at = time.time() if now is None else now
    ordered = sorted(items, key=lambda pair: (not pair[0].held_back, _KIND_ORDER.get(pair[0].kind, len(_KIND_ORDER))))
    shown = [card(item, at, newer) for item, newer in ordered[:MAX_CARDS]]
    more = len(ordered) - MAX_CARDS
    if more > 0:
        shown.append(f"*{more} more on this line: see Problems or the Checkpoint panel*")
    return "\n\n---\n\n".join(shown)


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
