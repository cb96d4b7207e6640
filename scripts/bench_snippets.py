"""The programs scripts/bench.py runs in fresh processes beside ours: the floors (python + orjson
parsing every line), the least Python pipeline that stores the same turns, the scan's phases timed
in one process, a bare walk and stat, the fake Anthropic API."""

FLOOR = """
import sys, orjson
loads = orjson.loads
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        loads(line)
"""

# The least a Python process can do to keep the same turns: the floor's parse, then each user and
# assistant record's text into a table shaped like ours (text primary key, the partial index), in one
# transaction, with the store's PRAGMAs, and a clean close. No drop policies, redaction, cursors or
# chunks: what CPython and SQLite cost before any of Checkpoint's own work.
LEAST_PIPELINE = """
import sys, sqlite3, orjson
loads, dumps = orjson.loads, orjson.dumps
conn = sqlite3.connect(sys.argv[2], isolation_level=None)
for pragma in ("journal_mode=WAL", "page_size=16384", "synchronous=NORMAL", "cache_size=-16384"):
    conn.execute("PRAGMA " + pragma)
conn.executescript(
    "CREATE TABLE turns (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL,"
    " role TEXT NOT NULL, text TEXT NOT NULL, ts TEXT, line_no INTEGER NOT NULL,"
    " chunked INTEGER NOT NULL DEFAULT 0, UNIQUE (session_id, seq));"
    "CREATE INDEX turns_unchunked ON turns (session_id, seq) WHERE chunked = 0;")
rows = []
with open(sys.argv[1], "rb") as fh:
    for line_no, line in enumerate(fh, 1):
        record = loads(line)
        if record.get("type") not in ("user", "assistant"):
            continue
        content = record["message"]["content"]
        if not isinstance(content, str):
            content = "\\n".join(b.get("text") or dumps(b.get("input") or b.get("content")).decode() for b in content)
        rows.append((record["uuid"], record["sessionId"], len(rows), record["type"], content,
                     record.get("timestamp"), line_no))
conn.execute("BEGIN IMMEDIATE")
conn.executemany("INSERT OR IGNORE INTO turns (id, session_id, seq, role, text, ts, line_no)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
conn.execute("COMMIT")
conn.close()
"""

# `checkpoint scan` with each phase timed: where a scan's time goes. With `--one-process` first, the
# whole scan runs in this process (no read-ahead child, whose share of parse and redact the timers
# would miss).
SCAN_PHASES = """
import json, os, sys, time
clock = time.perf_counter
began = clock()
from checkpoint import cli, pipeline, store
spent = {"start (imports)": clock() - began}
argv = sys.argv[1:]
if argv[:1] == ["--one-process"]:
    argv, scan = argv[1:], pipeline.scan
    def one_process(*args, **kwargs):
        return scan(*args, **{**kwargs, "two_processes": False})
    pipeline.scan = one_process
def timed(owner, name, phase):
    inner = getattr(owner, name)
    def wrapper(*args, **kwargs):
        t = clock()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[phase] = spent.get(phase, 0.0) + clock() - t
    setattr(owner, name, wrapper)
for owner, name, phase in ((pipeline, "_parse_line", "parse"), (pipeline, "_redact_batch", "redact"),
                           (store.Store, "ingest", "store turns and chunks"), (store.Store, "close", "close"),
                           (store.Store, "__init__", "open"), (pipeline, "scan", "scan")):
    timed(owner, name, phase)
out, sys.stdout = sys.stdout, open(os.devnull, "w")
t = clock()
cli.main(argv)
spent["command"] = clock() - t
out.write(json.dumps(spent))
out.flush()  # not left to the file object's finaliser
"""

# The floor over a corpus: every line of every transcript under the roots, parsed.
TREE_FLOOR = """
import os, sys, orjson
loads = orjson.loads
for root in sys.argv[1:]:
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(".jsonl"):
                with open(os.path.join(dirpath, name), "rb") as fh:
                    for line in fh:
                        loads(line)
"""

STAT_FLOOR = """
import os, sys
for root in sys.argv[1:]:
    for dirpath, _, names in os.walk(root):
        for name in names:
            os.stat(os.path.join(dirpath, name))
"""

# The fake Anthropic API in a process of its own, as the real one is on another machine: its own CPU
# (HTTP, JSON) then takes nothing from the extractor's threads. Says its address, serves until its
# stdin closes; an error of its threads makes it exit non-zero.
FAKE_API = """
import sys
from tests.support.fake_anthropic import serve
with serve(latency=float(sys.argv[1])) as fake:
    print(fake.base_url, flush=True)
    sys.stdin.read()
"""
