"""`checkpoint hook EVENT`: Claude Code's command hooks. The hook's JSON arrives on stdin
(session_id, transcript_path, cwd, hook_event_name, and per event e.g. `source`).

- session-start: prints `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext":
  ...}}` with the workspace's current decisions and constraints (checkpoint.agent.context): the
  session's cwd and the folders below it, never another workspace's; nothing when it has none, or
  when the context is switched off (agent_context = false, CHECKPOINT_AGENT_CONTEXT=0).
- stop, post-compact, session-end: asks for the session to be captured soon (checkpoint.agent.capture)
  and returns at once (agent_capture = false switches it off).

Whatever goes wrong in Checkpoint, a hook exits 0 and prints nothing: the agent must never be broken by
it (an exit status of 2 would even block a Stop). The problem is recorded instead
(checkpoint.agent.problems), and `checkpoint status` shows it. A hook is on the agent's path, so it
loads little (no pydantic, no SDK), reads the database read-only, and waits for a lock only briefly.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from checkpoint import config
from checkpoint.agent.problems import record

EVENTS = ("session-start", "stop", "post-compact", "session-end")
STDIN_BYTES = 4 << 20  # a hook's input is a few hundred bytes; a larger one is not Claude Code's
BUSY_SECONDS = 0.3  # how long session-start waits for a writer's lock before it gives up (and says so)
ITEMS_READ = 200  # more never fit in the context's characters


class HookProblem(Exception):
    """Something the hook cannot do, said in a sentence for `checkpoint status`."""


def _read_input(stdin: BinaryIO) -> dict[str, Any]:
    raw = stdin.read(STDIN_BYTES + 1)
    if len(raw) > STDIN_BYTES:
        raise HookProblem(f"the hook's input on stdin is over {STDIN_BYTES} bytes")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise HookProblem(f"the hook's input on stdin is not JSON ({exc}): {raw[:80]!r}") from None
    if not isinstance(data, dict):
        raise HookProblem(f"the hook's input on stdin is not a JSON object: {raw[:80]!r}")
    return data


def _session_start(settings: config.Settings, data: dict[str, Any]) -> str | None:
    if not settings.agent_context:
        return None
    cwd = data.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise HookProblem(f"the hook's input has no absolute cwd: {cwd!r}")
    from checkpoint import redact
    from checkpoint.agent.answers import released
    from checkpoint.agent.context import PLUGIN_TOOLS, SERVER_TOOLS, session_context
    from checkpoint.agent.workspace import workspace_folders
    from checkpoint.model import ItemKind
    from checkpoint.store import Store, StoreUnavailable

    try:
        store = Store.read_only(settings.db, busy_seconds=BUSY_SECONDS)
    except StoreUnavailable as exc:
        raise HookProblem(str(exc)) from None
    try:
        folders = workspace_folders(cwd)
        # Held items (checkpoint.extract.held) only once the user accepted them.
        page = released(store.workspace_items(folders, kinds=(ItemKind.DECISION, ItemKind.CONSTRAINT),
                                              limit=ITEMS_READ, released_only=True), store.holds_backfill_due())
    except Exception as exc:  # sqlite3.OperationalError ("database is locked") and kin
        raise HookProblem(f"reading {settings.db}: {exc}") from None
    finally:
        store.close()
    # Claude Code sets CLAUDE_PLUGIN_ROOT for a plugin's hooks: then the plugin brought the MCP server too.
    tools = PLUGIN_TOOLS if os.environ.get("CLAUDE_PLUGIN_ROOT") else SERVER_TOOLS
    text = session_context(page, folders[0], redact.redactor(settings.redact, settings.redact_patterns), tools=tools)
    if text is None:
        return None
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}},
                      ensure_ascii=False)


def _capture(settings: config.Settings, data: dict[str, Any]) -> None:
    if not settings.agent_capture:
        return
    from checkpoint.agent.capture import request_capture, valid_session_id

    session_id = data.get("session_id")
    if not valid_session_id(session_id):
        raise HookProblem(f"the hook's input has no usable session_id: {session_id!r}")
    assert isinstance(session_id, str)
    request_capture(settings.db, session_id)


def run(argv: list[str], stdin: BinaryIO, stdout: TextIO) -> int:
    """The hook; always 0, and stdout holds either the whole answer or nothing."""
    event = argv[0] if argv else ""
    where = f"hook {event}" if event else "hook"
    db = Path(os.environ.get("CHECKPOINT_DB") or config.default_db())
    session_id: str | None = None
    try:
        settings = config.load()
        db = settings.db
        if len(argv) != 1 or event not in EVENTS:
            raise HookProblem(f"unknown hook event {' '.join(argv)!r}: the events are {', '.join(EVENTS)}")
        data = _read_input(stdin)
        session_id = data.get("session_id") if isinstance(data.get("session_id"), str) else None
        if event == "session-start":
            answer = _session_start(settings, data)
            if answer:
                stdout.write(answer)
                stdout.flush()
        else:
            _capture(settings, data)
    except HookProblem as exc:
        record(db, where, str(exc), session_id)
    except Exception as exc:
        record(db, where, f"{type(exc).__name__}: {exc}", session_id)
    return 0


def main(argv: list[str]) -> int:
    try:
        return run(argv, sys.stdin.buffer, sys.stdout)
    except BaseException:
        return 0
