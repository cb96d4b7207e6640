"""Items as diagnostics on the files they concern, and hover on them.

An item concerns the files its session changed around it (the item's `files`): one diagnostic per
item per file, on a few lines at most, never the whole file (anchor.mark): the lines the session
wrote there when a short run of them can still be found in the file's current text (re-anchored
whenever the document is opened, changed or saved), else the lines naming what the statement names,
else the file's first line of code at Information severity at most, saying so when the lines it
wrote were deleted or rewritten since the session. Its relatedInformation points at the transcript
lines it came from; its code is the item's kind, linking to the item's turn; its data names the
item, so code actions and the items panel can find it. A superseded item is tagged Deprecated
(struck through) and names the item that replaced it. The hover is one short card per item
(cards.py).

Where each file came from (the item's `file_sources`) says how it is anchored: a file its statement
names, on the lines naming what the statement names; a file its turn edited, on the lines written;
a file from neither (a file merged in from elsewhere) is not marked. Items stored before sources
were kept are anchored both ways.

The message is one short line (kind and statement, cut): an editor lists the messages of a line
above the hover's card, which carries the rest. With `marks: codelens`, an item that asks nothing of
the user is a CodeLens above its lines (lenses.py) instead of a diagnostic: diagnostics are kept for
what needs action (held items, code changed under a decision, and the checks' violations).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from checkpoint import anchor
from checkpoint.model import ORIGIN_SHARED, FileEdit, ItemRecord, plain_text
from checkpoint.server.coalesce import Coalescer, Debouncer
from checkpoint.server.events import ItemsChanged
from checkpoint.server.feature import Feature
from checkpoint.server.features.diagnostics.cards import AGENT_NAMES, cards, md_text  # noqa: F401  (md_text: the one escaper)
from checkpoint.server.features.diagnostics.file_reads import Budget, Content, FileReads, Unread
from checkpoint.server.features.diagnostics.lenses import code_lenses, needs_action
from checkpoint.server.folders import Folders, file_uri, item_path, path_of
from checkpoint.server.protocol import DIAGNOSTIC_SOURCE, EDITOR_OPEN_TURN, command_link
from checkpoint.store import Store

if TYPE_CHECKING:
    from checkpoint import config
    from checkpoint.server.server import CheckpointServer
    from checkpoint.server.settings import DiagnosticsSettings, ServerSettings

RECHECK_DELAY = 0.15  # typing in a document re-anchors once it pauses this long
_KIND_TITLE = {"decision": "Decision", "constraint": "Constraint", "question": "Open question"}
# An item held for review (checkpoint.extract.held), not accepted yet: said on its diagnostic, whose
# code actions and hover card offer the Accept that releases it to agents (the card says the rest).
HELD_MARK = " [held for review]"
MESSAGE_WIDTH = 90  # the statement in a diagnostic's message: one line of the editor's list
FROM_STATEMENT, FROM_EDIT = "statement", "edit"  # checkpoint.extract.item_files: "statement+edit" is both


@dataclass(frozen=True)
class Placement:
    """One item on one file, with the texts the session wrote to that file around the item."""

    item: ItemRecord
    path: str
    written: tuple[str, ...]
    newer: ItemRecord | None = None  # the item that superseded this one, when it is still shown
    source: str | None = None  # where the file came from (file_sources); None: not kept for this item


def placements(store: Store, folders: Folders) -> dict[str, list[Placement]]:
    """Every item that is not dismissed, per URI of a workspace file it concerns."""
    out: dict[str, list[Placement]] = {}
    items = store.items()
    by_id = {i.id: i for i in items}
    for item in items:
        edits: list[FileEdit] | None = None
        seen: set[str] = set()
        for path in item.files:
            source = item.file_sources.get(path)
            if item.file_sources and source is None:
                continue  # neither named by its statement nor edited by its turn: no mark
            real = item_path(path, item.cwd)
            uri = folders.uri_for(real) if real else None
            if uri is None or uri in seen:  # outside the workspace, or the same file spelled again
                continue
            seen.add(uri)
            if edits is None:
                edits = store.edits_in_window(item.session_id, item.turn_ids)
            # a file the statement names but its turn did not edit: anchored by its names alone
            written = () if source == FROM_STATEMENT else tuple(
                e.text for e in edits if item_path(e.path, item.cwd) == real)
            newer = by_id.get(item.superseded_by) if item.superseded_by else None
            out.setdefault(uri, []).append(Placement(item, path, written, newer, source))
    return out


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


STALE = "code changed since the session"


def mark_range(content: str, where: anchor.Mark) -> types.Range:
    """The lines of a mark; a one-line mark starts at the line's first character, not its indent."""
    lines = content.splitlines()
    last = lines[where.end] if where.end < len(lines) else ""
    first = lines[where.start] if where.start < len(lines) else ""
    indent = _utf16_len(first) - _utf16_len(first.lstrip()) if where.start == where.end else 0
    return types.Range(types.Position(where.start, indent), types.Position(where.end, _utf16_len(last)))


