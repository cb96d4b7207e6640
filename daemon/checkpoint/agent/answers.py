"""What the MCP tools answer: JSON text, redacted, and bounded. A list or a search answers each item
compactly (COMPACT_FIELDS: its statement cut at COMPACT_STATEMENT_CHARS, id, kind, state, when it was
said, its first COMPACT_FILES files) and says so; get_decision answers one item with its provenance
(session, agent, transcript path and line, rationale, excerpts). An answer stays under ANSWER_CHARS
(well under Claude Code's 25,000-token cap on a tool's output) and says how many items it left out.

The JSON starts with AGENT_ANSWER_MARK (`{"checkpoint": "<tool>"`): the Claude Code reader knows the
answer when the agent's transcript holds it, and does not extract it again."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from checkpoint.agent.render import AS_DATA, accepted_by, clean, field
from checkpoint.model import AGENT_ANSWER_MARK, ItemRecord, session_title
from checkpoint.redact import Redactor
from checkpoint.store import SourceExcerpt

ANSWER_CHARS = 40_000  # ~10k tokens at 4 characters a token
STATEMENT_CHARS = 600
SOURCES_SHOWN = 5
FILES_SHOWN = 20
EXCERPT_CHARS = 1_200
COMPACT_STATEMENT_CHARS = 300
COMPACT_FILES = 5
COMPACT_FIELDS = ("id", "kind", "state", "statement", "said_at", "files", "accepted_by")
# Said in every list and search answer, so the agent knows what each item holds and where the rest is.
BOUND = (f"each item: {', '.join(COMPACT_FIELDS)} (statement cut at {COMPACT_STATEMENT_CHARS} characters, the first"
         f" {COMPACT_FILES} files); get_decision(id) gives one item with its rationale, session and transcript lines")


def when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def item_json(item: ItemRecord, redactor: Redactor) -> dict[str, Any]:
    return {
        "id": item.id,
        "kind": item.kind.value,
        "state": item.state.value,
        "statement": clean(item.statement, redactor, STATEMENT_CHARS),
        "rationale": clean(item.rationale, redactor, STATEMENT_CHARS),
        "accepted_by": accepted_by(item, redactor),
        "files": [field(f, redactor) for f in item.files[:FILES_SHOWN]],
        "files_left_out": max(0, len(item.files) - FILES_SHOWN),
        "recorded_at": when(item.created_at),
        "session": {"id": field(item.session_id, redactor, 200), "agent": _maybe(item.agent, redactor),
                    "title": field(session_title(item.session_title, item.cwd), redactor, 120),
                    "cwd": _maybe(item.cwd, redactor)},
        "record": _maybe(item.record, redactor),  # a teammate's decision record: its path in the repository
        "sources": [{"transcript": field(s.path, redactor, 1000), "line": s.line,
                     "timestamp": _maybe(s.timestamp, redactor)} for s in item.sources[:SOURCES_SHOWN]],
        "sources_left_out": max(0, len(item.sources) - SOURCES_SHOWN),
        "extractor": field(item.extractor, redactor, 40),
        "superseded_by": item.superseded_by,  # an id: the item no longer holds, that one replaced it
    }


def _maybe(text: str | None, redactor: Redactor, limit: int = 1000) -> str | None:
    return None if text is None else field(text, redactor, limit)


def said_at(item: ItemRecord) -> str:
    """When the item was said: the time of the first transcript turn it came from, else when it was recorded."""
    return next((source.timestamp for source in item.sources if source.timestamp), None) or when(item.created_at)


def compact_json(item: ItemRecord, redactor: Redactor) -> dict[str, Any]:
    """An item as a list or a search answers it: no provenance (get_decision has it)."""
    files = [field(f, redactor) for f in item.files[:COMPACT_FILES]]
    if len(item.files) > COMPACT_FILES:
        files.append(f"… {len(item.files) - COMPACT_FILES} more")
    return {"id": item.id, "kind": item.kind.value, "state": item.state.value,
            "statement": clean(item.statement, redactor, COMPACT_STATEMENT_CHARS),
            "said_at": field(said_at(item), redactor, 40), "files": files, "accepted_by": accepted_by(item, redactor)}


def excerpt_json(excerpt: SourceExcerpt, redactor: Redactor) -> dict[str, Any]:
    return {
        "transcript": field(excerpt.path, redactor, 1000), "line": excerpt.line,
        "timestamp": _maybe(excerpt.timestamp, redactor, 40),
        "role": excerpt.role.value, "text": clean(excerpt.text, redactor, 2 * EXCERPT_CHARS),
        "chars_left_out": max(0, excerpt.length - len(excerpt.text)),
    }


def echo(text: str, limit: int = 120) -> str:
    """An argument quoted back in an error, cut short: a megabyte of id is not worth a megabyte of error."""
    text = text.translate(AS_DATA)  # an error is read by the agent too: no tag from its argument
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def dumps(tool: str, body: dict[str, Any]) -> str:
    text = json.dumps({"checkpoint": tool, **body}, ensure_ascii=False)
    assert text.startswith(AGENT_ANSWER_MARK)
    return text


def elsewhere_hint(count: int, scope: str) -> str:
    """For an answer with nothing in its workspace: that items exist in others, and how to ask for them."""
    return (f"{count} {'item' if count == 1 else 'items'} {scope} in other workspaces: pass workspace (a folder,"
            " or \"/\" for every workspace), or run `checkpoint search WORDS` in a terminal (every workspace)")


def items_answer(tool: str, items: Sequence[ItemRecord], total: int, redactor: Redactor,
                 **more: Any) -> str:
    """The items as JSON, compact (compact_json), as many as fit in ANSWER_CHARS, with `left_out`
    counting the rest (those the query's limit left out and those the size cap did)."""
    shown: list[dict[str, Any]] = []
    used = 400 + len(json.dumps(more, ensure_ascii=False))
    for item in items:
        one = compact_json(item, redactor)
        size = len(json.dumps(one, ensure_ascii=False)) + 2
        if used + size > ANSWER_CHARS:
            break
        shown.append(one)
        used += size
    left = total - len(shown)
    note = (f"{left} more matched and were left out; narrow the query (kind, file) or raise limit"
            if left else "nothing left out")
    return dumps(tool, {**more, "items": shown, "shown": len(shown), "total": total, "left_out": left,
                        "note": note, "each_item": BOUND})
