"""Capturing one session soon, asked for by a hook (Stop, PostCompact, SessionEnd) that must not wait.

Why a detached process and not the daemon: the daemon (`checkpoint serve`) runs only while an editor
has it open, and has no channel a hook could reach cheaply; a detached `python -m
checkpoint.agent.capture SESSION` works with or without it (a daemon running at the same time is
safe: chunks are leased, nothing is extracted twice).

Why not one process per hook: Stop fires after every answer of the agent, so a long session would
pile up runs. So per session there is a request file and a lock (in `<db>.agent/capture/`):
- the hook writes a fresh token into the request file, then starts a worker only if the session's
  lock is free;
- a worker takes the lock (or exits: one is at work already), and runs `checkpoint now` for the
  session until the request token stays what it read before its run; it looks once more after
  letting the lock go, and goes on if a hook wrote in between (the hook saw the lock held then and
  started no one). So at most one worker per session works, and no request is left unserved.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from checkpoint.agent.problems import agent_folder, record, state_dir
from checkpoint.ownership import open_private, private_folder

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def valid_session_id(session_id: object) -> bool:
    return isinstance(session_id, str) and _SESSION_ID.fullmatch(session_id) is not None


def _paths(db: Path, session_id: str) -> tuple[Path, Path]:
    folder = state_dir(db) / "capture"
    return folder / f"{session_id}.request", folder / f"{session_id}.lock"


def _token(path: Path) -> str:
    try:
        with os.fdopen(open_private(path, os.O_RDONLY), "r") as fh:
            return fh.read()
    except OSError:
        return ""


def _try_lock(path: Path) -> int | None:
    """The lock's descriptor, held; None when another process holds it."""
    fd = open_private(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _unlock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def request_capture(db: Path, session_id: str) -> bool:
    """Ask for the session to be captured soon; True when a worker was started for it."""
    request, lock = _paths(db, session_id)
    agent_folder(db)  # raises unless the folders are private: then nothing is written (and the hook records why)
    private_folder(request.parent)
    tmp = request.with_name(f"{request.name}.{os.getpid()}.tmp")
    with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w") as fh:
        fh.write(f"{time.time_ns()}.{os.getpid()}")
    os.replace(tmp, request)
    fd = _try_lock(lock)
    if fd is None:
        return False  # a worker is at work: it sees the new token when its run ends
    _unlock(fd)
    subprocess.Popen(
        [sys.executable, "-m", "checkpoint.agent.capture", session_id],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )
    return True


def _run_once(session_id: str) -> None:
    """`checkpoint now --session SESSION`, in this process; what failed is recorded as a problem."""
    from checkpoint import config, runner
    from checkpoint.backfills import open_store

    settings = config.load()
    store = open_store(settings.db)
    try:
        run = runner.capture(store, settings, sessions=[session_id]).run
        if not run.ok:
            causes = "; ".join(f.cause for f in run.failures[:3])
            record(settings.db, f"capture {session_id}", f"{run.sentence()} {causes}".strip(), session_id)
    finally:
        store.close()


def work(db: Path, session_id: str) -> int:
    request, lock = _paths(db, session_id)
    fd = _try_lock(lock)
    while fd is not None:
        token = _token(request)
        try:
            _run_once(session_id)
        except Exception as exc:
            record(db, f"capture {session_id}", f"{type(exc).__name__}: {exc}", session_id)
            _unlock(fd)
            return 1
        if _token(request) != token:
            continue
        _unlock(fd)
        if _token(request) == token:
            return 0
        fd = _try_lock(lock)  # a hook wrote while the lock was going: serve it, unless another worker does
    return 0


def main(argv: list[str]) -> int:
    from checkpoint import config

    try:
        db = config.load().db
    except config.SettingsError as exc:
        record(Path(os.environ.get("CHECKPOINT_DB") or config.default_db()), "capture", str(exc))
        return 2
    if len(argv) != 1 or not valid_session_id(argv[0]):
        record(db, "capture", f"expected one session id, got {argv!r}")
        return 2
    return work(db, argv[0])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
