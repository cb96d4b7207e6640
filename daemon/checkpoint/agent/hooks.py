"""`checkpoint hook EVENT`: Claude Code's command hooks. The hook's JSON arrives on stdin
(session_id, transcript_path, cwd, hook_event_name, and per event e.g. `source`).

- session-start: prints `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext":
  ...}}` with the workspace's current decisions and constraints (checkpoint.agent.context): the
  session's cwd and the folders below it, or its whole repository, never another workspace's, the
  repository's shared decision records read first (checkpoint.team.sync.refresh); nothing when it has none, or
  when the context is switched off (agent_context = false, CHECKPOINT_AGENT_CONTEXT=0).
- pre-edit (PreToolUse on the edit tools): the decisions and constraints recorded about the file about
  to be edited (checkpoint.agent.pre_edit), as `additionalContext` beside no permission decision: it
  never blocks the edit. Within a hard time budget (PRE_EDIT_SECONDS, checked by a timer and by the
  store); nothing when nothing (new) concerns the file, or when switched off (agent_reminders = false,
  CHECKPOINT_AGENT_REMINDERS=0). Also Codex's and Copilot CLI's pre-tool hook inputs (agent.tool_input).
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

EVENTS = ("session-start", "pre-edit", "stop", "post-compact", "session-end")
STDIN_BYTES = 4 << 20  # a hook's input is a few hundred bytes; a larger one is not Claude Code's
BUSY_SECONDS = 0.3  # how long session-start waits for a writer's lock before it gives up (and says so)
ITEMS_READ = 200  # more never fit in the context's characters
PRE_EDIT_SECONDS = 0.8  # the pre-edit hook's whole budget once running (the agent waits for it)


class HookProblem(Exception):
    """Something the hook cannot do, said in a sentence for `checkpoint status`."""


class OverBudget(HookProblem):
    """The pre-edit hook ran out of its time: the edit goes ahead without a reminder."""


def _over_budget(signum: int, frame: object) -> None:
    raise OverBudget(f"the pre-edit reminder took over {PRE_EDIT_SECONDS} s and was dropped")


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
    from checkpoint.agent.context import session_context
    from checkpoint.agent.workspace import workspace_folders
    from checkpoint.model import ItemKind
    from checkpoint.store import Store, StoreUnavailable

    folders = workspace_folders(cwd)
    _read_records(settings, folders)
    try:
        store = Store.read_only(settings.db, busy_seconds=BUSY_SECONDS)
    except StoreUnavailable as exc:
        raise HookProblem(str(exc)) from None
    try:
        # Held items (checkpoint.extract.held) only once the user accepted them; no earlier task's orders.
        page = store.workspace_items(folders, kinds=(ItemKind.DECISION, ItemKind.CONSTRAINT),
                                     limit=ITEMS_READ, released_only=True, lasting_only=True)
    except Exception as exc:  # sqlite3.OperationalError ("database is locked") and kin
        raise HookProblem(f"reading {settings.db}: {exc}") from None
    finally:
        store.close()
    session_id = data.get("session_id")
    if data.get("source") in ("compact", "clear") and isinstance(session_id, str) and session_id:
        from checkpoint.agent.pre_edit import forget_ledger

        forget_ledger(settings.db, session_id)  # what the reminders showed may be gone from the agent's context
    text = session_context(page, folders[0], redact.redactor(settings.redact, settings.redact_patterns),
                           tools=_tools(), reminders=settings.agent_reminders)
    if text is None:
        return None
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}},
                      ensure_ascii=False)


def _tools() -> str:
    from checkpoint.agent.context import PLUGIN_TOOLS, SERVER_TOOLS

    # Claude Code sets CLAUDE_PLUGIN_ROOT for a plugin's hooks: then the plugin brought the MCP server too.
    return PLUGIN_TOOLS if os.environ.get("CLAUDE_PLUGIN_ROOT") else SERVER_TOOLS


def _pre_edit(settings: config.Settings, data: dict[str, Any]) -> str | None:
    from checkpoint.agent.hook_settings import remember

    remember(settings.db, settings.agent_reminders, settings.redact, settings.redact_patterns)  # for the narrow path
    if not settings.agent_reminders:
        return None
    import time

    from checkpoint import redact
    from checkpoint.agent.pre_edit import reminder
    from checkpoint.agent.tool_input import answer, edit_target
    from checkpoint.store import Store, StoreUnavailable

    target = edit_target(data)
    if target is None:
        return None
    try:
        store = Store.read_only(settings.db, busy_seconds=BUSY_SECONDS)
    except StoreUnavailable as exc:
        raise HookProblem(str(exc)) from None
    try:
        store.give_up_at(time.monotonic() + PRE_EDIT_SECONDS)
        redactor = redact.redactor(settings.redact, settings.redact_patterns)
        text = reminder(store, settings.db, target, redactor, _tools())
        found = _edit_findings(store, settings, target, redactor)
    except HookProblem:
        raise
    except Exception as exc:  # sqlite3.OperationalError ("database is locked", "interrupted") and kin
        raise HookProblem(f"reading {settings.db}: {exc}") from None
    finally:
        store.close()
    if found:
        ask = "It would break an accepted decision (see the context)" if settings.agent_check_ask else None
        return answer(target, "\n".join(t for t in (found, text) if t), ask)
    return answer(target, text) if text else None


def _edit_findings(store: Any, settings: config.Settings, target: Any, redactor: Any) -> str | None:
    """The accepted checks over the text the edit would write (checkpoint.agent.edit_checks); a check
    that fails drops the finding, never the reminder or the edit."""
    from checkpoint.agent.edit_checks import edit_findings

    try:
        return edit_findings(store, target, settings.decisions_dir, redactor)
    except (OverBudget, KeyboardInterrupt):
        raise
    except Exception:
        return None


def _read_records(settings: config.Settings, folders: list[str]) -> None:
    """The decision records of the cwd's repository into the store (a teammate's, pulled since): a
    problem is recorded, and the hook goes on with what the store holds."""
    from checkpoint.team.sync import refresh

    try:
        refresh(settings.db, folders, settings.decisions_dir, busy_seconds=BUSY_SECONDS)
    except Exception as exc:  # StoreFault, sqlite3.OperationalError ("database is locked") and kin
        record(settings.db, "hook session-start", f"reading the decision records: {exc}")


def _capture(settings: config.Settings, data: dict[str, Any]) -> None:
    if not settings.agent_capture:
        return
    from checkpoint.agent.capture import request_capture, valid_session_id

    session_id = data.get("session_id")
    if not valid_session_id(session_id):
        raise HookProblem(f"the hook's input has no usable session_id: {session_id!r}")
    assert isinstance(session_id, str)
    request_capture(settings.db, session_id)


def _timed(hook: Any, settings: config.Settings, data: dict[str, Any]) -> str | None:
    """`hook` under a wall-clock alarm: past PRE_EDIT_SECONDS it is abandoned (OverBudget)."""
    import signal

    previous = signal.signal(signal.SIGALRM, _over_budget)
    signal.setitimer(signal.ITIMER_REAL, PRE_EDIT_SECONDS)
    try:
        result: str | None = hook(settings, data)
        return result
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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
        if event in ("session-start", "pre-edit"):
            answer = _session_start(settings, data) if event == "session-start" else _timed(_pre_edit, settings, data)
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
