"""A storm of concurrent pre-edit hooks: N real `checkpoint hook pre-edit` processes started at once,
each a new session about to edit a file a captured decision names. Counts what must stay 0 (non-zero
exits, killing signals, bytes on stderr, answers cut short) and, for information, how many answered
within the budget on this machine's load.

    .venv/bin/python -m scripts.hook_storm [--calls 300] [--rounds 1]

To measure another checkout's hook, run it with PYTHONPATH=<that checkout>/daemon (the venv's
editable install is a path entry, which PYTHONPATH precedes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from tests.support.agent_corpus import PlannedSession, capture, write_claude_session

CHECKPOINT = Path(sys.executable).with_name("checkpoint")
DECISION = "We'll keep store.py free of network calls because the tests run offline."


def storm(calls: int, tmp: Path) -> dict[str, int]:
    root, db, ws = tmp / "projects", tmp / "data" / "checkpoint.db", tmp / "ws"
    (ws / "src").mkdir(parents=True, exist_ok=True)
    if not db.exists():
        write_claude_session(root, PlannedSession("sess-storm", str(ws), [DECISION]))
        capture(db, root)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp), "XDG_CONFIG_HOME": str(tmp / "cfg"),
           "CHECKPOINT_DB": str(db), "CHECKPOINT_SOURCES": str(root)}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    started = []
    for n in range(calls):
        edit = {"session_id": f"storm-{os.getpid()}-{n}", "cwd": str(ws), "hook_event_name": "PreToolUse",
                "tool_name": "Write", "tool_input": {"file_path": str(ws / "src" / "store.py"), "content": "x"}}
        process = subprocess.Popen([str(CHECKPOINT), "hook", "pre-edit"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        started.append((process, json.dumps(edit).encode()))
    counts: Counter[str] = Counter(calls=calls)
    for process, stdin in started:
        out, err = process.communicate(stdin, timeout=900)
        counts["non_zero_exits"] += process.returncode != 0
        counts["signals"] += process.returncode < 0
        counts["stderr_bytes"] += len(err)
        counts["calls_with_stderr"] += bool(err)
        if out:
            try:
                json.loads(out)
                counts["answered"] += 1
            except ValueError:
                counts["answers_cut"] += 1
        else:
            counts["silent"] += 1
    return dict(counts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hook-storm-") as tmp:
        for n in range(args.rounds):
            print(json.dumps({"round": n + 1, **storm(args.calls, Path(tmp))}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
