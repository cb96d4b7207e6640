"""`checkpoint hook pre-edit`'s narrow path: the same reminder as the full hook (agent.hooks and
agent.pre_edit), byte for byte, with the standard library alone (sqlite3, json, os, re, BLAKE2), so
that the hook an agent waits for before every edit costs little more than the interpreter's own start.

It reads what the writers prepared: the settings cached by the full hook (agent.hook_settings: no
TOML, no config module), each item's statement already redacted and shown as an agent reads it
(`agent_lines`, rendered by the run layer with checkpoint.shown_text: no redactor), and the candidates
chosen from the workspace's folders (session_cwds) rather than by a scan of every item. It keeps every
rule of the full hook: held items never shown (only `held = 0 OR accepted`, and the full path while
the holds' back-fill is due), the once-per-session ledger (agent.reminder_ledger, written only into
private folders, never through a symlink), the database's ownership checks, and the time budget
(SQLite's progress handler: no signal, no timer thread).

Whatever it does not handle goes down the full path with the same input (`answer` returns None): no
cached settings, another agent's input shape (Codex, Copilot), a statement with no line rendered
under the current redactor, a ledger naming an item that no longer applies, a database it cannot
open or check, any error. tests/e2e/agent/test_pre_edit_narrow.py checks both paths answer alike."""

from __future__ import annotations

import os
import time

try:  # hashlib's own BLAKE2, without hashlib's load of OpenSSL's module (2 ms of every pre-edit hook)
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b
try:  # sqlite3's own module, without its package's (datetime and default adapters: 2 ms more a call)
    import _sqlite3 as sqlite3
except ImportError:
    import sqlite3  # type: ignore[no-redef]

from checkpoint.agent import hook_settings
from checkpoint.agent.plain_json import dumps, loads
from checkpoint.agent.reminder_ledger import read_ledger, write_ledger

TYPE_CHECKING = False  # typing itself is not loaded on this path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, BinaryIO, TextIO

    from checkpoint.agent.reminder_ledger import Shown

# The full hook's constants (agent.hooks, agent.pre_edit; a unit test checks they agree).
STDIN_BYTES = 4 << 20
BUSY_SECONDS = 0.3
PRE_EDIT_SECONDS = 0.8
PRE_EDIT_SECONDS_ENV = "CHECKPOINT_PRE_EDIT_SECONDS"
REMINDER_CHARS = 1_500
CANDIDATES = 40
FILE_BYTES = 2 << 20
PATCH_FILES = 3
WINDOW_TURNS = 200  # Store.edits_in_window's limit
AGENT_CONTEXT_MARK = "Checkpoint context:"
TEAM_SESSION_PREFIX = "team:"  # model.TEAM_SESSION_PREFIX: an item known from a decision record
HOLDS_BACKFILL = "item_holds"
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_URI_SAFE = _ASCII_ALNUM | frozenset("/._~+-")  # what a file: URI holds unescaped
_PLAIN = _ASCII_ALNUM | frozenset("_./-")  # what a plain path holds


def _is_day(ts: str) -> bool:
    r"""re.match(r"\d{4}-\d{2}-\d{2}", ts) (\d: any decimal digit, as re reads it in a str)."""
    return (len(ts) >= 10 and ts[4] == "-" and ts[7] == "-" and ts[:4].isdecimal() and ts[5:7].isdecimal()
            and ts[8:10].isdecimal())


class Fallback(Exception):
    """Not handled here: the full hook answers this call."""


class OverBudget(Exception):
    """The reminder took over PRE_EDIT_SECONDS: the edit goes ahead without one (recorded)."""


# -- the input ---------------------------------------------------------------------------------------


