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
"""

from __future__ import annotations

import re
from collections.abc import Iterator

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
    return f"{_TOOL}result{f' ({status})' if status else ''}]\n{body}"


def tool_error(body: str) -> str:
    """A tool call that failed with this error (no result)."""
    return f"{_TOOL}error]\n{body}"


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
