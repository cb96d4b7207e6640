"""What an agent reads of recorded data, rendered in one place: an item as one line (the session-start
context and the pre-edit reminder), and every field (statements, files, paths, names, titles) as the
MCP answers and the lines show it, so what an agent reads of a recorded item is framed here only.

A recorded field is data, never markup or a line of its own: `clean` redacts it, drops control
characters, and turns the characters that could open or close markup (`<`, `>`, a backquote) into look-
alikes that close nothing; `field` also puts it on one line of printable characters; `quoted` is that
as a JSON string. A line is a recorded statement, not an instruction: the item's kind, id, the day it
was said (its cited turns' time, not the day it was extracted), in which agent's session, who accepted
it (this developer, or, for a teammate's decision record, what the record claims: "accepted by
"Alice" in the repository"), then its statement quoted, cut to whole sentences. A transcript or a
record is written by whoever reached it (a fetched page, a pasted text, a pull request); items that
read as instructions to an agent are held for the user's review and never reach here unaccepted."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from checkpoint.model import ItemRecord, ItemState
from checkpoint.redact import Redactor

# What a recorded field is shown as, defined below the front ends (the run layer renders statements
# with them for the pre-edit hook's narrow path): re-exported here, where the agent front ends read them.
from checkpoint.shown_text import AS_DATA as AS_DATA
from checkpoint.shown_text import ID_CHARS, SESSION_CHARS, STATEMENT_CHARS, shown_statement
from checkpoint.shown_text import clean as clean
from checkpoint.shown_text import field as field
from checkpoint.shown_text import whole_sentences as whole_sentences
from checkpoint.team.provenance import is_team_item

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_EMAIL = re.compile(r"\s*<[^>]*>")


def quoted(text: str, redactor: Redactor, limit: int = 300) -> str:
    """`field` as a JSON string: how a line shows a path or a name."""
    return json.dumps(field(text, redactor, limit), ensure_ascii=False)


def accepted_by(item: ItemRecord, redactor: Redactor) -> str | None:
    """Who accepted the item, as the agent is told: this developer (here, `checkpoint accept` or the
    editor), or, for an item of a teammate's decision record, its author's claim ("accepted by "Alice"
    in the repository"); None: not accepted."""
    if item.accepted_by_user and item.state is ItemState.ACCEPTED:
        return "the developer"
    if item.state is ItemState.ACCEPTED and item.record is not None:
        name = field(_EMAIL.sub("", item.record_by or ""), redactor, 80)
        return f"{json.dumps(name, ensure_ascii=False)} in the repository" if name else "its record in the repository"
    return None


def said_on(item: ItemRecord) -> str:
    """When the item was said: the day of the first cited turn that has a time, as "said YYYY-MM-DD";
    when no cited turn has one, the day it was recorded, said so."""
    for source in item.sources:
        if source.timestamp and _DAY.match(source.timestamp):
            return f"said {source.timestamp[:10]}"
    return f"recorded {datetime.fromtimestamp(item.created_at, UTC).strftime('%Y-%m-%d')}"


def statement_text(item: ItemRecord, redactor: Redactor, chars: int = STATEMENT_CHARS) -> str:
    """The item's statement as the agent reads it: redacted, on one line, printable, no markup, whole
    sentences."""
    return shown_statement(item.statement, redactor, chars)


def item_line(item: ItemRecord, redactor: Redactor, *, lines: str | None = None,
              chars: int = STATEMENT_CHARS) -> str | None:
    """One item as one line: `- Decision <id>, said <day> in a claude session (1a2b3c4d), accepted by the
    developer, lines 3-9: "<statement>"` (a record's: `accepted by "Alice" in the repository`).
    `lines`: where in the file it concerns ("lines 3-9"), when
    known. None when the statement has no whole sentence to show."""
    statement = statement_text(item, redactor, chars)
    if not statement:
        return None
    agent = "".join(ch for ch in (item.agent or "an agent's") if ch.isalnum() or ch in "-_'")[:40]
    if is_team_item(item):  # known only from a teammate's decision record, not from a session
        notes = [f"{said_on(item)} in the repository's decision record {quoted(item.record or '', redactor, 200)}"]
    else:
        notes = [f"{said_on(item)} in a {agent} session ({field(item.session_id[:8], redactor, SESSION_CHARS)})"]
    who = accepted_by(item, redactor)
    if who:
        notes.append(f"accepted by {who}")
    if lines:
        notes.append(field(lines, redactor, 40))
    return (f"- {item.kind.value.capitalize()} {field(item.id, redactor, ID_CHARS)}, {', '.join(notes)}: "
            f"{json.dumps(statement, ensure_ascii=False)}")