def edit_target(data: dict[str, Any]) -> tuple[list[str], str, str | None, list[tuple[str, str]]]:
    """The files a Claude Code edit tool is about to write (agent.tool_input.edit_target, its first
    shape only), its cwd and session, and (file, text) for each text it would write; Fallback for
    anything else."""
    cwd = data.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or "toolName" in data:
        raise Fallback
    name, args = data.get("tool_name"), data.get("tool_input")
    if name not in EDIT_TOOLS or not isinstance(args, dict):
        raise Fallback
    if name == "NotebookEdit":
        edits: list[tuple[object, object]] = [(args.get("notebook_path"), args.get("new_source") or "")]
    elif name == "Write":
        edits = [(args.get("file_path"), args.get("content"))]
    else:
        changes = args.get("edits") if name == "MultiEdit" else [args]
        edits = [(args.get("file_path"), c.get("new_string"))
                 for c in (changes if isinstance(changes, list) else []) if isinstance(c, dict)]
    paths: dict[str, None] = {}
    texts: list[tuple[str, str]] = []
    for path, text in edits:
        if isinstance(path, str) and path and isinstance(text, str):
            absolute = os.path.normpath(os.path.join(cwd, path) if not os.path.isabs(path) else path)
            paths[os.path.normpath(os.path.expanduser(absolute))] = None
            if text:
                texts.append((os.path.normpath(os.path.expanduser(absolute)), text))
    if not paths:
        raise Fallback
    session = data.get("session_id")
    return list(paths)[:PATCH_FILES], cwd, session if isinstance(session, str) and session else None, texts


# -- the database ------------------------------------------------------------------------------------


def _owned(db: str) -> None:
    """store.connection.open_read_only's checks: the folder and the file the user's own, the folder
    not writable by others; Fallback otherwise (the full path says why)."""
    if not os.path.isfile(db):
        raise Fallback
    folder = os.stat(os.path.dirname(db) or ".")
    if (folder.st_uid != os.getuid() or folder.st_mode & 0o002
            or (folder.st_mode & 0o020 and folder.st_gid != os.getgid())):
        raise Fallback
    if os.stat(db).st_uid != os.getuid():
        raise Fallback


def open_database(db: str, settings: dict[str, Any], deadline: float) -> sqlite3.Connection:
    _owned(db)
    real = os.path.realpath(db)
    if not real or not _URI_SAFE.issuperset(real):
        raise Fallback  # a path the URI would have to escape: the full path's pathlib does that
    conn = sqlite3.connect(f"file:{real}?mode=ro", uri=True, timeout=BUSY_SECONDS, isolation_level=None)
    try:
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 5_000)
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if application_id != settings.get("application_id") or version != settings.get("schema"):
            raise Fallback
        if conn.execute("SELECT 1 FROM backfills WHERE name = ?", (HOLDS_BACKFILL,)).fetchone():
            raise Fallback  # items stored before holds existed are judged by the full path
    except BaseException:
        conn.close()
        raise
    return conn


# -- which sessions are the workspace's (store.scope, for one folder) --------------------------------


def _spellings(path: str) -> tuple[str, ...]:
    given = path.rstrip(os.sep) or path
    real = os.path.realpath(os.path.expanduser(path))
    return (given,) if real == given else (given, real)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def held_cwds(conn: sqlite3.Connection, folder: str) -> list[str]:
    """The folders sessions worked in (as recorded) that belong to `folder` (ScopeMixin._held_cwds)."""
    from checkpoint.repository import workspace_key  # the one rule (it checks worktree links)

    theirs = _spellings(folder)
    workspace = workspace_key(folder)
    held = []
    for cwd, recorded in conn.execute("SELECT DISTINCT cwd, workspace FROM session_cwds"):
        mine = _spellings(cwd)
        if any(_inside(p, f) for p in mine for f in theirs) or (recorded or "") == workspace:
            held.append(cwd)
    return held


# -- the candidates (AgentReadsMixin.workspace_items with concerns_clause) --------------------------


def _names_path(column: str, paths: Sequence[str]) -> tuple[str, list[Any]]:
    marks = ",".join("?" * len(paths))
    tails = " OR ".join(f"substr(?, -length({column}) - 1) = '/' || {column}" for _ in paths)
    return f"({column} IN ({marks}) OR (substr({column}, 1, 1) != '/' AND ({tails})))", [*paths, *paths]


_COLUMNS = ("i.id, i.session_id, i.kind, i.statement, i.turn_ids, i.files, i.state, i.created_at, s.cwd, s.agent,"
            " i.accepted_here, i.record, a.redaction, a.source, a.statement, a.session, a.item")


