"""Run the `checkpoint` console script as a real process, with an explicit, isolated environment.

Used by the end-to-end tests (test_cli.py, test_bad_input.py, test_seed_session.py). The environment
is built from scratch: HOME is a temp dir, no API key, no CHECKPOINT_* unless a test sets it, so a
subprocess can never read or write the real ~/.claude, ~/.codex or ~/.local.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.paths import HOOK_BUDGET

CHECKPOINT = Path(sys.executable).with_name("checkpoint")
CRASH_SIGNS = ("Traceback (most recent call last)", "database is locked")

# Runs a command and writes the child's peak RSS (KiB, from wait4) to argv[1]. The child is forked from
# this small wrapper, not from pytest: Linux counts the parent's RSS at fork time in the child's peak.
_MEASURE = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        **HOOK_BUDGET,
    }
    for var in ("TMPDIR", "PYTHONPATH"):  # PYTHONPATH: to test a checkout other than the installed one
        if os.environ.get(var):
            env[var] = os.environ[var]
    env.update(extra)
    return env


@dataclass
class Result:
    args: list[str]
    rc: int
    out: str
    err: str
    seconds: float
    max_rss_kib: int = 0

    def json(self) -> Any:
        return json.loads(self.out)

    def check(self, rc: int = 0) -> Result:
        """Assert the exit code and that nothing crashed; return self."""
        for sign in CRASH_SIGNS:
            assert sign not in self.err, f"{self.args}: {sign!r} in stderr:\n{self.err}"
        assert self.rc == rc, f"{self.args}: exit {self.rc}, wanted {rc}\nstdout:\n{self.out}\nstderr:\n{self.err}"
        return self


def run(args: list[str], env: dict[str, str], timeout: float = 120, measure: Path | None = None) -> Result:
    argv = [str(CHECKPOINT), *args]
    if measure is not None:
        argv = [sys.executable, "-c", _MEASURE, str(measure), *argv]
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    result = Result(argv, proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start)
    if measure is not None and measure.exists():
        result.max_rss_kib = int(measure.read_text())
    return result


def start(args: list[str], env: dict[str, str], out: Path, err: Path) -> subprocess.Popen[bytes]:
    """Start the CLI without waiting (output to files, so two processes never block on a pipe)."""
    return subprocess.Popen(
        [str(CHECKPOINT), *args], env=env, stdin=subprocess.DEVNULL, stdout=out.open("wb"), stderr=err.open("wb")
    )


def query(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Read the database directly (read-only) for facts the CLI does not print."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def item_markers(items: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(session_id, kind, marker) for every `marker-...` word in every item statement."""
    out = []
    for item in items:
        for word in item["statement"].replace(".", " ").split():
            if word.startswith("marker-"):
                out.append((item["session_id"], item["kind"], word))
    return out
