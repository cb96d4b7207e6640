"""Whether the process that leased a chunk is still alive, as another process on the same machine can
tell: its pid and the time it started (a pid is reused; a pid with the same start time is the same
process). Read from /proc (Linux). Where it cannot be told (another machine, another pid namespace,
another boot, no /proc), the answer is None and the lease's own time bound is all there is.

No SQL here: the store records `Process` with each lease owner and asks `alive` about it."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Process:
    """A process as another process can recognise it. `host` names the machine, its boot and its pid
    namespace: the pid means the same process only to a reader with the same `host`."""

    host: str
    pid: int
    started: int  # clock ticks after boot (/proc/<pid>/stat, field 22)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def start_ticks(pid: int) -> int | None:
    """The start time of `pid` in clock ticks after boot; None: no such process (or a zombie, which
    has stopped running and will answer nothing)."""
    stat = _read(PROC / str(pid) / "stat")
    if stat is None:
        return None
    # the command name, in parentheses, may hold spaces and parentheses: the fields follow the last ')'
    fields = stat[stat.rfind(")") + 2:].split()
    if len(fields) < 20 or fields[0] in ("Z", "X", "x"):
        return None
    return int(fields[19])


def host_key() -> str | None:
    """This machine, this boot and this pid namespace; None where it cannot be told."""
    boot = _read(PROC / "sys" / "kernel" / "random" / "boot_id")
    try:
        namespace = os.readlink(PROC / "self" / "ns" / "pid")
    except OSError:
        return None
    if not boot:
        return None
    # uname's nodename is what socket.gethostname() returns here (both read the kernel's hostname,
    # and /proc says this is Linux), without importing socket: 2.7 ms at every scan's start.
    return f"{os.uname().nodename} {boot} {namespace}"


_current: tuple[int, Process | None] | None = None


def current() -> Process | None:
    """This process (computed once per pid: a forked child is another process)."""
    global _current
    pid = os.getpid()
    if _current is None or _current[0] != pid:
        host, started = host_key(), start_ticks(pid)
        _current = (pid, Process(host, pid, started) if host and started is not None else None)
    return _current[1]


def alive(process: Process, here: str | None) -> bool | None:
    """True: it runs; False: it is gone (no such pid, or the pid is another process now); None: it
    cannot be told from here (another machine, boot or pid namespace)."""
    if here is None or process.host != here:
        return None
    started = start_ticks(process.pid)
    if started is None:
        try:
            os.kill(process.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return None  # it exists but /proc hides it (hidepid): whose it is cannot be told
        except OSError as exc:
            return None if exc.errno != errno.ESRCH else False
        # the pid exists yet has no readable stat: a zombie (gone) or a hidden process (unknown)
        return False if _read(PROC / str(process.pid) / "stat") is not None else None
    return started == process.started