def candidates(conn: sqlite3.Connection, cwds: list[str], paths: tuple[str, ...],
               named: str | None) -> list[tuple[Any, ...]]:
    """Current, released decisions and constraints of the workspace's sessions that may concern the
    file, accepted first, then newest: driven from the workspace's folders (session_cwds, then each
    session's items by index), where the full path's scope clause is checked for every item."""
    if not cwds:
        return []
    files, files_args = _names_path("f.value", paths)
    edits, edits_args = _names_path("e.path", paths)
    name = paths[0].rstrip("/").rsplit("/", 1)[-1]
    concerns = (f"((instr(i.files, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(i.files) f WHERE {files}))"
                " OR (i.files = '[]' AND EXISTS (SELECT 1 FROM json_each(i.turn_ids) j"
                f" JOIN turn_edits e ON e.turn_id = j.value WHERE {edits}))")
    args: list[Any] = [name if '"' not in name and "\\" not in name else "", *files_args, *edits_args]
    if named:
        concerns += " OR instr(i.statement, ?) > 0"
        args.append(named)
    sql = (f"SELECT {_COLUMNS} FROM items i JOIN sessions s ON s.id = i.session_id"
           " LEFT JOIN agent_lines a ON a.item_id = i.id"
           f" WHERE i.session_id IN (SELECT session_id FROM session_cwds WHERE cwd IN ({','.join('?' * len(cwds))}))"
           " AND i.kind IN ('decision', 'constraint') AND " + concerns + ")"
           " AND i.state != 'dismissed' AND NOT EXISTS (SELECT 1 FROM supersessions WHERE old_id = i.id)"
           " AND (i.held = 0 OR i.accepted_here = 1) AND i.lasting = 1"  # no earlier task's orders (one_off)
           " ORDER BY (i.state = 'accepted') DESC, i.created_at DESC, i.rowid DESC LIMIT ?")
    return conn.execute(sql, [*cwds, *args, CANDIDATES]).fetchall()


class Item:
    """A candidate row, as much of an ItemRecord as the reminder reads."""

    __slots__ = ("accepted_here", "agent", "created_at", "cwd", "files", "id", "kind", "line", "record", "session_id",
                 "state", "statement", "turn_ids")

    def __init__(self, row: tuple[Any, ...], redaction: str) -> None:
        (self.id, self.session_id, self.kind, self.statement, turn_ids, files, self.state, self.created_at,
         self.cwd, self.agent, self.accepted_here, self.record, key, source, shown, session, shown_id) = row
        self.turn_ids: list[str] = loads(turn_ids)
        self.files: list[str] = loads(files)
        # the line the writer rendered, if it was rendered from this statement with this redactor
        fresh = key == redaction and source == blake2b(
            f"{self.session_id}\x00{self.statement}".encode(), digest_size=8).hexdigest()
        self.line: tuple[str, str, str] | None = (shown, session, shown_id) if fresh else None

    def digest(self) -> str:
        return blake2b(f"{self.kind}|{self.state}|{self.statement}".encode(), digest_size=6).hexdigest()


# -- the accepted checks (agent.edit_checks, when none can match) ----------------------------------

# checks.active.acts, in SQL: the checks that act on a workspace's items (store.checks.checks_in)
_ACTING_CHECKS = ("SELECT k.rule FROM checks k JOIN items i ON i.id = k.item_id WHERE i.workspace = ?"
                  " AND k.state != 'dismissed' AND i.state != 'dismissed' AND NOT (i.held != 0 AND i.accepted_here = 0)"
                  " AND NOT EXISTS (SELECT 1 FROM supersessions s WHERE s.old_id = i.id)"
                  " AND (i.state = 'accepted' OR k.state = 'accepted')")
MAX_PATHS = 20  # checks.model.MAX_PATHS


