"""A hook's own errors, recorded where `checkpoint status` shows them.

A hook must print nothing and exit 0 whatever goes wrong (the agent must never be broken by
Checkpoint), so it cannot say what went wrong; and when the database is missing or locked it cannot
write there either. So each problem is one JSON line in a small file beside the database
(`<db>.agent/problems.jsonl`, private to its owner), kept to its newest lines; `checkpoint status`
lists the newest. That folder is used only when it and the database's folder are the user's own and
private (checkpoint.ownership), and no file in it is opened through a symlink: a hook must never
write where someone else chose. Plain file I/O only: this loads with every hook."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkpoint.ownership import NotPrivate, database_folder_problem, open_private, private_folder

KEEP = 200  # lines kept when the file is trimmed
TRIM_BYTES = 256 << 10  # trimmed past this size


def state_dir(db: Path) -> Path:
    """Where the agent front ends keep their small files: beside the database, one folder per database."""
    return db.parent / (db.name + ".agent")


def problems_file(db: Path) -> Path:
    return state_dir(db) / "problems.jsonl"


def agent_folder(db: Path) -> Path:
    """state_dir(db), made if missing; raises NotPrivate (or OSError) unless both it and the
    database's folder are the user's own and private."""
    db.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    problem = database_folder_problem(db.parent)
    if problem:
        raise NotPrivate(problem)
    return private_folder(state_dir(db))


@dataclass(frozen=True, slots=True)
class AgentProblem:
    at: float
    where: str  # "hook session-start", "capture <session>", ...
    message: str
    session_id: str | None

    def as_json(self) -> dict[str, Any]:
        return {"at": self.at, "where": self.where, "message": self.message, "session_id": self.session_id}


def record(db: Path, where: str, message: str, session_id: str | None = None) -> None:
    """Append a problem; never raises (a hook that cannot even record has nothing left to do)."""
    try:
        path = agent_folder(db) / "problems.jsonl"
        line = json.dumps({"at": time.time(), "where": where, "message": message[:2_000],
                           "session_id": session_id}, ensure_ascii=False) + "\n"
        fd = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line.encode())
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > TRIM_BYTES:
            _trim(path)
    except Exception:
        pass


def _read(path: Path) -> bytes:
    with os.fdopen(open_private(path, os.O_RDONLY), "rb") as fh:
        return fh.read()


def _trim(path: Path) -> None:
    lines = _read(path).splitlines(keepends=True)[-KEEP:]
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "wb") as fh:
        fh.writelines(lines)
    os.replace(tmp, path)


def recent(db: Path, limit: int = 10) -> list[AgentProblem]:
    """The newest problems first; a line that is not one (a torn write) is skipped. A folder that is
    not private is itself the problem (nothing is read from it, and the hooks write nothing there)."""
    try:
        private_folder(state_dir(db), create=False)
        lines = _read(problems_file(db)).splitlines()
    except NotPrivate as exc:
        return [AgentProblem(at=time.time(), where="agent folder", message=str(exc), session_id=None)]
    except OSError:
        return []
    out: list[AgentProblem] = []
    for raw in reversed(lines):
        try:
            d = json.loads(raw)
            out.append(AgentProblem(at=float(d["at"]), where=str(d["where"]), message=str(d["message"]),
                                    session_id=d.get("session_id")))
        except (ValueError, KeyError, TypeError):
            continue
        if len(out) >= limit:
            break
    return out
