"""The edits of a turn stored before the store kept edits, read back from its stored text: each tool
call the turn text holds (turn_text.tool_calls), given to its agent's reader (`edits_of_call`)."""

from __future__ import annotations

from checkpoint.model import FileEdit
from checkpoint.sources import READERS
from checkpoint.sources.edits import decoded
from checkpoint.sources.turn_text import TOOL_CALL_MARK, tool_calls

__all__ = ["TOOL_CALL_MARK", "stored_edits"]


def stored_edits(agent: str, text: str, cwd: str | None) -> tuple[FileEdit, ...]:
    reader = READERS.get(agent)
    if reader is None:
        return ()
    return tuple(edit for name, arguments in tool_calls(text)
                 for edit in reader.edits_of_call(name, decoded(arguments), cwd))
