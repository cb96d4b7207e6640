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

from checkpoint.agent.answers import clean
from checkpoint.model import ItemRecord, ItemState
from checkpoint.redact import Redactor
from checkpoint.team.provenance import is_team_item, shared_phrase

STATEMENT_CHARS = 400
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# A sentence ends at . ! ? (maybe closed by a quote or bracket) before a space or the end.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")


def said_on(item: ItemRecord) -> str:
    """When the item was said: the day of the first cited turn that has a time, as "said YYYY-MM-DD";
    when no cited turn has one, the day it was recorded, said so."""
    for source in item.sources:
        if source.timestamp and _DAY.match(source.timestamp):
            return f"said {source.timestamp[:10]}"
    return f"recorded {datetime.fromtimestamp(item.created_at, UTC).strftime('%Y-%m-%d')}"


def whole_sentences(text: str, chars: int = STATEMENT_CHARS) -> str:
    """`text` cut to the whole sentences that fit in `chars`; a trailing fragment that introduces
    what was cut ("... as follows:") goes. A single sentence longer than `chars` is cut at a word and
    ends with "…". Empty when nothing but such a fragment is left."""
    text = text.strip()
    while text.endswith(":"):
        ends = [m.end() for m in _SENTENCE_END.finditer(text)]
        text = text[: ends[-1]].strip() if ends else ""
    if len(text) <= chars:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, chars + 1) if m.end() <= chars]
    if ends:
        return text[: ends[-1]]
    cut = text[: chars - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"


def statement_text(item: ItemRecord, redactor: Redactor, chars: int = STATEMENT_CHARS) -> str:
    """The item's statement as the agent reads it: redacted, on one line, printable, no markup, whole
    sentences."""
    statement = " ".join((clean(item.statement, redactor, chars * 2) or "").split())
    statement = "".join(ch for ch in statement if ch.isprintable())
    return whole_sentences(statement, chars)


def item_line(item: ItemRecord, redactor: Redactor, *, lines: str | None = None,
              chars: int = STATEMENT_CHARS) -> str | None:
    """One item as one line: `- Decision <id>, said <day> in a claude session (1a2b3c4d), accepted by the
    developer, lines 3-9: "<statement>"`. `lines`: where in the file it concerns ("lines 3-9"), when
    known. None when the statement has no whole sentence to show."""
    statement = statement_text(item, redactor, chars)
    if not statement:
        return None
    agent = "".join(ch for ch in (item.agent or "an agent's") if ch.isalnum() or ch in "-_'")
    if is_team_item(item):  # known from the repository's decision record, not from a session
        notes = [f"{said_on(item)}, {clean(shared_phrase(item), redactor, 200)}"]
    else:
        notes = [f"{said_on(item)} in a {agent} session ({clean(item.session_id[:8], redactor, 8)})"]
    if item.state is ItemState.ACCEPTED:
        notes.append("accepted by the developer")
    if lines:
        notes.append(lines)
    quoted = json.dumps(statement, ensure_ascii=False)
    return f"- {item.kind.value.capitalize()} {item.id}, {', '.join(notes)}: {quoted}"
