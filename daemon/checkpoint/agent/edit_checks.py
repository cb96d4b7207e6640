"""Before an edit: the accepted checks (checkpoint.checks) run over the text the edit would write (an
Edit's or MultiEdit's new strings, a Write's content, a patch's added lines), so that the agent hears
which decision a line it is about to write breaks, and where, before it writes it.

Only text the agent is about to write is checked (not the whole file: what is there already is
`checkpoint check`'s and the editor's), with the checks that act in the cwd's repository (this
machine's and the shared records'). Nothing here blocks an edit: a problem drops the finding and the
edit goes ahead."""

from __future__ import annotations

import json
import os

from checkpoint.agent.render import clean
from checkpoint.agent.tool_input import EditTarget
from checkpoint.model import AGENT_CONTEXT_MARK
from checkpoint.redact import Redactor
from checkpoint.store import Store

MAX_FINDINGS = 5
MAX_CHARS = 900


def _relative(path: str, root: str) -> str | None:
    real, top = os.path.realpath(path), os.path.realpath(root)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        return None
    return os.path.relpath(real, top).replace(os.sep, "/")


def edit_findings(store: Store, target: EditTarget, decisions_dir: str, redactor: Redactor) -> str | None:
    """What the edit would write that breaks an accepted decision, as context for the agent; None: nothing."""
    if not target.texts:
        return None
    from checkpoint.checks.active import gather
    from checkpoint.checks.engine import Engine
    from checkpoint.repository import repository_of

    gathered = gather(store, target.cwd, decisions_dir)
    if not gathered.active:
        return None
    repository = repository_of(target.cwd)
    root = repository.root if repository else target.cwd
    engine = Engine(gathered.active, lazy=True)
    checks = {c.id: c for c in gathered.active}
    lines: list[str] = []
    for path, text in target.texts:
        relative = _relative(path, root)
        if relative is None:
            continue
        for hit in engine.scan(relative, text)[:MAX_FINDINGS - len(lines)]:
            check = checks[hit.check_id]
            said = json.dumps(clean(check.statement, redactor, 200), ensure_ascii=False)
            written = clean(hit.text, redactor, 160)
            lines.append(f"- {relative}, line {hit.line} of the new text: `{written}` breaks {check.kind} "
                         f"{check.item_id} {said} (accepted; {check.check.describe()})")
        if len(lines) >= MAX_FINDINGS:
            break
    if not lines:
        return None
    head = (f"{AGENT_CONTEXT_MARK} this edit would write code that an accepted decision of this workspace rules "
            "out (Checkpoint's checks). Write it the decided way instead, or ask the developer whether the "
            "decision still holds:")
    return "\n".join([head, *lines])[:MAX_CHARS]


MAX_FILE_HITS = 50


def file_findings(store: Store | None, folder: str, path: str, decisions_dir: str,
                  redactor: Redactor) -> dict[str, object]:
    """For the MCP tool `check_file`: what in a file of the workspace breaks which accepted decision.
    Raises ValueError (a sentence) for a path outside the workspace or a file that cannot be read."""
    from checkpoint.checks.active import gather
    from checkpoint.checks.engine import MAX_FILE_BYTES, Engine
    from checkpoint.repository import repository_of

    repository = repository_of(folder)
    root = repository.root if repository else folder
    full = path if os.path.isabs(path) else os.path.join(root, path)
    relative = _relative(full, root)
    if relative is None:
        raise ValueError(f"{path} is not inside the workspace {root}")
    try:
        with open(full, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"{relative} cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(f"{relative} is over {MAX_FILE_BYTES} bytes: not checked")
    gathered = gather(store, folder, decisions_dir)
    engine = Engine(gathered.active, lazy=True)
    hits = engine.scan(relative, raw.decode("utf-8", "replace"))
    checks = {c.id: c for c in gathered.active}
    return {
        "file": relative,
        "checks": len(gathered.active),
        "hits": [{"line": h.line, "column": h.column, "text": clean(h.text, redactor, 200),
                  "item": h.item_id, "kind": checks[h.check_id].kind,
                  "statement": clean(checks[h.check_id].statement, redactor, 300),
                  "check": checks[h.check_id].check.describe(), "shared_in": checks[h.check_id].source}
                 for h in hits[:MAX_FILE_HITS]],
        "hits_left_out": max(0, len(hits) - MAX_FILE_HITS),
        "checks_that_cannot_act": len(engine.issues) + len(gathered.issues),
    }
