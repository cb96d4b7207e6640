"""`checkpoint hook EVENT`: Claude Code's command hooks. The hook's JSON arrives on stdin
(session_id, transcript_path, cwd, hook_event_name, and per event e.g. `source`).

- session-start: prints `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext":
  ...}}` with the workspace's current decisions and constraints (checkpoint.agent.context): the
  session's cwd and the folders below it, or its whole repository, never another workspace's, the
  repository's shared decision records read first (checkpoint.team.sync.refresh); nothing when it has none, or
  when the context is switched off (agent_context = false, CHECKPOINT_AGENT_CONTEXT=0).
- pre-edit (PreToolUse on the edit tools): the decisions and constraints recorded about the file about
  to be edited (checkpoint.agent.pre_edit), as `additionalContext` beside no permission decision: it
  never blocks the edit. Within a hard time budget (PRE_EDIT_SECONDS, kept by the watchdog and by the
  store); nothing when nothing (new) concerns the file, or when switched off (agent_reminders = false,
  CHECKPOINT_AGENT_REMINDERS=0). Also Codex's and Copilot CLI's pre-tool hook inputs (agent.tool_input).
- stop, post-compact, session-end: asks for the session to be captured soon (checkpoint.agent.capture)
  and returns at once (agent_capture = false switches it off).

Whatever goes wrong in Checkpoint, a hook exits 0 and prints nothing: the agent must never be broken by
it (an exit status of 2 would even block a Stop). The problem is recorded instead
(checkpoint.agent.problems), and `checkpoint status` shows it. A hook is on the agent's path, so it
loads little (no pydantic, no SDK), reads the database read-only, and waits for a lock only briefly.

The budget (PRE_EDIT_SECONDS for pre-edit, HOOK_SECONDS for the others) is kept by a watchdog thread,
never by a signal: a SIGALRM handler raising inside an extension module's initialisation (orjson's, under
a storm of concurrent edits) crashed the process with SIGSEGV. A thread interrupts nothing: at the
budget it records the problem and ends the process with exit 0, silent, unless the answer is being
written (then it lets the write finish: the answer is whole or absent). Between steps the hook checks
the deadline itself, and the store interrupts a query past it (Store.give_up_at). The process's stderr
is /dev/null while the hook runs: nothing of Checkpoint's may reach the agent's terminal.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from checkpoint import config
from checkpoint.agent.problems import record

EVENTS = ("session-start", "pre-edit", "stop", "post-compact", "session-end")
STDIN_BYTES = 4 << 20  # a hook's input is a few hundred bytes; a larger one is not Claude Code's
BUSY_SECONDS = 0.3  # how long session-start waits for a writer's lock before it gives up (and says so)
ITEMS_READ = 200  # more never fit in the context's characters
PRE_EDIT_SECONDS = 0.8  # the pre-edit hook's whole budget once running (the agent waits for it)
# A longer pre-edit budget, in seconds: for a slow disk, and for tests on a loaded machine whose outcome
# must not depend on the load (an agent waits that much longer before each edit).
PRE_EDIT_SECONDS_ENV = "CHECKPOINT_PRE_EDIT_SECONDS"
HOOK_SECONDS = 5.0  # the other hooks' (Claude Code kills a hook at 10 s, and says so on the terminal)


class HookProblem(Exception):
    """Something the hook cannot do, said in a sentence for `checkpoint status`."""


class OverBudget(HookProblem):
    """The pre-edit hook ran out of its time: the edit goes ahead without a reminder."""


class Watchdog:
    """A hook's budget, kept by a daemon thread (see the module's docstring: never a signal)."""

    def __init__(self, seconds: float, db: Path, where: str) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.db = db
        self.where = where
        self.session_id: str | None = None
        self._answering = threading.Lock()  # held while the answer is written; the watchdog's once it fires
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def start(self) -> Watchdog:
        self._timer.start()
        return self

    def cancel(self) -> None:
        self._timer.cancel()

    def check(self) -> None:
        """Between steps: past the deadline, the hook stops here (OverBudget), nothing written."""
        if time.monotonic() > self.deadline:
            raise OverBudget(self._said())

    def _said(self) -> str:
        return f"the {self.where} took over {self.seconds:g} s and was dropped (the agent went on without it)"

    def _expire(self) -> None:
        if not self._answering.acquire(blocking=False):
            return  # the answer is being written: it ends in a moment, whole
        record(self.db, self.where, self._said(), self.session_id)
        os._exit(0)

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Hold off the watchdog while the answer is written; past the deadline, write nothing."""
        with self._answering:
            self.check()
            yield


def _read_input(stdin: BinaryIO) -> dict[str, Any]:
    raw = stdin.read(STDIN_BYTES + 1)
    if len(raw) > STDIN_BYTES:
        raise HookProblem(f"the hook's input on stdin is over {STDIN_BYTES} bytes")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise HookProblem(f"the hook's input on stdin is not JSON ({exc}): {_opening(raw)}") from None
    if not isinstance(data, dict):
        raise HookProblem(f"the hook's input on stdin is not a JSON object: {_opening(raw)}")
    return data


