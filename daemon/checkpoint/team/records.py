"""A decision record: one Markdown file per shared decision, MADR-compatible (front matter with
status, date and decision-makers) plus Checkpoint's own fields (id, kind, files, supersedes,
superseded_by), and a body with the statement (the title), the rationale and where it came from.

Written and read here, by hand: the front matter is the small YAML subset this module writes (plain
or double-quoted scalars, lists in block or flow style), so that no YAML library is loaded, and a
record a person edited in the usual ways still reads. What cannot be read is a `RecordProblem` with
its line, never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import NamedTuple

from checkpoint.model import ItemKind, ItemState, SharedDecision

FENCE = "---"
RATIONALE = "Rationale"
ORIGIN = "Where it came from"

# MADR's statuses, and the item state each stands for; "superseded by ..." is MADR's way of writing
# the last (the link itself is `superseded_by`).
STATES = {
    "proposed": ItemState.NEW,
    "accepted": ItemState.ACCEPTED,
    "rejected": ItemState.DISMISSED,
    "deprecated": ItemState.DISMISSED,
    "superseded": ItemState.ACCEPTED,
}
STATUS_OF_STATE = {ItemState.NEW: "proposed", ItemState.ACCEPTED: "accepted", ItemState.DISMISSED: "rejected"}
_ID = re.compile(r"^[0-9a-f]{6,64}$")
_PLAIN = re.compile(r"^[\w./@<>+-][\w ./@<>+-]*$")


class RecordProblem(NamedTuple):
    """Why a record cannot be read, and the line (1-based; 0: the file as a whole)."""

    path: str
    line: int
    message: str


class RecordText(NamedTuple):
    """What a new record says, besides the decision itself: who decided, and where it came from."""

    decision_makers: str
    origin: str  # one sentence: the agent and the day it was said, the extractor


def slug(statement: str, words: int = 6) -> str:
    found = re.findall(r"[a-z0-9]+", statement.lower())
    return "-".join(found[:words]) or "decision"


def file_name(date: str, statement: str, item_id: str) -> str:
    """Unique without a shared counter: two people sharing at once write two names (the item id's
    head tells apart two decisions worded alike on the same day)."""
    return f"{date}-{slug(statement)}-{item_id[:8]}.md"


def _scalar(value: str) -> str:
    return value if _PLAIN.match(value) and not value.endswith(" ") else json.dumps(value, ensure_ascii=False)


def _list(key: str, values: Sequence[str]) -> list[str]:
    if not values:
        return [f"{key}: []"]
    return [f"{key}:", *(f"  - {_scalar(v)}" for v in values)]


def render(decision: SharedDecision, text: RecordText) -> str:
    """The record's Markdown."""
    lines = [
        FENCE,
        f"status: {_scalar(decision.status)}",
        f"date: {decision.date}",
        f"decision-makers: {_scalar(text.decision_makers)}",
        f"id: {decision.id}",
        f"kind: {decision.kind.value}",
        *_list("files", decision.files),
        *_list("supersedes", decision.supersedes),
        *_list("superseded_by", decision.superseded_by),
        FENCE,
        "",
        f"# {' '.join(decision.statement.split())}",
        "",
    ]
    if decision.rationale:
        lines += [f"## {RATIONALE}", "", decision.rationale.strip(), ""]
    lines += [f"## {ORIGIN}", "", text.origin, ""]
    return "\n".join(lines)


def with_status(source: str, status: str, superseded_by: Sequence[str] | None = None) -> str:
    """The record's text with its status (and, when given, superseded_by) replaced, the rest as it is."""
    lines = source.split("\n")
    end = lines.index(FENCE, 1) if lines and lines[0] == FENCE and FENCE in lines[1:] else 0
    head, body = lines[1:end], lines[end:]
    out: list[str] = []
    skipping = False
    for line in head:
        key = line.split(":", 1)[0].strip() if not line.startswith((" ", "\t", "-")) else None
        if key is not None:
            skipping = False
        if key == "status":
            out.append(f"status: {_scalar(status)}")
            continue
        if key == "superseded_by" and superseded_by is not None:
            out += _list("superseded_by", superseded_by)
            skipping = True
            continue
        if not skipping:
            out.append(line)
    if superseded_by is not None and not any(line.startswith("superseded_by:") for line in head):
        out += _list("superseded_by", superseded_by)
    return "\n".join([FENCE, *out, *body])


def _value(raw: str) -> str:
    raw = raw.strip()
    if raw.startswith('"'):
        decoded = json.loads(raw)
        if not isinstance(decoded, str):
            raise ValueError("not a string")
        return decoded
    if raw.startswith("'") and raw.endswith("'") and len(raw) >= 2:
        return raw[1:-1].replace("''", "'")
    return raw