def _check_of(text: str) -> tuple[str, str | None, str | None, Any, tuple[str, ...]]:
    """(shape, language, name, rule, globs) of a stored check (checks.model.read_check, the part that
    says which files it reads and its needle); Fallback for anything it would not read plainly."""
    from checkpoint.checks.needles import ALIASES, EXTENSIONS

    data = loads(text)
    if not isinstance(data, dict):
        raise Fallback
    globs = data.get("paths")
    if isinstance(globs, str):
        globs = [globs]
    if globs is None:
        globs = []
    if not isinstance(globs, list) or len(globs) > MAX_PATHS:
        raise Fallback
    if not all(isinstance(g, str) and g.strip() for g in globs):
        raise Fallback
    shapes = [k for k in ("rule", "uses", "regex") if data.get(k) is not None]
    if len(shapes) != 1:
        raise Fallback
    lang = data.get("lang")
    if lang is not None:
        if not isinstance(lang, str):
            raise Fallback
        lang = ALIASES.get(lang.strip().lower(), lang.strip().lower())
        if lang not in EXTENSIONS:
            raise Fallback
    paths = tuple(g.strip() for g in globs)
    if shapes == ["regex"]:
        return "regex", None, None, None, paths
    if shapes == ["uses"]:
        if not isinstance(data["uses"], str):
            raise Fallback
        return "uses", lang, data["uses"], None, paths
    rule = data["rule"]
    if isinstance(rule, str):
        rule = {"pattern": rule}
    if lang is None or not isinstance(rule, dict):
        raise Fallback
    return "structural", lang, None, rule, paths


def _relative(path: str, root: str) -> str | None:
    """agent.edit_checks._relative."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        return None
    return os.path.relpath(real, top).replace(os.sep, "/")


def no_check_can_match(conn: sqlite3.Connection, cwd: str, texts: list[tuple[str, str]],
                       decisions_dir: str | None) -> None:
    """Returns when no check that acts in the cwd's repository can match the text the edit would write
    (the full hook would find nothing: agent.edit_checks); Fallback otherwise, and for a repository with
    decision records (their checks are read from the records: the full hook reads them). A check can
    match a file only when it reads the file (its languages, its globs) and the text holds its needle
    (checks/needles.py, as the engine skips a file); a regex check that reads the file, or one with no
    needle, goes to the full hook."""
    if not texts:
        return
    from checkpoint.repository import repository_of, workspace_key

    repository = repository_of(cwd)
    root = repository.root if repository else cwd
    if repository is not None:
        if decisions_dir is None:
            raise Fallback  # settings cached before they said where records are
        try:
            with os.scandir(os.path.join(repository.root, decisions_dir)) as entries:
                if any(entry.name.endswith(".md") for entry in entries):
                    raise Fallback
        except OSError:
            pass  # no records folder: nothing shared
    rows = conn.execute(_ACTING_CHECKS, (workspace_key(root),)).fetchall()
    if not rows:
        return
    from checkpoint.checks import needles

    checks = [_check_of(rule) for (rule,) in rows]
    for path, text in texts:
        relative = _relative(path, root)
        if relative is None:
            continue
        lang = needles.language_of_file(relative)
        for shape, check_lang, name, rule, globs in checks:
            if not needles.paths_take(globs, relative):
                continue
            if shape == "regex":
                raise Fallback
            if lang is None or lang not in needles.languages(shape, check_lang):
                continue
            needle = needles.needle(shape, name, rule, lang)
            if needle is None or needle in text:
                raise Fallback


# -- the reminder (agent.pre_edit, for a file) -------------------------------------------------------


def _resolve(path: str, cwd: str | None) -> str | None:
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        if not cwd:
            return None
        path = os.path.join(os.path.expanduser(cwd), path)
    return os.path.realpath(path)


def _word(ch: str) -> bool:
    r"""re's \w in a str pattern: a letter, digit or numeral of any script, or '_'."""
    return ch.isalnum() or ch == "_"


def _in_path(ch: str) -> bool:
    r"""[\w./-]"""
    return ch.isalnum() or ch in "_./-"


