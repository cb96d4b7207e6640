"""How a chunk is written out for a model: every turn cited by its id so provenance is exact."""

from __future__ import annotations

from collections.abc import Sequence

from checkpoint.model import ChunkInput, TurnSlice


def turn_header(turn_id: str, role: str, timestamp: str | None, files: Sequence[str],
                part: int = 1, parts: int = 1) -> str:
    bits = [f"turn {turn_id}", role]
    if timestamp:
        bits.append(timestamp)
    if parts > 1:
        bits.append(f"part {part}/{parts}")
    if files:
        bits.append("files: " + ", ".join(files))
    return "[" + " · ".join(bits) + "]\n"


def render_turn(turn: TurnSlice) -> str:
    return turn_header(turn.turn_id, turn.role.value, turn.timestamp, turn.files, turn.part, turn.parts) + turn.text


def render_chunk(chunk: ChunkInput) -> str:
    workspace = f"Workspace: {chunk.cwd}\n" if chunk.cwd else ""
    return workspace + "\n\n".join(render_turn(t) for t in chunk.turns)
