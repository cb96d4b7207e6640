"""Items as diagnostics on the files they concern, and hover on them.

An item concerns the files its session changed around it (the item's `files`). It is placed on the
lines the session wrote to that file, when they can still be found in the file's current text
(re-anchored whenever the document is opened, changed or saved), else on line 0, saying so when
those lines were deleted or rewritten since the session. Its relatedInformation points at the
transcript lines it came from; its code is the item id, so code actions and the items panel can
name it. A superseded item is tagged Deprecated (struck through) and names the item that replaced it.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from checkpoint import anchor
from checkpoint.extract.held import item_review_reason
from checkpoint.model import Citation, FileEdit, ItemRecord, ItemState, plain_text
from checkpoint.server.coalesce import Coalescer
from checkpoint.server.events import ItemsChanged
from checkpoint.server.feature import Feature
from checkpoint.server.features.diagnostics.file_reads import Budget, Content, FileReads, Unread
from checkpoint.server.folders import Folders, file_uri, item_path, path_of
from checkpoint.server.protocol import DIAGNOSTIC_SOURCE
from checkpoint.store import Store

if TYPE_CHECKING:
    from checkpoint import config
    from checkpoint.server.server import CheckpointServer
    from checkpoint.server.settings import DiagnosticsSettings, ServerSettings

RECHECK_DELAY = 0.15  # typing in a document re-anchors once it pauses this long
_KIND_TITLE = {"decision": "Decision", "constraint": "Constraint", "question": "Open question"}
# An item held for review (checkpoint.extract.held), not accepted yet: said on its diagnostic, whose
# code actions offer the Accept that releases it to agents.
HELD_MARK = " [held for review: no agent is shown it until you accept it]"


@dataclass(frozen=True)
class Placement:
    """One item on one file, with the texts the session wrote to that file around the item."""

    item: ItemRecord
    path: str
    written: tuple[str, ...]
    newer: ItemRecord | None = None  # the item that superseded this one, when it is still shown


def placements(store: Store, folders: Folders) -> dict[str, list[Placement]]:
    """Every item that is not dismissed, per URI of a workspace file it concerns."""
    out: dict[str, list[Placement]] = {}
    items = store.items()
    by_id = {i.id: i for i in items}
    for item in items:
        edits: list[FileEdit] | None = None
        seen: set[str] = set()
        for path in item.files:
            real = item_path(path, item.cwd)
            uri = folders.uri_for(real) if real else None
            if uri is None or uri in seen:  # outside the workspace, or the same file spelled again
                continue
            seen.add(uri)
            if edits is None:
                edits = store.edits_in_window(item.session_id, item.turn_ids)
            written = tuple(e.text for e in edits if item_path(e.path, item.cwd) == real)
            newer = by_id.get(item.superseded_by) if item.superseded_by else None
            out.setdefault(uri, []).append(Placement(item, path, written, newer))
    return out


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


STALE = "the code this decision was about has changed since the session"


def located(content: str | None, written: tuple[str, ...]) -> types.Range | None:
    """The lines of `content` holding one of the texts the session wrote; None: none is there."""
    if content is not None:
        for text in written:
            span = anchor.locate(content, text)
            if span is not None:
                lines = content.splitlines()
                last = lines[span.end] if span.end < len(lines) else ""
                return types.Range(types.Position(span.start, 0), types.Position(span.end, _utf16_len(last)))
    return None


def place(content: str | None, written: tuple[str, ...]) -> types.Range:
    return located(content, written) or types.Range(types.Position(0, 0), types.Position(0, 0))


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
            message=f"{session_label(item)}, turn {src.turn_id}" + (f" at {src.timestamp}" if src.timestamp else ""),
        )
        for src in item.sources
    ]
    unread = content if isinstance(content, Unread) else None
    text = content if isinstance(content, str) else None
    span = located(text, placement.written)
    message = f"{_KIND_TITLE.get(item.kind, item.kind.value)}: {item.statement}"
    data: dict[str, object] = {"item_id": item.id, "session_id": item.session_id, "kind": item.kind.value}
    if unread is not None:
        message += f" ({unread.reason})"  # on line 0: where it was written could not be looked for
        data["unread"] = unread.reason
    elif span is None and placement.written and text is not None:
        message += f" ({STALE})"  # the lines it was anchored to were deleted or rewritten: not silently line 0
        data["stale"] = True
    if item.superseded_by:
        message += f" [superseded by {newer_label(placement)}]"
        data["superseded_by"] = item.superseded_by
    if item.held_back:
        message += HELD_MARK
        data["held"] = True
    return types.Diagnostic(
        range=span or types.Range(types.Position(0, 0), types.Position(0, 0)),
        message=message,
        tags=[types.DiagnosticTag.Deprecated] if item.superseded_by else None,
        severity=severity,
        code=item.id,
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


_MD_INLINE = re.compile(r"([\\`*_\[\]<>!|~&#])")
_MD_LINE_START = re.compile(r"^(\s*)(?:([-+=])|(\d+)([.)]))", re.MULTILINE)


def md_text(value: object) -> str:
    """Text from a transcript or a model, shown as itself in Markdown: no emphasis, link, image,
    HTML, heading or list can come out of it (and no control character)."""
    text = _MD_INLINE.sub(r"\\\1", plain_text(str(value)))
    return _MD_LINE_START.sub(
        lambda m: m.group(1) + ("\\" + m.group(2) if m.group(2) else m.group(3) + "\\" + m.group(4)), text
    )


def hover_text(item: ItemRecord, newer: str | None = None) -> str:
    kind = _KIND_TITLE.get(item.kind, item.kind.value)
    parts = [f"**Checkpoint · {md_text(kind)}**", "", md_text(item.statement)]
    if item.superseded_by:
        parts += ["", f"*Superseded by:* {md_text(newer or item.superseded_by)}"]
    if item.rationale:
        parts += ["", f"*Why:* {md_text(item.rationale)}"]
    if item.held_back:
        why = item_review_reason(item.statement, item.rationale) or "it reads as an instruction to an agent"
        parts += ["", f"*Held for review:* {md_text(why)}; no agent is shown it until you accept it"]
    sources = item.sources
    when = next((s.timestamp for s in sources if s.timestamp), None)
    parts += ["", f"*Session:* {md_text(session_label(item))}" + (f" · *when:* {md_text(when)}" if when else "")]
    # An item that cited no turn points at its chunk's turns: said, so that no one reads them as its lines.
    origin = "*From its chunk (it cited no turn):*" if item.cited is Citation.CHUNK else "*From:*"
    for src in sources[:3]:
        where = md_text(f"{os.path.basename(src.path)}:{src.line}")
        parts.append(f"{origin} [{where}](<{file_uri(src.path)}#L{src.line}>)")
    parts.append(f"*Item:* {md_text(item.id)} · {md_text(item.state.value)} · {md_text(item.extractor)}")
    if item.record is not None and item.state is ItemState.ACCEPTED and not item.accepted_here:
        # a decision record's status is its author's claim, not your acceptance (issue 37)
        who = md_text(item.record_by) if item.record_by else "its author"
        parts.append(f"*Status:* accepted by {who} in the repository's record, not by you")
    return "\n".join(parts)


class Diagnostics(Feature):
    """Depends on no other feature; recomputes whenever an `ItemsChanged` event says to."""

    def __init__(self, server: CheckpointServer) -> None:
        super().__init__(server)
        self.by_uri: dict[str, list[Placement]] = {}
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.reads = FileReads()
        self._refresher = Coalescer(self._refresh, server.run_task, "diagnostics", server.stopping.is_set)
        self._rechecks: dict[str, asyncio.TimerHandle] = {}
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
            return
        self.by_uri = await self.server.read_worker.call(placements, self.server.folders)
        texts = self._open_texts()
        fresh = await asyncio.to_thread(diagnose_all, self.by_uri, texts, settings, self.reads)
        self._publish_all(fresh)

    def _open_texts(self) -> dict[str, str]:
        return {uri: doc.source for uri, doc in self.server.workspace.text_documents.items()}

    def _publish_all(self, fresh: dict[str, list[types.Diagnostic]]) -> None:
        for uri in set(self.published) | set(fresh):
            self._publish(uri, fresh.get(uri, []))

    def _publish(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
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
        pending = self._rechecks.pop(uri, None)
        if pending is not None:
            pending.cancel()
        loop = asyncio.get_running_loop()
        self._rechecks[uri] = loop.call_later(RECHECK_DELAY, self._recheck, uri)

    def _recheck(self, uri: str) -> None:
        self._rechecks.pop(uri, None)
        group = self.by_uri.get(uri)
        if not group or not self.server.daemon_settings.diagnostics.enabled:
            return
        doc = self.server.workspace.text_documents.get(uri)
        content: Content = doc.source if doc is not None else self.reads.read(path_of(uri) or "")
        settings = self.server.daemon_settings.diagnostics
        fresh = [d for p in group if (d := diagnostic(p, content, settings)) is not None]
        self._publish(uri, fresh)

    # -- hover ------------------------------------------------------------------------------------

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        line = params.position.line
        hits = [d for d in self.published.get(uri, []) if d.range.start.line <= line <= d.range.end.line]
        if not hits:
            return None
        placed = {p.item.id: p for p in self.by_uri.get(uri, [])}
        texts = [hover_text(placed[str(d.code)].item, newer_label(placed[str(d.code)]))
                 for d in hits if str(d.code) in placed]
        if not texts:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(texts)),
            range=hits[0].range,
        )

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
        for handle in self._rechecks.values():
            handle.cancel()
        self._rechecks.clear()