def _names_file(statement: str, paths: tuple[str, ...], name: str) -> bool:
    r"""agent.pre_edit's test, the matches of re.finditer(r"(?<![\w./-])([\w./-]*)" + re.escape(name) +
    r"(?![\w-]|\.\w)", statement) found as re finds them (`re` and its `enum` are a tenth of this
    path's start): from each place no path character precedes, the longest run of them, then back
    to the last place in it where the name starts and is not followed by more of a name; the next
    search from the end of a match, else from the next place. True when a match has no folder before
    the name or one the file's path ends with."""
    size, at = len(statement), 0
    while at <= size:
        if at and _in_path(statement[at - 1]):
            at += 1
            continue
        run = at
        while run < size and _in_path(statement[run]):
            run += 1
        found = -1
        for start in range(run, at - 1, -1):
            end = start + len(name)
            if statement.startswith(name, start) and not (
                    end < size and (_word(statement[end]) or statement[end] == "-"
                                    or (statement[end] == "." and end + 1 < size and _word(statement[end + 1])))):
                found = start
                break
        if found < 0:
            at += 1
            continue
        head = statement[at:found].lstrip("./")
        if not head or any(p.endswith("/" + head + name) for p in paths):
            return True
        at = found + len(name)
    return False


def _written(conn: sqlite3.Connection, item: Item, real: str) -> list[str]:
    """Store.edits_in_window of the item's turns, those to this file."""
    if not item.turn_ids:
        return []
    first, last = conn.execute(
        f"SELECT min(seq), max(seq) FROM turns WHERE session_id = ? AND id IN ({','.join('?' * len(item.turn_ids))})",
        [item.session_id, *item.turn_ids]).fetchone()
    if first is None:
        return []
    roles = conn.execute("SELECT seq, role FROM turns WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                         (item.session_id, first - WINDOW_TURNS, last + WINDOW_TURNS)).fetchall()
    start = max((seq for seq, role in roles if seq <= first and role == "user"), default=first - WINDOW_TURNS)
    end = min((seq - 1 for seq, role in roles if seq > last and role == "user"), default=last + WINDOW_TURNS)
    return [text for path, text in conn.execute(
        "SELECT e.path, e.text FROM turns t JOIN turn_edits e ON e.turn_id = t.id"
        " WHERE t.session_id = ? AND t.seq BETWEEN ? AND ? ORDER BY t.seq, e.n", (item.session_id, start, end))
        if _resolve(path, item.cwd) == real]


def _said_on(conn: sqlite3.Connection, item: Item) -> str:
    """agent.render.said_on: the first cited turn's day, else the day it was recorded."""
    for (ts,) in conn.execute("SELECT t.ts FROM json_each(?) j JOIN turns t ON t.id = j.value ORDER BY t.seq",
                              (dumps(item.turn_ids),)):
        if ts and _is_day(ts):
            return f"said {ts[:10]}"
    return f"recorded {time.strftime('%Y-%m-%d', time.gmtime(item.created_at))}"


MIN_DISTINCT = 8  # anchor.MIN_DISTINCT


def locate(content: str, written: str) -> tuple[int, int] | None:
    """anchor.locate, as (first line, last line): that module's dataclass loads inspect (7 ms)."""
    lines = [line.rstrip() for line in written.strip("\n").splitlines()]
    if not any(len(line.strip()) >= MIN_DISTINCT for line in lines) and len("".join(lines).strip()) < MIN_DISTINCT:
        return None
    doc = content.splitlines()
    core = "\n".join(lines)
    index = content.find(core) if core else -1
    if index >= 0:
        start = content.count("\n", 0, index)
        return start, start + core.count("\n")
    return _longest_run([line.strip() for line in lines], [line.strip() for line in doc])


def _longest_run(written: list[str], doc: list[str]) -> tuple[int, int] | None:
    where: dict[str, list[int]] = {}
    for number, line in enumerate(doc):
        if line:
            where.setdefault(line, []).append(number)
    best: tuple[int, int] | None = None  # (length, first doc line)
    for i, line in enumerate(written):
        if len(line) < MIN_DISTINCT:
            continue
        for j in where.get(line, []):
            k = 0
            while i + k < len(written) and j + k < len(doc) and written[i + k] == doc[j + k]:
                k += 1
            up = 0
            while i - up > 0 and j - up > 0 and written[i - up - 1] == doc[j - up - 1]:
                up += 1
            length = k + up
            if best is None or length > best[0]:
                best = (length, j - up)
    if best is None:
        return None
    return best[1], best[1] + best[0] - 1


def _lines_of(content: str | None, written: list[str]) -> str | None:
    if content is None:
        return None
    for text in written:
        span = locate(content, text)
        if span is not None:
            start, end = span
            return f"line {start + 1}" if start == end else f"lines {start + 1}-{end + 1}"
    return None


def _item_line(conn: sqlite3.Connection, item: Item, lines: str | None) -> str | None:
    """agent.render.item_line, from the line the writer rendered."""
    if item.line is None:
        raise Fallback  # no line rendered with this redactor: the full path redacts it itself
    statement, session, shown_id = item.line
    if not statement:
        return None
    if item.session_id.startswith(TEAM_SESSION_PREFIX) or (
            item.record is not None and item.state == "accepted" and not item.accepted_here):
        raise Fallback  # a decision record's line (its path, its author's claim): the full path renders it
    agent = "".join(ch for ch in (item.agent or "an agent's") if ch.isalnum() or ch in "-_'")[:40]
    notes = [f"{_said_on(conn, item)} in a {agent} session ({session})"]
    if item.state == "accepted" and item.accepted_here:
        notes.append("accepted by the developer")
    if lines:
        notes.append(lines)  # "lines 4-9": nothing a built-in detector takes (custom patterns: the full path)
    return f"- {item.kind.capitalize()} {shown_id}, {', '.join(notes)}: {dumps(statement, ensure_ascii=False)}"




def plain_path(path: str) -> str:
    """The path quoted as the full path shows it (render.quoted: redacted, one line, no markup), for a
    path that is plainly only a path: ASCII letters, digits and `_./-`, no run of 11 or more letters
    and digits (a token's body); Fallback for any other, which the full path redacts."""
    if not 0 < len(path) <= 400 or not _PLAIN.issuperset(path):
        raise Fallback
    run = 0
    for ch in path:
        run = run + 1 if ch in _ASCII_ALNUM else 0
        if run >= 11:
            raise Fallback
    return dumps(path)


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(FILE_BYTES + 1)
    except OSError:
        return None
    return None if len(raw) > FILE_BYTES else raw.decode("utf-8", "replace")


def file_reminder(conn: sqlite3.Connection, cwds: list[str], path: str, folder: str, ledger: Shown,
                  redaction: str, tools: str, limit: int) -> str | None:
    real = os.path.realpath(path)
    paths = (path,) if real == path else (path, real)
    base = os.path.basename(real)
    name = base if len(base) >= 5 and any(ch.isalpha() for ch in base) else None
    written: dict[str, list[str]] = {}

    def wrote(item: Item) -> list[str]:
        if item.id not in written:
            written[item.id] = _written(conn, item, real)
        return written[item.id]

    def named_by(item: Item) -> bool:
        if any(_resolve(f, item.cwd) == real for f in item.files):
            return True
        return bool(name) and _names_file(item.statement, paths, name or "")

    page = [Item(row, redaction) for row in candidates(conn, cwds, paths, name)]
    current = [item for item in page if named_by(item) or (not item.files and wrote(item))]
    before = ledger.get(real, {})
    fresh = [item for item in current if before.get(item.id) != item.digest()]
    still = [item for item in current if before.get(item.id) == item.digest()]
    current_ids = {item.id for item in current}
    if any(item_id not in current_ids for item_id in before):
        raise Fallback  # shown before and no longer current: the full path says why it no longer applies
    if not fresh and not still:
        ledger.pop(real, None)
        return None
    inside = path.startswith(folder.rstrip(os.sep) + os.sep)
    relative = plain_path(os.path.relpath(path, folder) if inside else path)
    content = _read_text(path) if fresh else None
    head = (f"{AGENT_CONTEXT_MARK} recorded in earlier coding sessions of this workspace about"
            f" {relative}, the file about to be edited (accepted first, then newest first):")
    out = [head]
    used = len(head) + 1
    tail_room = 240
    shown = {i.id: i.digest() for i in still}
    left = 0
    for item in fresh:
        line = _item_line(conn, item, _lines_of(content, wrote(item)) if content is not None else None)
        if line is None:
            continue
        if used + len(line) + 1 + tail_room > limit:
            left += 1
            continue
        out.append(line)
        used += len(line) + 1
        shown[item.id] = item.digest()
    if still:
        ids = ", ".join(f"{i.kind} {i.id}" for i in still[:12])
        out.append(f"Still applies, shown earlier in this session: {ids}.")
    if left:
        out.append(f"{left} more about this file {'was' if left == 1 else 'were'} left out; the MCP tool "
                   f"{tools}list_decisions with file {relative} lists them.")
    ledger[real] = shown
    if len(out) == 1:
        return None
    return "\n".join(out)[:limit]


# -- the hook ----------------------------------------------------------------------------------------


def _budget(environ: Mapping[str, str]) -> float:
    """agent.hooks.pre_edit_seconds; a value it refuses is the full hook's to say."""
    raw = environ.get(PRE_EDIT_SECONDS_ENV)
    if raw is None:
        return PRE_EDIT_SECONDS
    seconds = float(raw)  # ValueError: the full path answers, and says why
    if not 0 < seconds < float("inf"):
        raise Fallback
    return seconds


def answer(raw: bytes, environ: Mapping[str, str], started: float) -> str | None:
    """The hook's stdout for this input ("" for nothing), or None: the full path answers it."""
    try:
        budget = _budget(environ)
        return _answer(raw, environ, started + budget, budget)
    except OverBudget:
        return ""
    except Exception:  # Fallback, and anything unforeseen: the full path answers, or records why not
        return None


def _answer(raw: bytes, environ: Mapping[str, str], deadline: float, budget: float) -> str:
    if len(raw) > STDIN_BYTES:
        raise Fallback
    data = loads(raw)
    if not isinstance(data, dict):
        raise Fallback
    settings = hook_settings.load(environ)
    if settings is None:
        raise Fallback
    if not settings.get("agent_reminders"):
        return ""
    if settings.get("custom_patterns") is not False:
        raise Fallback  # the user's own patterns may take anything (a path, "lines 4-9"): the full path
    paths, cwd, session_id, texts_written = edit_target(data)
    db = settings["db"]
    tools = settings["tools"]["plugin" if environ.get("CLAUDE_PLUGIN_ROOT") else "server"]
    conn = open_database(db, settings, deadline)
    try:
        no_check_can_match(conn, cwd, texts_written, settings.get("decisions_dir"))
        folder = os.path.abspath(os.path.expanduser(cwd))
        cwds = held_cwds(conn, folder)
        ledger = read_ledger(db, session_id)
        texts: list[str] = []
        room = REMINDER_CHARS
        for path in paths:
            text = file_reminder(conn, cwds, path, folder, ledger, settings["redaction"], tools, room)
            if text:
                texts.append(text)
                room -= len(text) + 1
            if room < 300:
                break
    except sqlite3.OperationalError:
        if time.monotonic() > deadline:
            _over_budget(db, session_id, budget)
        raise
    finally:
        conn.close()
    if time.monotonic() > deadline:
        _over_budget(db, session_id, budget)
    if not texts:
        return ""
    write_ledger(db, session_id, ledger)
    return dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "\n".join(texts)}},
                 ensure_ascii=False)


def _over_budget(db: str, session_id: str | None, budget: float) -> None:
    from pathlib import Path

    from checkpoint.agent.problems import record

    record(Path(db), "hook pre-edit",
           f"the hook pre-edit took over {budget:g} s and was dropped (the agent went on without it)", session_id)
    raise OverBudget


def main(stdin: BinaryIO, stdout: TextIO, environ: Mapping[str, str], exit_now: bool = False) -> int:
    """The pre-edit hook: the narrow path, else the full one with the same input; always 0. `exit_now`
    (the process's own entry): once the narrow path has answered and its output is flushed, the
    process ends without the interpreter's teardown (module cleanup and collection: 4 ms of a 30 ms
    call); the database and the ledger are closed by then, and the full hook always exits normally."""
    started = time.monotonic()
    try:
        raw = stdin.read(STDIN_BYTES + 1)
        out = answer(raw, environ, started)
    except Exception:
        return 0
    if out is None:
        import io

        from checkpoint.agent.hooks import run

        return run(["pre-edit"], io.BytesIO(raw), stdout)
    if out:
        stdout.write(out)
        stdout.flush()
    if exit_now:
        import sys

        sys.stderr.flush()
        os._exit(0)
    return 0