def _opening(raw: bytes) -> str:
    """The input's first characters as a problem may quote them: redacted before they are cut (a
    token cut in half matches no detector)."""
    from checkpoint.redact.outside import hide_secrets

    return repr(hide_secrets(raw[:2_000].decode("utf-8", errors="replace"))[:80])


def _session_start(settings: config.Settings, data: dict[str, Any], watchdog: Watchdog) -> str | None:
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
    watchdog.check()
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


def _pre_edit(settings: config.Settings, data: dict[str, Any], watchdog: Watchdog) -> str | None:
    from checkpoint.agent.hook_settings import remember

    remember(settings.db, settings.agent_reminders, settings.redact, settings.redact_patterns,  # for the narrow path
             decisions_dir=settings.decisions_dir)
    if not settings.agent_reminders:
        return None
    from checkpoint import redact
    from checkpoint.agent.pre_edit import reminder
    from checkpoint.agent.tool_input import answer, edit_target
    from checkpoint.store import Store, StoreUnavailable

    target = edit_target(data)
    if target is None:
        return None
    watchdog.check()
    try:
        store = Store.read_only(settings.db, busy_seconds=min(BUSY_SECONDS, max(0.0, watchdog.deadline
                                                                                 - time.monotonic())))
    except StoreUnavailable as exc:
        raise HookProblem(str(exc)) from None
    try:
        store.give_up_at(watchdog.deadline)
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
    from checkpoint.store import StoreFault, StoreUnavailable
    from checkpoint.team.sync import refresh

    try:
        refresh(settings.db, folders, settings.decisions_dir, busy_seconds=BUSY_SECONDS)
    except StoreUnavailable as exc:
        if isinstance(exc, StoreFault):
            record(settings.db, "hook session-start", f"reading the decision records: {exc}")
        return  # missing, or not migrated yet (never from a hook): the read that follows says so, once
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


def pre_edit_seconds(environ: Mapping[str, str]) -> float | None:
    """The pre-edit budget: PRE_EDIT_SECONDS, or PRE_EDIT_SECONDS_ENV's seconds; None when that is set
    to anything but a number above 0 (said as the hook's problem; the default applies)."""
    raw = environ.get(PRE_EDIT_SECONDS_ENV)
    if raw is None:
        return PRE_EDIT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        return None
    return seconds if 0 < seconds < float("inf") else None


def run(argv: list[str], stdin: BinaryIO, stdout: TextIO) -> int:
    """The hook; always 0, and stdout holds either the whole answer or nothing."""
    event = argv[0] if argv else ""
    where = f"hook {event}" if event else "hook"
    db = Path(os.environ.get("CHECKPOINT_DB") or config.default_db())
    budget = pre_edit_seconds(os.environ) if event == "pre-edit" else HOOK_SECONDS
    watchdog = Watchdog(budget or PRE_EDIT_SECONDS, db, where).start()
    try:
        settings = config.load()
        db = watchdog.db = settings.db
        if budget is None:
            record(db, where, f"{PRE_EDIT_SECONDS_ENV}={os.environ.get(PRE_EDIT_SECONDS_ENV, '')[:40]!r} is not a"
                   f" number of seconds above 0: the default {PRE_EDIT_SECONDS:g} s applies", None)
        if len(argv) != 1 or event not in EVENTS:
            raise HookProblem(f"unknown hook event {' '.join(argv)!r}: the events are {', '.join(EVENTS)}")
        data = _read_input(stdin)
        watchdog.session_id = data.get("session_id") if isinstance(data.get("session_id"), str) else None
        if event in ("session-start", "pre-edit"):
            hook = _session_start if event == "session-start" else _pre_edit
            answer = hook(settings, data, watchdog)
            if answer:
                with watchdog.answering():
                    stdout.write(answer)
                    stdout.flush()
        else:
            _capture(settings, data)
    except HookProblem as exc:
        record(db, where, str(exc), watchdog.session_id)
    except Exception as exc:
        record(db, where, f"{type(exc).__name__}: {exc}", watchdog.session_id)
    finally:
        watchdog.cancel()
    return 0


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """stderr (the file descriptor: C extensions' and the interpreter's own messages too) on /dev/null
    while the hook runs: a hook prints nothing but its answer, whatever happens."""
    try:
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        yield
        return
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        with suppress(Exception):  # what was written goes to /dev/null, not to the restored stderr
            sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def main(argv: list[str]) -> int:
    try:
        with _quiet_stderr():
            run(argv, sys.stdin.buffer, sys.stdout)
    except BaseException:
        pass
    try:
        sys.stdout.flush()
    except Exception:  # the agent closed the pipe: the interpreter must not fail flushing it at exit
        with suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    return 0
