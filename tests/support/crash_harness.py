"""Killing real `checkpoint` processes at random moments, and checking what they leave behind.

Used by tests/e2e/test_crash_safety.py (kill -9 of `checkpoint now` and of `checkpoint serve`) and
tests/e2e/test_concurrency.py (two daemons and a CLI on one database).

- `Writer` appends Claude Code turns that plant "We'll use marker-<hex> ..." decisions to a session
  file, sometimes leaving its last line half written (as a writer caught mid-record does).
- `Lsp` is a minimal LSP client for `checkpoint serve`: it writes initialize/initialized on the
  daemon's stdin and lets the daemon write to a file, so the daemon never blocks on a pipe nobody
  reads and can be killed at any moment; `messages()` parses what it said.
- `Life` is one process's lifetime, so that every request the fake API saw can be attributed to the
  process that sent it (only one `checkpoint now` lives at a time in the kill loop).
- `check_database` is the oracle: integrity, every turn once (against a fresh single-process scan
  of the same files), every chunk captured, every planted marker exactly one item.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkpoint.store import Store
from tests.support.cli_run import CHECKPOINT, CRASH_SIGNS, query
from tests.support.fake_anthropic import RequestRecord, parse_turns
from tests.support.oracle import clean_scan

WORDS = ["parser", "cache", "schema", "index", "module", "config", "handler", "buffer", "retry", "window", "queue",
         "worker", "store", "layout"]


# -- transcripts that keep growing ------------------------------------------------------------------


class Writer:
    """One Claude Code session file; each `append` adds turns, every third planting a decision."""

    def __init__(self, root: Path, rng: random.Random, cwd: str = "/home/dev/crash") -> None:
        self.rng = rng
        self.session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        self.cwd = cwd
        self.path = root / cwd.replace("/", "-") / f"{self.session_id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.markers: set[str] = set()
        self.held = b""  # the second half of a line written only in part

    def _text(self, n: int) -> tuple[str, str | None]:
        words = " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(30, 90)))
        if n % 3:
            return words.capitalize() + ".", None
        marker = f"marker-{self.rng.getrandbits(48):012x}"
        return f"We'll use {marker} for the {self.rng.choice(WORDS)} layer.\n{words}.", marker

    def append(self, turns: int, torn: bool = False) -> None:
        """Complete a half-written line, if any, then write `turns` whole lines; with `torn`, the
        last line is written only in part (its marker counts once the line is completed)."""
        data = bytearray(self.held)
        self.held = b""
        for n in range(turns):
            text, marker = self._text(n)
            record = {
                "type": "user", "uuid": str(uuid.UUID(int=self.rng.getrandbits(128))), "parentUuid": None,
                "sessionId": self.session_id, "cwd": self.cwd, "timestamp": "2026-01-05T10:00:00.000Z",
                "message": {"role": "user", "content": text},
            }
            line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
            if torn and n == turns - 1:
                cut = self.rng.randint(1, len(line) - 2)
                data += line[:cut]
                self.held = line[cut:]
            else:
                data += line
            if marker:
                self.markers.add(marker)
        with self.path.open("ab") as fh:
            fh.write(data)

    def finish(self) -> None:
        """Write the rest of a half-written line."""
        if self.held:
            with self.path.open("ab") as fh:
                fh.write(self.held)
            self.held = b""


# -- processes --------------------------------------------------------------------------------------


@dataclass
class Life:
    """One process, from start to end (time.monotonic, the fake API's clock)."""

    name: str
    started: float
    ended: float = float("inf")
    killed: bool = False
    rc: int | None = None
    err: str = ""
    trigger: str = ""  # what the kill waited for

    def holds(self, t: float) -> bool:
        return self.started <= t <= self.ended


@dataclass
class Trigger:
    """When to kill: once `ready()` holds (polled every 5 ms), `jitter` seconds later."""

    what: str
    ready: Callable[[], bool]
    jitter: float = 0.0


def after_seconds(seconds: float) -> Trigger:
    deadline = time.monotonic() + seconds
    return Trigger(f"after {seconds:.2f}s", lambda: time.monotonic() >= deadline)


def crash_signs(text: str) -> list[str]:
    return [sign for sign in CRASH_SIGNS if sign in text]


def run_now(env: dict[str, str], workdir: Path, name: str, trigger: Callable[[], Trigger] | None,
            args: Sequence[str] = ()) -> Life:
    """`checkpoint now` as a real process, killed with SIGKILL when the trigger (made at its start)
    fires, unless it ended first; None: never killed."""
    out, err = workdir / f"{name}.out", workdir / f"{name}.err"
    life = Life(name, time.monotonic())
    proc = subprocess.Popen([str(CHECKPOINT), "now", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=out.open("wb"), stderr=err.open("wb"))
    if trigger is None:
        proc.wait(180)
    else:
        fire = trigger()
        life.trigger = fire.what
        deadline = time.monotonic() + 180
        while proc.poll() is None and not fire.ready() and time.monotonic() < deadline:
            time.sleep(0.005)
        if proc.poll() is None:
            time.sleep(fire.jitter)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                life.killed = True
        proc.wait()
    life.ended = time.monotonic()
    life.rc = proc.returncode
    life.err = err.read_text(errors="replace")
    return life


class Lsp:
    """`checkpoint serve` with a minimal LSP client: requests are written to its stdin, its stdout
    goes to a file (never a pipe that could fill and stall it), and it can be killed at any time."""

    def __init__(self, env: dict[str, str], workdir: Path, name: str, folder: Path,
                 options: dict[str, Any]) -> None:
        self.name = name
        self.out_path = workdir / f"{name}.lsp-out"
        self.err_path = workdir / f"{name}.lsp-err"
        self.life = Life(name, time.monotonic())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "checkpoint", "serve"], env=env, stdin=subprocess.PIPE,
            stdout=self.out_path.open("wb"), stderr=self.err_path.open("wb"),
        )
        self._id = 0
        self.request("initialize", {
            "processId": os.getpid(), "rootUri": folder.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
            "initializationOptions": options,
        })
        self.notify("initialized", {})

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: Any) -> int:
        self._id += 1
        self._send({"id": self._id, "method": method, "params": params})
        return self._id

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def messages(self) -> list[dict[str, Any]]:
        """Every complete message the daemon wrote so far."""
        data = self.out_path.read_bytes()
        out: list[dict[str, Any]] = []
        pos = 0
        while True:
            head_end = data.find(b"\r\n\r\n", pos)
            if head_end < 0:
                return out
            length = next(int(h.split(b":")[1]) for h in data[pos:head_end].split(b"\r\n")
                          if h.lower().startswith(b"content-length"))
            body = data[head_end + 4:head_end + 4 + length]
            if len(body) < length:
                return out
            out.append(json.loads(body))
            pos = head_end + 4 + length

    def said(self) -> list[str]:
        """The texts of window/showMessage and window/logMessage."""
        return [m["params"]["message"] for m in self.messages()
                if m.get("method") in ("window/showMessage", "window/logMessage")]

    def shown(self) -> list[str]:
        return [m["params"]["message"] for m in self.messages() if m.get("method") == "window/showMessage"]

    def statuses(self) -> list[dict[str, Any]]:
        return [m["params"] for m in self.messages() if m.get("method") == "checkpoint/status"]

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.life.killed = True
        self.life.ended = time.monotonic()

    def stop(self, timeout: float = 15.0) -> None:
        """shutdown + exit, as an editor closing its window; killed if it does not go."""
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.proc.kill()
            self.proc.wait()
        self.life.ended = time.monotonic()
        self.life.rc = self.proc.returncode
        self.life.err = self.err_path.read_text(errors="replace")


