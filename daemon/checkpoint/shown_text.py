"""Text from a transcript as an agent is shown it (an item's statement, a title, an excerpt): data,
never markup, redacted, cut to whole sentences. The agent front ends (agent.answers, agent.render)
show it this way; the writers below them (the run layer) store each item's statement already shown
this way (`agent_lines`), so that the pre-edit hook's narrow path (agent.pre_edit_narrow) reads it
without loading the redactor.

A stored line is valid for one redactor: `redaction_key` names the detectors it ran and the code that
shows the text; a line stored under another key (a pattern added since, a newer Checkpoint) is not
used, and the hook takes its full path instead."""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from checkpoint.model import plain_text

if TYPE_CHECKING:
    from checkpoint.redact import Redactor
    from checkpoint.store import Store

STATEMENT_CHARS = 400
SESSION_CHARS = 8  # the part of a session id a line shows
ID_CHARS = 64  # an item id as a line shows it, at most
# What an agent could read as markup, and what it is shown as: a tag (`</system-reminder>`,
# `</additionalContext>`) would close the context an agent reads the text in, a code fence would end
# a block; angle quotes and a prime read the same to a person and close nothing.
AS_DATA = str.maketrans({"<": "‹", ">": "›", "`": "ʹ"})
# A sentence ends at . ! ? (maybe closed by a quote or bracket) before a space or the end.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")
RENDER_BATCH = 500  # items rendered per query by render_agent_lines


def clean(text: str | None, redactor: Redactor, limit: int) -> str | None:
    """Text from a transcript as an agent is shown it: data, never markup. Redacted (again: a pattern
    may have been added since it was stored), no control characters, no tag or code fence
    (`AS_DATA`), cut. Newlines stay (an excerpt keeps its lines, inside a JSON string)."""
    if text is None:
        return None
    text = plain_text(redactor.redact(text).text).translate(AS_DATA)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


def field(text: str, redactor: Redactor, limit: int = 300) -> str:
    """A recorded field (a file, a path, a name) on one line: `clean`, whitespace runs as one space,
    only printable characters (no line or paragraph separator either)."""
    one = " ".join((clean(text, redactor, limit) or "").split())
    return "".join(ch for ch in one if ch.isprintable())


def shown_statement(statement: str, redactor: Redactor, chars: int = STATEMENT_CHARS) -> str:
    """A statement as the agent reads it: redacted, on one line, printable, no markup, whole sentences."""
    return whole_sentences(field(statement, redactor, chars * 2), chars)


def source_digest(statement: str, session_id: str) -> str:
    """What a stored line was shown from: a line whose item's statement differs is not used."""
    return hashlib.blake2b(f"{session_id}\x00{statement}".encode(), digest_size=8).hexdigest()


_SHOWN_BY = ("shown_text.py", "model.py", "redact")  # the code a shown line depends on, under checkpoint/


@lru_cache(maxsize=1)
def _code_digest() -> str:
    root = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=8)
    for name in _SHOWN_BY:
        path = root / name
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.name.encode() + b"\x00" + file.read_bytes())
    return digest.hexdigest()


def redaction_key(redactor: Redactor) -> str:
    """The redactor's detectors (their regexes, how and where each runs) and the code that shows a
    line: equal keys show a statement alike."""
    detectors = [[d.kind, d.source, d.flags, repr(d.group), d.lower, d.trigger, d.before, d.after, sorted(d.named),
                  getattr(d.check, "__qualname__", None), d.specific] for d in redactor.detectors]
    blob = json.dumps([_code_digest(), detectors], ensure_ascii=False, default=str)
    return hashlib.blake2b(blob.encode(), digest_size=10).hexdigest()


def render_agent_lines(store: Store, redactor: Redactor, session_id: str | None = None) -> int:
    """Store, for every item (of one session, or all) whose statement has no line shown with this
    redactor, that line (its statement, its session's short id and its id, as `agent.render.item_line`
    shows them). Returns the lines stored. Each batch is one transaction; a line another process stored
    meanwhile is replaced alike."""
    key = redaction_key(redactor)
    stored = 0
    while True:
        todo = store.items_without_agent_line(key, RENDER_BATCH, session_id)
        if not todo:
            return stored
        rows = [(item_id, key, source_digest(statement, session_id), shown_statement(statement, redactor),
                 field(session_id[:SESSION_CHARS], redactor, SESSION_CHARS), field(item_id, redactor, ID_CHARS))
                for item_id, session_id, statement in todo]
        store.put_agent_lines(rows)
        stored += len(rows)
        if len(todo) < RENDER_BATCH:
            return stored
