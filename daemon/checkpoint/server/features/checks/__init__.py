"""Decisions that check themselves, in the editor: a diagnostic on each line of an open file that an
accepted decision's check finds breaking it (checkpoint.checks), published beside the item
diagnostics (through Diagnostics.set_extra, which merges them into the one set a file has).

The acting checks are gathered (this machine's store and the workspace's decision records) when items
change and when folders change; an open file is checked when it opens and when typing pauses
(RECHECK_DELAY), in a thread, with the engine's bounds (file size, time per file): a large file costs
at most those, and nothing runs when no check acts."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from lsprotocol import types

from checkpoint.checks.active import gather
from checkpoint.checks.engine import ActiveCheck, Engine, Hit
from checkpoint.model import plain_text
from checkpoint.repository import repository_of
from checkpoint.server.coalesce import Coalescer, Debouncer
from checkpoint.server.events import ItemsChanged
from checkpoint.server.feature import Feature
from checkpoint.server.folders import path_of
from checkpoint.server.protocol import DIAGNOSTIC_SOURCE
from checkpoint.store import Store

if TYPE_CHECKING:
    from checkpoint import config
    from checkpoint.server.features.diagnostics import Diagnostics
    from checkpoint.server.server import CheckpointServer
    from checkpoint.server.settings import ServerSettings

RECHECK_DELAY = 0.3  # typing in a document is checked again once it pauses this long


def _gather_all(store: Store, folders: list[str], decisions_dir: str) -> list[tuple[str, list[ActiveCheck]]]:
    """(repository top folder, its acting checks) for each workspace folder's repository, each once."""
    out: dict[str, list[ActiveCheck]] = {}
    for folder in folders:
        repository = repository_of(folder)
        root = repository.root if repository else folder
        if root not in out:
            out[root] = gather(store, folder, decisions_dir).active
    return [(root, checks) for root, checks in out.items() if checks]


def diagnostic(hit: Hit, check: ActiveCheck) -> types.Diagnostic:
    severity = types.DiagnosticSeverity.Error if check.kind == "constraint" else types.DiagnosticSeverity.Warning
    shared = f" (shared in {check.source})" if check.source != "local" else ""
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=hit.line - 1, character=hit.column - 1),
                          end=types.Position(line=hit.end_line - 1, character=hit.end_column - 1)),
        message=plain_text(f"Breaks {check.kind} {check.item_id[:8]}{shared}: {check.statement}"),
        severity=severity, source=DIAGNOSTIC_SOURCE, code=f"{CHECK_CODE}{check.id}",
    )


class CheckDiagnostics(Feature):
    """Depends on Diagnostics (where its diagnostics are published); recomputes on `ItemsChanged`."""

    def __init__(self, server: CheckpointServer, diagnostics: Diagnostics) -> None:
        super().__init__(server)
        self.diagnostics = diagnostics
        self.engines: list[tuple[str, Engine]] = []  # (repository top folder, its engine)
        self._refresher = Coalescer(self._refresh, server.run_task, "checks", server.stopping.is_set)
        self._rechecks = Debouncer(RECHECK_DELAY, self._recheck)
        server.events.subscribe(ItemsChanged, lambda _: self._refresher.request())

    async def initialized(self) -> None:
        self._refresher.request()

    async def _refresh(self) -> None:
        decisions_dir = self.server.settings.decisions_dir
        found = await self.server.read_worker.call(_gather_all, self.server.folders.paths, decisions_dir)
        self.engines = [(root, await asyncio.to_thread(Engine, checks)) for root, checks in found]
        for uri in {*self.server.workspace.text_documents, *self.diagnostics.extra}:
            await self._check(uri)

    def _engine_for(self, path: str) -> tuple[str, Engine] | None:
        for root, engine in self.engines:
            if path.startswith(root.rstrip("/") + "/"):
                return path[len(root.rstrip("/")) + 1:], engine
        return None

    async def _check(self, uri: str) -> None:
        doc = self.server.workspace.text_documents.get(uri)
        path = path_of(uri)
        found = self._engine_for(path) if path and doc is not None else None
        if found is None or doc is None:
            self.diagnostics.set_extra(uri, [])
            return
        relative, engine = found
        hits = await asyncio.to_thread(engine.scan, relative, doc.source)
        checks = {c.id: c for c in engine.checks}
        self.diagnostics.set_extra(uri, [diagnostic(h, checks[h.check_id]) for h in hits])

    def document_changed(self, uri: str) -> None:
        if not self.engines and uri not in self.diagnostics.extra:
            return
        self._rechecks.request(uri)

    def _recheck(self, uri: str) -> None:
        self.server.run_task(self._check(uri), "check document")

    def settings_changed(self, engine: config.Settings, daemon: ServerSettings) -> None:
        self._refresher.request()

    def folders_changed(self) -> None:
        self._refresher.request()

    def shutdown(self) -> None:
        self._rechecks.cancel_all()


CHECK_CODE = "check:"
_COMMENT = {"python": "#", "javascript": "//", "typescript": "//", "tsx": "//", "go": "//", "rust": "//"}


def code_actions(params: types.CodeActionParams, published: list[types.Diagnostic],
                 lines: list[str]) -> list[types.CodeAction]:
    """"Dismiss for this line" on each check diagnostic in range: the suppression comment, in the
    language's style, at the end of the line (as linters' are); `lines`: the document's text."""
    from checkpoint.checks.engine import SUPPRESS
    from checkpoint.checks.model import language_of_file

    lang = language_of_file(path_of(params.text_document.uri) or "")
    mark = _COMMENT.get(lang or "")
    if mark is None:
        return []
    first, last = params.range.start.line, params.range.end.line
    wanted = [d for d in [*params.context.diagnostics, *published] if str(d.code).startswith(CHECK_CODE)
              and d.range.start.line <= last and first <= d.range.end.line]
    actions: list[types.CodeAction] = []
    done: set[int] = set()
    for diag in wanted:
        line = diag.range.start.line
        if line in done or line >= len(lines):
            continue
        done.add(line)
        end = types.Position(line=line, character=len(lines[line].encode("utf-16-le")) // 2)
        edit = types.TextEdit(range=types.Range(start=end, end=end), new_text=f"  {mark} {SUPPRESS}")
        actions.append(types.CodeAction(
            title="Checkpoint: Dismiss for this line", kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
            edit=types.WorkspaceEdit(changes={params.text_document.uri: [edit]})))
    return actions