def newer_label(placement: Placement) -> str:
    item = placement.item
    if placement.newer is not None:
        return f"{_short(placement.newer.statement)} ({placement.newer.id})"
    return f"item {item.superseded_by}"


def _short(text: str, width: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _line(number: int) -> types.Range:
    return types.Range(types.Position(number, 0), types.Position(number, 0))


def said_line(item: ItemRecord) -> str:
    """Who said the item, where and when, in one line of plain words with a date (not a relative
    time: a published diagnostic is not re-sent as time passes)."""
    if item.origin == ORIGIN_SHARED:
        by = f" by {item.record_by}" if item.record_by else ""
        return f"shared{by} in {item.record or 'a decision record'}"
    roles = {s.role for s in item.sources if s.role}
    who = "you" if roles == {"user"} else "the agent" if roles == {"assistant"} else "someone"
    agent = AGENT_NAMES.get(item.agent or "", item.agent or "an agent")
    day = next((s.timestamp[:10] for s in item.sources if s.timestamp), None)
    said = f"said by {who} in {agent} session {_short(session_label(item), 60)}" + (f", {day}" if day else "")
    return plain_text(said)


def session_label(item: ItemRecord) -> str:
    title = item.session_title
    short = item.session_id[:8]
    return f"{title} ({short})" if title else f"session {short}"


def diagnostic(placement: Placement, content: Content, settings: DiagnosticsSettings) -> types.Diagnostic | None:
    item = placement.item
    severity = settings.severity_of(item.kind)
    if severity is None:
        return None
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=file_uri(src.path), range=_line(max(0, src.line - 1))),
            # one short line: where it was said (the turn's id and exact time are in the card and the turn view)
            message=(f"decision record {item.record}" if item.origin == ORIGIN_SHARED and item.record else
                     f"said in {_short(session_label(item), 60)}"
                     + (f", {src.timestamp[:10]}" if src.timestamp else "")),
        )
        for src in item.sources
    ]
    unread = content if isinstance(content, Unread) else None
    text = content if isinstance(content, str) else None
    where = anchor.mark(text, placement.written, item.statement) if text is not None else None
    message = f"{_KIND_TITLE.get(item.kind, item.kind.value)}: {_short(item.statement, MESSAGE_WIDTH)}"
    data: dict[str, object] = {"item_id": item.id, "session_id": item.session_id, "kind": item.kind.value,
                               "mark": where.how.value if where else anchor.How.LINE.value,
                               # who said it, where and when, for a client that shows no hover card
                               # (Neovim's diagnostic float: docs/install.md)
                               "said": said_line(item)}
    if where is None or where.how is anchor.How.LINE:
        # nothing in the file says where it belongs: one quiet mark on one line, never a warning
        severity = max(severity, types.DiagnosticSeverity.Information)
    if unread is not None:
        message += f" ({unread.reason})"  # on line 0: where it was written could not be looked for
        data["unread"] = unread.reason
    elif where is not None and placement.written and not where.found_written:
        message += f" ({STALE})"  # the lines it was anchored to were deleted or rewritten: said, not silent
        data["stale"] = True
    if item.superseded_by:
        newer = _short(placement.newer.statement, 40) if placement.newer else "a later item"
        message += f" [superseded by {newer}]"  # which item: the card says
        data["superseded_by"] = item.superseded_by
    if item.held_back:
        message += HELD_MARK
        data["held"] = True
    return types.Diagnostic(
        range=mark_range(text, where) if text is not None and where else types.Range(
            types.Position(0, 0), types.Position(0, 0)),
        message=message,
        tags=[types.DiagnosticTag.Deprecated] if item.superseded_by else None,
        severity=severity,
        code=item.kind.value,  # the kind, as a linter's rule code; it links to the item
        code_description=types.CodeDescription(href=command_link(EDITOR_OPEN_TURN, item.id)),
        source=DIAGNOSTIC_SOURCE,
        related_information=related or None,
        data=data,
    )


