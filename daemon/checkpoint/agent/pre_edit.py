"""The pre-edit reminder: before the agent edits a file, the decisions and constraints recorded about
that file, at the moment they matter rather than only in a list read at session start.

An item concerns a file when a file it names is that file (a relative path against the item's session
folder, as the editor's diagnostics place it), when it names no file and its turns wrote that file
(turn_edits), or when its statement names the file by its path or a distinctive name. Current items only (superseded and
dismissed never), accepted first, then newest, each one line (agent.render) with the lines of the
file's current text it concerns when what its session wrote there can still be found (anchor.locate).

Not repeated: a per-session ledger (`<db>.agent/reminders/<session>.json`: per file, the items shown
with a digest of what was shown) keeps an item from being shown twice for a file unless it changed
since (its words, kind or state); one shown before that was since replaced or dismissed is said to no
longer apply, with what replaced it. A compaction or /clear forgets the ledger (agent.hooks): what was
shown may be gone from the agent's context. The whole text is at most REMINDER_CHARS characters."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from checkpoint.agent.reminder_ledger import Shown, read_ledger, write_ledger
from checkpoint.agent.reminder_ledger import forget_ledger as forget_ledger_at
from checkpoint.agent.render import field, item_line, quoted, statement_text
from checkpoint.agent.tool_input import EditTarget
from checkpoint.agent.workspace import workspace_folders
from checkpoint.anchor import locate
from checkpoint.model import AGENT_CONTEXT_MARK, ItemKind, ItemRecord, ItemState
from checkpoint.redact import Redactor
from checkpoint.store import Store

REMINDER_CHARS = 1_500
CANDIDATES = 40  # items read per edit; more never fit in REMINDER_CHARS
FILE_BYTES = 2 << 20  # a file larger than this is not read for lines
GONE_LOOKED_UP = 5  # items shown before and no longer current that are looked up to say why


def forget_ledger(db: Path, session_id: str) -> None:
    """Everything shown in this session may be shown again (its context was compacted or cleared)."""
    forget_ledger_at(str(db), session_id)


def spellings(path: str) -> tuple[str, ...]:
    real = os.path.realpath(path)
    return (path,) if real == path else (path, real)


def _resolve(path: str, cwd: str | None) -> str | None:
    """A path an item names, absolute (a relative one against its session's folder) and resolved."""
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        if not cwd:
            return None
        path = os.path.join(os.path.expanduser(cwd), path)
    return os.path.realpath(path)


def distinctive_name(path: str) -> str | None:
    """The file's name when it is one a statement can name without meaning something else
    ("app.py", "Makefile"; not "a" or "x.c")."""
    name = os.path.basename(path)
    return name if len(name) >= 5 and any(ch.isalpha() for ch in name) else None


def names_file(statement: str, paths: tuple[str, ...], name: str) -> bool:
    """Whether the statement names the file: its name as a word, alone or ending a path that ends
    one of `paths` (so "lib/app.py" does not name src/app.py)."""
    for match in re.finditer(r"(?<![\w./-])([\w./-]*)" + re.escape(name) + r"(?![\w-]|\.\w)", statement):
        head = match.group(1).lstrip("./")
        if not head or any(p.endswith("/" + head + name) for p in paths):
            return True
    return False


def named_by(item: ItemRecord, paths: tuple[str, ...], name: str | None) -> bool:
    """Whether the item names the file: a file it names resolves to it, or its statement names it."""
    real = paths[-1]
    if any(_resolve(f, item.cwd) == real for f in item.files):
        return True
    return bool(name) and names_file(item.statement, paths, name or "")


def digest(item: ItemRecord) -> str:
    """What was shown of an item: it is shown again when this changes."""
    return hashlib.blake2b(f"{item.kind.value}|{item.state.value}|{item.statement}".encode(),
                           digest_size=6).hexdigest()


# -- the reminder ----------------------------------------------------------------------------------


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(FILE_BYTES + 1)
    except OSError:
        return None
    return None if len(raw) > FILE_BYTES else raw.decode("utf-8", "replace")


def written_here(store: Store, item: ItemRecord, real: str) -> list[str]:
    """What the turns around the item (its answer's window) wrote to this file, in order."""
    return [e.text for e in store.edits_in_window(item.session_id, item.turn_ids) if _resolve(e.path, item.cwd) == real]


def lines_of(content: str | None, written: list[str]) -> str | None:
    """"lines 4-9": where in the file's current text what the item's session wrote to it is; None:
    not known (no edit of this file around the item, or its text is no longer there)."""
    if content is None:
        return None
    for text in written:
        span = locate(content, text)
        if span is not None:
            return f"line {span.start + 1}" if span.start == span.end else f"lines {span.start + 1}-{span.end + 1}"
    return None


def _gone_line(store: Store, item_id: str, redactor: Redactor) -> str | None:
    """For an item shown before that is no longer current: that it no longer applies, and why."""
    item = store.item(item_id)
    if item is None:
        return None
    kind = item.kind.value.capitalize()
    if item.superseded_by:
        newer = store.item(item.superseded_by)
        if newer is None or newer.held_back:  # a held replacement's words reach no agent before it is accepted
            what = field(item.superseded_by, redactor, 64)
        else:
            said = json.dumps(statement_text(newer, redactor, 200), ensure_ascii=False)
            what = f"{newer.kind.value} {field(newer.id, redactor, 64)}: {said}"
        return f"- {kind} {field(item.id, redactor, 64)}, shown earlier, no longer applies: replaced by {what}"
    if item.state is ItemState.DISMISSED:
        return f"- {kind} {field(item.id, redactor, 64)}, shown earlier, no longer applies: the developer dismissed it."
    return None


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def in_workspace(real: str, folder: str) -> bool:
    """Whether the file (resolved) is the workspace's: under its folder (as given or resolved), or in
    the repository the folder is in. A reminder is never given about a file elsewhere (/etc/passwd,
    ~/.bashrc), whatever an item or a teammate's record says of it."""
    if _under(real, folder) or _under(real, os.path.realpath(folder)):
        return True
    from checkpoint.repository import repository_of  # only for an edit outside the folder: rare

    repository = repository_of(folder)
    return repository is not None and _under(real, os.path.realpath(repository.root))


def reminder(store: Store, db: Path, target: EditTarget, redactor: Redactor, tools: str,
             limit: int = REMINDER_CHARS) -> str | None:
    """The reminder for an edit of `target`'s files, or None when nothing (new) concerns them; records
    what it shows in the session's ledger."""
    ledger = read_ledger(str(db), target.session_id)
    texts: list[str] = []
    room = limit
    for path in target.paths:
        text = _file_reminder(store, path, target.cwd, ledger, redactor, tools, room)
        if text:
            texts.append(text)
            room -= len(text) + 1
        if room < 300:
            break
    if not texts:
        return None
    write_ledger(str(db), target.session_id, ledger)
    return "\n".join(texts)


def _file_reminder(store: Store, path: str, cwd: str, ledger: Shown, redactor: Redactor, tools: str,
                   limit: int) -> str | None:
    paths = spellings(path)
    real = paths[-1]
    name = distinctive_name(real)
    folders = workspace_folders(cwd)
    if not in_workspace(real, folders[0]):
        return None
    # Held items (checkpoint.extract.held) only once the user accepted them, as at session start.
    page = store.workspace_items(folders, kinds=(ItemKind.DECISION, ItemKind.CONSTRAINT), concerning=paths,
                                 named=name, limit=CANDIDATES, counted=False, released_only=True, lasting_only=True)
    # The store's candidates checked exactly (its match on relative paths and names is loose); what
    # their turns wrote to the file is read only for those it decides on or that are shown.
    written: dict[str, list[str]] = {}

    def wrote(item: ItemRecord) -> list[str]:
        if item.id not in written:
            written[item.id] = written_here(store, item, real)
        return written[item.id]

    current = [item for item in page.items if named_by(item, paths, name) or (not item.files and wrote(item))]
    before = ledger.get(real, {})
    fresh = [item for item in current if before.get(item.id) != digest(item)]
    still = [item for item in current if before.get(item.id) == digest(item)]
    current_ids = {item.id for item in current}
    gone = [item_id for item_id in before if item_id not in current_ids][:GONE_LOOKED_UP]
    gone_lines = [line for item_id in gone if (line := _gone_line(store, item_id, redactor))]
    if not fresh and not still and not gone_lines:
        ledger.pop(real, None)
        return None

    inside = path.startswith(folders[0].rstrip(os.sep) + os.sep)
    relative = os.path.relpath(path, folders[0]) if inside else path
    content = _read_text(path) if fresh else None
    head = (f"{AGENT_CONTEXT_MARK} recorded in earlier coding sessions of this workspace about"
            f" {quoted(relative, redactor, 500)}, "
            "the file about to be edited (accepted first, then newest first):")
    out = [head]
    used = len(head) + 1
    tail_room = 240
    shown: dict[str, str] = {i.id: digest(i) for i in still}
    left = 0
    for item in fresh:
        line = item_line(item, redactor, lines=lines_of(content, wrote(item)) if content is not None else None)
        if line is None:
            continue
        if used + len(line) + 1 + tail_room > limit:
            left += 1
            continue
        out.append(line)
        used += len(line) + 1
        shown[item.id] = digest(item)
    for line in gone_lines:
        if used + len(line) + 1 + tail_room > limit:
            break
        out.append(line)
        used += len(line) + 1
    if still:
        ids = ", ".join(f"{i.kind.value} {i.id}" for i in still[:12])
        out.append(f"Still applies, shown earlier in this session: {ids}.")
    if left:
        out.append(f"{left} more about this file {'was' if left == 1 else 'were'} left out; the MCP tool "
                   f"{tools}list_decisions with file {quoted(relative, redactor, 500)} lists them.")
    ledger[real] = shown
    if len(out) == 1:
        return None
    return "\n".join(out)[:limit]