def wait_until(predicate: Any, timeout: float, what: str, step: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(step)


def chunk_states(db: Path) -> Counter[str]:
    if not db.exists():
        return Counter()
    try:
        return Counter(dict(query(db, "SELECT state, count(*) FROM chunks GROUP BY state")))
    except sqlite3.OperationalError:  # the schema is not there yet
        return Counter()


# -- the oracle -------------------------------------------------------------------------------------


@dataclass
class Checked:
    turns: int
    chunks: int
    items: int
    markers: int
    resent: dict[tuple[str, int], list[str]] = field(default_factory=dict)  # chunk -> processes that sent it


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def check_partial(db: Path, markers: set[str]) -> None:
    """What must hold after any kill: a whole database, no marker twice, counts that add up."""
    if not db.exists():  # killed before it was created
        return
    assert integrity(db) == "ok"
    found = Counter(m for (statement,) in query(db, "SELECT statement FROM items")
                    for m in statement.replace(".", " ").split() if m.startswith("marker-"))
    assert not [m for m, n in found.items() if n > 1], f"markers captured twice: {found.most_common(3)}"
    assert set(found) <= markers, f"items naming markers never written: {set(found) - markers}"
    store = Store(db)
    try:
        for s in store.session_counts():
            assert min(s.captured, s.pending, s.failed) >= 0 and s.captured + s.pending + s.failed == s.turns, s
    finally:
        store.close()


def check_database(db: Path, sources: list[Path], chunk_tokens: int, markers: set[str], workdir: Path) -> Checked:
    """Everything written was captured exactly once, and the database is whole."""
    assert integrity(db) == "ok"
    # Every turn once: the same turns, in the same order, as one uninterrupted scan of the same files.
    oracle_db = workdir / f"oracle-{uuid.uuid4().hex[:6]}.db"
    clean_scan(oracle_db, sources, chunk_tokens)
    order = "SELECT session_id, id, role, text FROM turns ORDER BY session_id, seq"
    got, want = query(db, order), query(oracle_db, order)
    assert len(got) == len(want) and got == want, f"turns differ from a clean scan: {len(got)} vs {len(want)}"
    for session_id, turns, watermark, top in query(
        db, "SELECT s.id, s.turns, s.watermark, (SELECT max(seq) FROM turns t WHERE t.session_id = s.id)"
            " FROM sessions s"
    ):
        assert turns == watermark == top, (session_id, turns, watermark, top)
    states = dict(query(db, "SELECT state, count(*) FROM chunks GROUP BY state"))
    assert set(states) == {"captured"}, f"chunks not captured: {states}"
    statements = [s for (s,) in query(db, "SELECT statement FROM items")]
    found = Counter(m for s in statements for m in s.replace(".", " ").split() if m.startswith("marker-"))
    assert set(found) == markers, (f"missing {sorted(markers - set(found))[:5]}, "
                                   f"unexpected {sorted(set(found) - markers)[:5]}")
    assert max(found.values()) == 1, f"markers captured twice: {found.most_common(3)}"
    return Checked(len(got), states["captured"], len(statements), len(found))


_SESSION_RE = re.compile(r"^Session (\S+) \(", re.MULTILINE)  # render_request's first line


def chunk_key(record: RequestRecord) -> tuple[str, int]:
    """A chunk as the API saw it: its session, the start of its turns' text and its first part: a
    chunk's (session, first seq, first character) is unique in the store, and a chunk that grows
    keeps its start. The request names turns only by labels local to their chunk, and a first turn
    alone can repeat ("(thinking) Considering."): 300 characters tell the chunks of these corpora apart."""
    body = record.body or {}
    texts = [block.get("text", "") for message in body.get("messages", []) if message.get("role") == "user"
             for block in (message["content"] if isinstance(message.get("content"), list)
                           else [{"text": message.get("content", "")}])]
    prompt = "\n\n".join(texts)
    turns = parse_turns(prompt)
    session = _SESSION_RE.search(prompt)
    assert turns and session, \
        f"request {record.seq} carries no turn: {str(body)[:300]} ({record.status}, {record.error_type})"
    start = "\n".join(turn.text for turn in turns)[:300]
    return f"{session.group(1)} {start!r}", turns[0].part


def sends_per_chunk(records: Sequence[RequestRecord], lives: Sequence[Life]) -> dict[tuple[str, int], list[Life]]:
    """For every chunk, the process that sent each of its requests, in order."""
    out: dict[tuple[str, int], list[Life]] = defaultdict(list)
    for record in records:
        if record.body is None:
            continue  # its sender was killed before the body was sent whole: no model ever saw it
        owner = [life for life in lives if life.holds(record.started)]
        assert len(owner) == 1, f"request {record.seq} at {record.started} belongs to {owner}"
        out[chunk_key(record)].append(owner[0])
    return out


def check_sends(records: Sequence[RequestRecord], lives: Sequence[Life]) -> dict[tuple[str, int], list[str]]:
    """Every chunk's text was sent once, except re-sends after a process that held it was killed:
    each process sent a chunk at most once, and every process that sent it but the last was killed.
    Returns the chunks sent more than once, with the processes that sent them."""
    resent: dict[tuple[str, int], list[str]] = {}
    for key, senders in sends_per_chunk(records, lives).items():
        names = [life.name for life in senders]
        assert len(set(names)) == len(names), f"chunk {key} sent twice by one process: {names}"
        assert all(life.killed for life in senders[:-1]), f"chunk {key} re-sent though no sender died: {names}"
        if len(senders) > 1:
            resent[key] = names
    return resent
