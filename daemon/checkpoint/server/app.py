"""The features built in dependency order, and one pygls handler per LSP method, each handing
over to them (esbonio's setup.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from checkpoint.model import ItemState
from checkpoint.server.events import CountsChanged, ItemsChanged
from checkpoint.server.features.checks import CheckDiagnostics
from checkpoint.server.features.checks import code_actions as check_actions
from checkpoint.server.features.diagnostics import Diagnostics
from checkpoint.server.features.extraction import ExtractionFeature
from checkpoint.server.features.extraction.extractor_slot import ExtractorSlot
from checkpoint.server.features.status import StatusFeature
from checkpoint.server.features.team import TeamRecords
from checkpoint.server.features.watcher import Watcher
from checkpoint.server.protocol import (
    CHECKPOINT_ITEMS,
    CHECKPOINT_SEARCH,
    CHECKPOINT_SESSIONS,
    CHECKPOINT_TRANSCRIPTS,
    CHECKPOINT_TURN,
    CHECKPOINT_WORKSPACE_SESSIONS,
    CMD_ACCEPT,
    CMD_DISMISS,
    CMD_FORGET,
    CMD_NOW,
    CMD_REOPEN,
    CMD_SHARE,
    CMD_SUPERSEDE,
    ForgetResult,
    ItemsResult,
    NowResult,
    SearchResponse,
    SessionsResult,
    ShareResult,
    SupersedeResult,
    TranscriptsResult,
    TriageResult,
    TurnResult,
    WorkspaceSessionsResult,
)
from checkpoint.server.requests import items, search, session_actions, sessions, supersessions, triage, turn_view
from checkpoint.server.server import CheckpointServer
from checkpoint.store import SupersessionRefused
from checkpoint.team.share import ShareRefused

log = logging.getLogger("checkpoint.server")
Q = TypeVar("Q")


@dataclass(frozen=True)
class Features:
    status: StatusFeature
    watcher: Watcher
    extraction: ExtractionFeature
    diagnostics: Diagnostics
    team: TeamRecords


def _parsed(parse_query: Callable[[Any], Q], params: Any) -> Q:
    """A query request's params, parsed; a QueryError is the client's (InvalidParams), with its message."""
    try:
        return parse_query(params)
    except items.QueryError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc


def build_features(server: CheckpointServer) -> Features:
    """Each feature after those it takes as parameters (a cycle cannot be written down); each
    subscribes to the events it needs as it is built. The hooks run in `server.features` order,
    as they always have: status first, so its first notification is scheduled before the first scan."""
    slot = ExtractorSlot()  # the watcher's scans and the extraction's runs size chunks alike
    watcher = Watcher(server, slot)
    diagnostics = Diagnostics(server)
    extraction = ExtractionFeature(server, watcher, slot)
    status = StatusFeature(server, extraction)
    team = TeamRecords(server)
    checks = CheckDiagnostics(server, diagnostics)
    server.features = [status, watcher, extraction, diagnostics, team, checks]
    return Features(status, watcher, extraction, diagnostics, team)


def create_server(flags: dict[str, Any] | None = None) -> CheckpointServer:
    server = CheckpointServer(flags)
    features = build_features(server)
    diagnostics = features.diagnostics

    # -- lifecycle --------------------------------------------------------------------------------

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        server.apply_options(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        await server.start()

    @server.feature(types.SHUTDOWN)
    def shutdown(params: Any = None) -> None:
        server.messages.log("shutting down")
        server.stop()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        options = params.settings
        if not options and server.supports("workspace.configuration"):
            # Pull model: the notification only says "something changed"; ask for our section.
            answer = await server.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="checkpoint")])
            )
            options = answer[0] if answer else None
        server.apply_options(options)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        server.update_folders()

    # -- documents --------------------------------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        _changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        _changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        _changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        _changed(params.text_document.uri)

    def _changed(uri: str) -> None:
        for feature in server.features:
            feature.document_changed(uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        return diagnostics.hover(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(params: types.CodeLensParams) -> list[types.CodeLens]:
        return diagnostics.code_lens(params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        items_here = {p.item.id: p.item for p in diagnostics.by_uri.get(uri, [])}
        doc = server.workspace.text_documents.get(uri)
        lines = doc.source.split("\n") if doc is not None else []
        return [*triage.code_actions(params, diagnostics.published.get(uri, []), items_here),
                *check_actions(params, diagnostics.published.get(uri, []), lines)]

    # -- commands and requests --------------------------------------------------------------------

    # Commands take the server as `ls`: pygls injects it (and so never takes it for an argument).
    @server.command(CMD_NOW)
    async def checkpoint_now(ls: CheckpointServer, *args: object) -> NowResult:
        session = None
        if args:
            first = args[0]
            if isinstance(first, str) and first:
                session = first
            elif isinstance(first, dict) and isinstance(first.get("session"), str):
                session = first["session"]
        return await features.extraction.now(session)

    async def _triage(args: tuple[object, ...], state: ItemState) -> TriageResult:
        try:
            item_id = triage.item_id_argument(args)
            result = await server.read_worker.call(triage.set_state, item_id, state)
        except ValueError as exc:
            raise JsonRpcInvalidParams(f"checkpoint.{'accept' if state is ItemState.ACCEPTED else 'dismiss'}: {exc}") \
                from exc
        server.messages.log(f"item {item_id}: {state.value}")
        await features.team.reflect([item_id])
        server.events.publish(ItemsChanged())
        server.events.publish(CountsChanged())
        return result

    @server.command(CMD_DISMISS)
    async def checkpoint_dismiss(ls: CheckpointServer, *args: object) -> TriageResult:
        return await _triage(args, ItemState.DISMISSED)

    @server.command(CMD_ACCEPT)
    async def checkpoint_accept(ls: CheckpointServer, *args: object) -> TriageResult:
        return await _triage(args, ItemState.ACCEPTED)

    @server.command(CMD_REOPEN)
    async def checkpoint_reopen(ls: CheckpointServer, *args: object) -> TriageResult:
        return await _triage(args, ItemState.NEW)

    @server.command(CMD_SUPERSEDE)
    async def checkpoint_supersede(ls: CheckpointServer, *args: object) -> SupersedeResult:
        try:
            parsed = supersessions.parse_arguments(args)
            result = await server.read_worker.call(supersessions.apply, parsed)
        except (ValueError, SupersessionRefused) as exc:
            raise JsonRpcInvalidParams(f"checkpoint.supersede: {exc}") from exc
        verb = "no longer superseded" if parsed.get("undo") else f"superseded by {parsed.get('new')}"
        server.messages.log(f"item {parsed['old']}: {verb}" + ("" if result["changed"] else " (no change)"))
        await features.team.reflect([i for i in (parsed["old"], parsed.get("new")) if i])
        server.events.publish(ItemsChanged())
        return result

    @server.command(CMD_SHARE)
    async def checkpoint_share(ls: CheckpointServer, *args: object) -> ShareResult:
        try:
            return await features.team.share(args)
        except (ValueError, ShareRefused) as exc:
            raise JsonRpcInvalidParams(f"checkpoint.share: {exc}") from exc

    @server.command(CMD_FORGET)
    async def checkpoint_forget(ls: CheckpointServer, *args: object) -> ForgetResult:
        try:
            session_id, undo = session_actions.parse_forget(args)
            result = await server.read_worker.call(session_actions.forget, session_id, undo)
        except ValueError as exc:
            raise JsonRpcInvalidParams(f"checkpoint.forget: {exc}") from exc
        server.messages.log(f"session {session_id}: " + ("read again at the next scan" if undo else "forgotten"))
        server.events.publish(ItemsChanged())
        server.events.publish(CountsChanged())
        return result

    @server.feature(CHECKPOINT_TRANSCRIPTS)
    async def checkpoint_transcripts(params: Any = None) -> TranscriptsResult:
        session_id = _parsed(session_actions.parse_session, params)
        try:
            return await server.read_worker.call(session_actions.transcripts_of, session_id)
        except items.QueryError as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc

    @server.feature(CHECKPOINT_ITEMS)
    async def checkpoint_items(params: Any = None) -> ItemsResult:
        query = _parsed(items.parse_query, params)
        rows = await server.read_worker.call(items.find_items, server.folders, query, server.scope)
        return {"items": rows}

    @server.feature(CHECKPOINT_TURN)
    async def checkpoint_turn(params: Any = None) -> TurnResult:
        item_id = _parsed(turn_view.parse_query, params)
        try:
            return await server.read_worker.call(turn_view.turn_of, server.folders, item_id)
        except items.QueryError as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc

    @server.feature(CHECKPOINT_SESSIONS)
    async def checkpoint_sessions(params: Any = None) -> SessionsResult:
        query = _parsed(sessions.parse_query, params)
        return await server.read_worker.call(sessions.list_sessions, server.folders, query, server.scope)

    @server.feature(CHECKPOINT_WORKSPACE_SESSIONS)
    def checkpoint_workspace_sessions(params: Any = None) -> WorkspaceSessionsResult:
        # Answered at once, on the loop that sends the statuses: the list as the statuses sent so far
        # left it (not the store's now), so a client that applies the statuses after this answer's
        # version ends where the daemon's statuses say.
        return features.status.sent_sessions.answer()

    @server.feature(CHECKPOINT_SEARCH)
    async def checkpoint_search(params: Any = None) -> SearchResponse:
        query = _parsed(search.parse_query, params)
        return await server.read_worker.call(search.search, server.folders, query, server.scope)

    return server