def _front_matter(lines: list[str], path: str) -> tuple[dict[str, str | list[str]], int] | RecordProblem:
    """The fields between the fences, and the line the body starts at (0-based)."""
    if not lines or lines[0].strip() != FENCE:
        return RecordProblem(path, 1, "no front matter: a record starts with a line '---'")
    fields: dict[str, str | list[str]] = {}
    current: str | None = None
    for n, line in enumerate(lines[1:], start=2):
        if line.strip() == FENCE:
            return fields, n
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            if line.startswith((" ", "\t", "-")):
                item = line.strip()
                listed = fields.get(current or "")
                if current is None or not item.startswith("-") or not isinstance(listed, list):
                    return RecordProblem(path, n, f"unexpected line in the front matter: {line.strip()[:60]!r}")
                listed.append(_value(item[1:]))
                continue
            key, sep, raw = line.partition(":")
            if not sep or not key.strip():
                return RecordProblem(path, n, f"not a 'key: value' line: {line.strip()[:60]!r}")
            current = key.strip()
            raw = raw.strip()
            if not raw:
                fields[current] = []
            elif raw.startswith("["):
                if not raw.endswith("]"):
                    return RecordProblem(path, n, f"{current}: a list opened with '[' is not closed on its line")
                inner = raw[1:-1].strip()
                fields[current] = [_value(v) for v in inner.split(",")] if inner else []
            else:
                fields[current] = _value(raw)
        except ValueError as exc:
            return RecordProblem(path, n, f"cannot read the value ({exc}): {line.strip()[:60]!r}")
    return RecordProblem(path, len(lines), "the front matter is not closed by a line '---'")


def _body(lines: list[str], start: int, path: str) -> tuple[str, str | None] | RecordProblem:
    """The statement (the title) and the rationale (its section, or None)."""
    statement: str | None = None
    sections: dict[str, list[str]] = {}
    section: str | None = None
    for line in lines[start:]:
        if line.startswith("# ") and statement is None:
            statement = " ".join(line[2:].split())
            continue
        if line.startswith("## "):
            section = line[3:].strip()
            sections[section] = []
            continue
        if section is not None:
            sections[section].append(line)
    if not statement:
        return RecordProblem(path, start + 1, "no title: the statement is the first line starting with '# '")
    rationale = "\n".join(sections.get(RATIONALE, [])).strip() or None
    return statement, rationale


def _strings(fields: dict[str, str | list[str]], key: str) -> list[str] | None:
    value = fields.get(key, [])
    if isinstance(value, str):
        return [value] if value else []
    return value


def _line_of(lines: list[str], key: str) -> int:
    return next((n for n, line in enumerate(lines, start=1) if line.startswith(key + ":")), 1)


def decision_makers_in(source: str) -> str | None:
    """Who decided, as the record's front matter says (`decision-makers`), or None."""
    head = _front_matter(source.replace("\r\n", "\n").split("\n"), "")
    if isinstance(head, RecordProblem):
        return None
    makers = head[0].get("decision-makers")
    if isinstance(makers, list):
        makers = ", ".join(makers)
    if not isinstance(makers, str):
        return None
    return makers.strip() or None


def parse(source: str, path: str) -> SharedDecision | RecordProblem:
    """A record read from its text; `path` is relative to the repository's top folder."""
    lines = source.replace("\r\n", "\n").split("\n")
    head = _front_matter(lines, path)
    if isinstance(head, RecordProblem):
        return head
    fields, start = head

    def problem(key: str, message: str) -> RecordProblem:
        return RecordProblem(path, _line_of(lines, key), message)

    item_id, kind, status, date = (fields.get(k) for k in ("id", "kind", "status", "date"))
    if not isinstance(item_id, str) or not _ID.match(item_id):
        return problem("id", f"id: expected Checkpoint's item id (hexadecimal), got {item_id!r}")
    if not isinstance(kind, str) or kind not in {k.value for k in ItemKind}:
        return problem("kind", f"kind: expected one of {', '.join(k.value for k in ItemKind)}, got {kind!r}")
    if not isinstance(status, str) or status.lower().split(" ")[0] not in STATES:
        return problem("status", f"status: expected one of {', '.join(STATES)}, got {status!r}")
    if not isinstance(date, str) or not re.match(r"^\d{4}-\d{2}-\d{2}$", date):
        return problem("date", f"date: expected YYYY-MM-DD, got {date!r}")
    lists = {key: _strings(fields, key) for key in ("files", "supersedes", "superseded_by")}
    for key, values in lists.items():
        if values is None or not all(isinstance(v, str) for v in values):
            return problem(key, f"{key}: expected a list")
        if key != "files" and not all(_ID.match(v) for v in values):
            return problem(key, f"{key}: expected item ids, got {values!r}")
    body = _body(lines, start, path)
    if isinstance(body, RecordProblem):
        return body
    statement, rationale = body
    return SharedDecision(
        id=item_id, kind=ItemKind(kind), statement=statement, rationale=rationale,
        files=tuple(lists["files"] or ()), state=STATES[status.lower().split(" ")[0]], status=status, date=date,
        supersedes=tuple(lists["supersedes"] or ()), superseded_by=tuple(lists["superseded_by"] or ()), path=path,
        decision_makers=makers if isinstance(makers := fields.get("decision-makers", ""), str) else ", ".join(makers),
    )
