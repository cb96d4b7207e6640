"""An item as the agent is shown it: one line, the one rendering every agent surface uses (the
session-start context and the pre-edit reminder), so what an agent reads of a recorded item is framed
in one place.

A line is a recorded statement, not an instruction: the item's kind, id, the day it was said (its cited
turns' time, not the day it was extracted), in which agent's session, whether the developer accepted
it, then its statement quoted as data (a JSON string): redacted, on one line, with no control
character and no markup that could end the context (answers.clean), cut to whole sentences. A
transcript is written by whoever reached the session (a fetched page, a pasted text); items that read
as instructions to an agent are held for the user's review and never reach here unaccepted."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from checkpoint.model import ItemRecord, ItemState
from checkpoint.redact import Redactor
from checkpoint.shown_text import SESSION_CHARS, STATEMENT_CHARS, clean, shown_statement

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def said_on(item: ItemRecord) -> str:
    """When the item was said: the day of the first cited turn that has a time, as "said YYYY-MM-DD";
    when no cited turn has one, the day it was recorded, said so."""
    for source in item.sources:
        if source.timestamp and _DAY.match(source.timestamp):
            return f"said {source.timestamp[:10]}"
    return f"recorded {datetime.fromtimestamp(item.created_at, UTC).strftime('%Y-%m-%d')}"


def statement_text(item: ItemRecord, redactor: Redactor, chars: int = STATEMENT_CHARS) -> str:
    """The item's statement as the agent reads it: redacted, on one line, printable, no markup, whole
    sentences (checkpoint.shown_text, where the writers render it for the pre-edit hook alike)."""
    return shown_statement(item.statement, redactor, chars)


def item_line(item: ItemRecord, redactor: Redactor, *, lines: str | None = None,
              chars: int = STATEMENT_CHARS) -> str | None:
    """One item as one line: `- Decision <id>, said <day> in a claude session (1a2b3c4d), accepted by the
    developer, lines 3-9: "<statement>"`. `lines`: where in the file it concerns ("lines 3-9"), when
    known. None when the statement has no whole sentence to show."""
    statement = statement_text(item, redactor, chars)
    if not statement:
        return None
    agent = "".join(ch for ch in (item.agent or "an agent's") if ch.isalnum() or ch in "-_'")
    session = clean(item.session_id[:SESSION_CHARS], redactor, SESSION_CHARS)
    notes = [f"{said_on(item)} in a {agent} session ({session})"]
    if item.state is ItemState.ACCEPTED:
        notes.append("accepted by the developer")
    if lines:
        notes.append(lines)
    quoted = json.dumps(statement, ensure_ascii=False)
    return f"- {item.kind.value.capitalize()} {item.id}, {', '.join(notes)}: {quoted}"
