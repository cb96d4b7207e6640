"""How a turn's text writes what an agent did besides speaking: the one place that writes it, and
the one place that reads it back.

Every reader renders tool calls, their results and private reasoning with these functions, so a
turn's text looks the same whichever agent wrote it:

    [tool Name] {"arguments": ...}          a tool call (`[tool Name (run by the user)] ...` when the
                                            user ran it); tool calls come after the text said
    [tool result]\\n...  [tool result (error)]\\n...  [tool error]\\n...
    (thinking) ...   (reasoning) ...         the agent's private reasoning

What a call wrote to files travels as data (`TurnDraft.edits`), not through this text; `tool_calls`
reads calls back only for turns stored before edits were (the store's back-fill).

Tool output is cut to its head by policy (TOOL_OUTPUT, the setting `tool_output_chars`): while a
reader parses inside `tool_output_head(n)`, each result's (and error's) body keeps its first `n`
characters, ended at a space so that no secret is half kept, and a line saying its size and kind;
what is left out is counted. Only bodies written by `tool_result` and `tool_error` are cut: what a
person said and the edits a call made never go through them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

_TOOL = TOOL_CALL_MARK = "[tool "  # every tool call's (and result's) line starts so
_BY_USER = " (run by the user)"
# A line where what nobody said starts: private reasoning, then tool calls (and their results).
_NOT_SAID = re.compile(r"^(?:\((?:thinking|reasoning)\) |\[tool [^\]\n]+\] )", re.MULTILINE)
_CALL = re.compile(r"^\[tool ([^\]\n]+?)\] ?", re.MULTILINE)
_RESULT_NAMES = ("result", "result (error)", "error")


def tool_call(name: str, arguments: str, *, by_user: bool = False) -> str:
    """A tool call and its arguments as rendered (JSON, or the raw input)."""
    return f"{_TOOL}{name}{_BY_USER if by_user else ''}] {arguments}"


def tool_result(body: str, status: str | None = None) -> str:
    """A tool's result; `status`: how it ended when not well ("error", "cancelled")."""
    return f"{_TOOL}result{f' ({status})' if status else ''}]\n{_head_of(body)}"


def tool_error(body: str) -> str:
    """A tool call that failed with this error (no result)."""
    return f"{_TOOL}error]\n{_head_of(body)}"


# The policy tool output left out counts under (the store's `drops`, `checkpoint status`).
TOOL_OUTPUT = "tool_output"


@dataclass
class ToolOutputCut:
    """The head kept of each tool result while readers parse, and what was left out meanwhile."""

    head: int  # characters kept of each body; 0: all of it
    chars: int = 0  # characters left out
    results: int = 0  # bodies cut


_CUT: ContextVar[ToolOutputCut | None] = ContextVar("tool_output_cut", default=None)


@contextmanager
def tool_output_head(head: int) -> Iterator[ToolOutputCut]:
    """Tool results rendered inside are cut to `head` characters (0: kept whole); the cut counts
    what was left out. A context variable, not an argument: every reader renders results here, and
    none needs to know the setting."""
    cut = ToolOutputCut(head)
    token = _CUT.set(cut)
    try:
        yield cut
    finally:
        _CUT.reset(token)


def parsed_with_head(head: int, parse: Callable[..., T], *args: object) -> tuple[T, int]:
    """`parse(*args)` inside `tool_output_head(head)`, and the characters it left out: the same, for
    a scan's every record, without a context manager's generator (a microsecond a record)."""
    cut = ToolOutputCut(head)
    token = _CUT.set(cut)
    try:
        return parse(*args), cut.chars
    finally:
        _CUT.reset(token)


def tool_output_left_out() -> int:
    """Characters of tool output left out so far inside the current `tool_output_head` (0 outside):
    a reader that parses many records in one go (a database) counts each record's share by it."""
    cut = _CUT.get()
    return cut.chars if cut is not None else 0


def _head_of(body: str) -> str:
    cut = _CUT.get()
    if cut is None or not cut.head or len(body) <= cut.head:
        return body
    end = cut.head
    # Ended at whitespace: a secret (never spaced) is kept whole or left out whole, never half, so
    # redaction, which runs on the kept text, still knows it. No space at all: nothing kept.
    while end > 0 and not body[end - 1].isspace():
        end -= 1
    kept = body[:end].rstrip()
    left_out = len(body) - len(kept)
    cut.chars += left_out
    cut.results += 1
    kind = "JSON" if body.lstrip()[:1] in ("{", "[") else "text"
    lines = body.count("\n") + 1
    return (f"{kept}\n(tool output cut by policy: {left_out:,} of {len(body):,} characters left out;"
            f" {lines:,} {'line' if lines == 1 else 'lines'} of {kind})")


def thinking(text: str) -> str:
    return f"(thinking) {text}"


def reasoning(text: str) -> str:
    return f"(reasoning) {text}"


def not_said_from(text: str) -> int | None:
    """Where the part of a turn's text that nobody said (reasoning, tool calls) starts; None: all of it
    was said."""
    found = _NOT_SAID.search(text)
    return found.start() if found else None


def tool_calls(text: str) -> Iterator[tuple[str, str]]:
    """(tool name, arguments as rendered) of each tool call in a turn's text, in order. A call's
    arguments run to the next `[tool ...]` line (a result, another call) or the end."""
    if _TOOL not in text:
        return
    found = list(_CALL.finditer(text))
    for i, match in enumerate(found):
        name = match.group(1)
        if name in _RESULT_NAMES:
            continue
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        yield name.removesuffix(_BY_USER), text[match.end():end].rstrip("\n")
