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

from checkpoint.model import ItemRecord, ItemState, plain_text
from checkpoint.redact import Redactor
from checkpoint.team.provenance import is_team_item, shared_phrase

STATEMENT_CHARS = 400
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# A sentence ends at . ! ? (maybe closed by a quote or bracket) before a space or the end.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")


# What an agent could read as markup, and what it is shown as: a tag (`</system-reminder>`,
# `</additionalContext>`) would close the context an agent reads the text in, a code fence would end
# a block; angle quotes and a prime read the same to a person and close nothing.
AS_DATA = str.maketrans({"<": "‹", ">": "›", "`": "ʹ"})
_EMAIL = re.compile(r"\s*<[^>]*>")


def clean(text: str | None, redactor: Redactor, limit: int) -> str | None:
    """Text from a transcript or a record as an agent is shown it (a statement, a title, an excerpt):
    data, never markup. Redacted (again: a pattern may have been added since it was stored), no control
    characters, no tag or code fence (`AS_DATA`), cut. Newlines stay (an excerpt keeps its lines,
    inside a JSON string)."""
    if text is None:
        return None
    text = plain_text(redactor.redact(text).text).translate(AS_DATA)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def field(text: str, redactor: Redactor, limit: int = 300) -> str:
    """A recorded field (a file, a path, a name) on one line: `clean`, whitespace runs as one space,
    only printable characters (no line or paragraph separator either)."""
    one = " ".join((clean(text, redactor, limit) or "").split())
    return "".join(ch for ch in one if ch.isprintable())


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
    return whole_sentences(field(item.statement, redactor, chars * 2), chars)


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
        notes = [f"{said_on(item)}, {clean(shared_phrase(item), redactor, 200)}"]
    else:
        notes = [f"{said_on(item)} in a {agent} session ({field(item.session_id[:8], redactor, 8)})"]
    who = accepted_by(item, redactor)
    if who:
        notes.append(f"accepted by {who}")
    if lines:
        notes.append(field(lines, redactor, 40))
    return (f"- {item.kind.value.capitalize()} {field(item.id, redactor, 64)}, {', '.join(notes)}: "
            f"{json.dumps(statement, ensure_ascii=False)}")