def diagnose_all(
    by_uri: dict[str, list[Placement]], open_texts: dict[str, str], settings: DiagnosticsSettings, reads: FileReads
) -> dict[str, list[types.Diagnostic]]:
    """Diagnostics per URI. Files neither open nor on disk get none: the editor cannot show them."""
    out: dict[str, list[types.Diagnostic]] = {}
    budget = Budget()
    for uri, group in by_uri.items():
        content: Content = open_texts.get(uri)
        if content is None:
            path = path_of(uri)
            content = reads.read(path, budget) if path else None
            if content is None:
                continue
        out[uri] = [d for p in group if (d := diagnostic(p, content, settings)) is not None]
    return out


class Diagnostics(Feature):
    """Depends on no other feature; recomputes whenever an `ItemsChanged` event says to."""

    def __init__(self, server: CheckpointServer) -> None:
        super().__init__(server)
        self.by_uri: dict[str, list[Placement]] = {}
        self.published: dict[str, list[types.Diagnostic]] = {}
        # with `marks: codelens`: the items' marks shown as CodeLens instead, per URI (lenses.py)
        self.lensed: dict[str, list[types.Diagnostic]] = {}
        # diagnostics another feature adds to a file's set (server/checks.py: lines that break a check)
        self.extra: dict[str, list[types.Diagnostic]] = {}
        self.reads = FileReads()
        self._refresher = Coalescer(self._refresh, server.run_task, "diagnostics", server.stopping.is_set)
        self._rechecks = Debouncer(RECHECK_DELAY, self._recheck)
        server.events.subscribe(ItemsChanged, lambda _: self.refresh())

    async def initialized(self) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Recompute from the store (items changed), coalesced."""
        self._refresher.request()

    async def _refresh(self) -> None:
        settings = self.server.daemon_settings.diagnostics
        if not settings.enabled:
            self.by_uri = {}
            self._publish_all({})
            self._set_lenses({})
            return
        self.by_uri = await self.server.read_worker.call(placements, self.server.folders)
        texts = self._open_texts()
        fresh = await asyncio.to_thread(diagnose_all, self.by_uri, texts, settings, self.reads)
        shown, lensed = self._split(fresh)
        self._publish_all(shown)
        self._set_lenses(lensed)

    def _split(self, fresh: dict[str, list[types.Diagnostic]]) -> tuple[
            dict[str, list[types.Diagnostic]], dict[str, list[types.Diagnostic]]]:
        """(published, lensed): with `marks: codelens`, what needs no action goes to the lenses."""
        if self.server.daemon_settings.diagnostics.marks != "codelens":
            return fresh, {}
        shown = {uri: [d for d in group if needs_action(d)] for uri, group in fresh.items()}
        lensed = {uri: kept for uri, group in fresh.items() if (kept := [d for d in group if not needs_action(d)])}
        return shown, lensed

    def _set_lenses(self, lensed: dict[str, list[types.Diagnostic]], uri: str | None = None) -> None:
        """Keep the lensed marks (of every file, or of `uri`) and ask the client to re-read its lenses
        when they changed (workspace/codeLens/refresh, where the client supports it)."""
        if uri is None:
            changed = lensed != self.lensed
            self.lensed = lensed
        else:
            changed = lensed.get(uri, []) != self.lensed.get(uri, [])
            if lensed.get(uri):
                self.lensed[uri] = lensed[uri]
            else:
                self.lensed.pop(uri, None)
        if changed and self.server.supports("workspace.code_lens.refresh_support"):
            self.server.workspace_code_lens_refresh(None)

    def _open_texts(self) -> dict[str, str]:
        return {uri: doc.source for uri, doc in self.server.workspace.text_documents.items()}

    def _publish_all(self, fresh: dict[str, list[types.Diagnostic]]) -> None:
        for uri in set(self.published) | set(fresh) | set(self.extra):
            self._publish(uri, fresh.get(uri, []))

    def set_extra(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
        """Another feature's diagnostics for a file, published with the items' (LSP keeps one set a file)."""
        if diagnostics:
            self.extra[uri] = diagnostics
        else:
            self.extra.pop(uri, None)
        own = [d for d in self.published.get(uri, []) if not str(d.code).startswith("check:")]
        self._publish(uri, own)

    def _publish(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
        diagnostics = [*diagnostics, *self.extra.get(uri, [])]
        old = self.published.get(uri)
        if old == diagnostics or (old is None and not diagnostics):
            return
        if diagnostics:
            self.published[uri] = diagnostics
        else:
            self.published.pop(uri, None)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )

    # -- documents --------------------------------------------------------------------------------

    def document_changed(self, uri: str) -> None:
        if uri not in self.by_uri:
            return
        self._rechecks.request(uri)

    def _recheck(self, uri: str) -> None:
        group = self.by_uri.get(uri)
        if not group or not self.server.daemon_settings.diagnostics.enabled:
            return
        doc = self.server.workspace.text_documents.get(uri)
        content: Content = doc.source if doc is not None else self.reads.read(path_of(uri) or "")
        settings = self.server.daemon_settings.diagnostics
        fresh = [d for p in group if (d := diagnostic(p, content, settings)) is not None]
        shown, lensed = self._split({uri: fresh})
        self._publish(uri, shown[uri])
        self._set_lenses(lensed, uri)

    # -- hover ------------------------------------------------------------------------------------

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        line = params.position.line
        marks = [*self.published.get(uri, []), *self.lensed.get(uri, [])]
        hits = [d for d in marks if d.range.start.line <= line <= d.range.end.line]
        if not hits:
            return None
        placed = {p.item.id: p for p in self.by_uri.get(uri, [])}
        ids = [i for d in hits if isinstance(d.data, dict) and (i := d.data.get("item_id")) in placed]
        if not ids:
            return None
        shown = [(placed[i].item, newer_label(placed[i]) if placed[i].item.superseded_by else None) for i in ids]
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=cards(shown)),
            range=hits[0].range,
        )

    # -- CodeLens ---------------------------------------------------------------------------------

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        """The lensed items of a file (`marks: codelens`), a short line above the lines each concerns."""
        uri = params.text_document.uri
        placed = {p.item.id: p.item for p in self.by_uri.get(uri, [])}
        marks = [(d.range, placed[i]) for d in self.lensed.get(uri, [])
                 if isinstance(d.data, dict) and (i := d.data.get("item_id")) in placed]
        return code_lenses(marks, time.time())

    def item(self, item_id: str) -> ItemRecord | None:
        for group in self.by_uri.values():
            for p in group:
                if p.item.id == item_id:
                    return p.item
        return None

    def settings_changed(self, engine: config.Settings, daemon: ServerSettings) -> None:
        self.refresh()

    def folders_changed(self) -> None:
        self.refresh()

    def shutdown(self) -> None:
        self._rechecks.cancel_all()
