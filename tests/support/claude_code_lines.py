"""Claude Code transcript records in the shapes docs/architecture.md ("Claude Code transcripts") describes."""

from __future__ import annotations

from typing import Any

from checkpoint.sources.claude_code import ClaudeCodeReader

CLAUDE = ClaudeCodeReader()
S = "11111111-1111-4111-8111-111111111111"


def env(kind: str, uuid: str, ts: str = "2026-01-05T10:00:00.000Z", **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "parentUuid": None, "sessionId": S, "cwd": "/home/me/w", "timestamp": ts,
            "version": "2.1.50", "isSidechain": False, "userType": "external", **fields}


def user(uuid: str, content: Any, **fields: Any) -> dict[str, Any]:
    return env("user", uuid, message={"role": "user", "content": content}, **fields)


def assistant(uuid: str, message_id: str, *blocks: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return env("assistant", uuid, requestId=f"req_{message_id}", message={
        "id": message_id, "type": "message", "role": "assistant", "model": "claude-x", "content": list(blocks),
        "stop_reason": None}, **fields)


def tool_result(uuid: str, text: str, result: Any, is_error: bool | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": "toolu_1", "content": text}
    if is_error is not None:
        block["is_error"] = is_error
    return user(uuid, [block], toolUseResult=result)
