"""Where the agents with named layouts keep their transcripts: the path shapes more than one reader
must know. The Claude Code reader claims any other `.jsonl` it is shown, so it leaves these alone
even before (or without) their own reader claiming them; the owners read them from here too."""

from __future__ import annotations

from pathlib import Path

CODEX_ROLLOUT = "rollout-"  # Codex: <sessions>/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl
COPILOT_STATE_DIR = "session-state"  # Copilot CLI: session-state/<session id>/events.jsonl


def chat_layout(path: Path) -> str | None:
    """Gemini CLI's: "session" for <tmp>/<project>/chats/session-*.jsonl, "subagent" for
    <tmp>/<project>/chats/<parent session>/<id>.jsonl, "legacy" for an older whole-JSON
    <tmp>/<project>/chats/session-*.json, else None (the logs/ and tool-outputs/ beside chats/ hold
    no sessions)."""
    parts = path.parts
    if path.suffix == ".json" and len(parts) >= 4 and parts[-2] == "chats" and parts[-4] == "tmp" \
            and path.name.startswith("session-"):
        return "legacy"
    if path.suffix != ".jsonl":
        return None
    if len(parts) >= 4 and parts[-2] == "chats" and parts[-4] == "tmp" and path.name.startswith("session-"):
        return "session"
    if len(parts) >= 5 and parts[-3] == "chats" and parts[-5] == "tmp":
        return "subagent"
    return None
