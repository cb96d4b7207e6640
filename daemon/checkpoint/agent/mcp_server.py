"""`checkpoint mcp`: an MCP server over stdio (the official SDK's MCPServer) whose read-only tools hand
an agent what Checkpoint captured, with where each item came from.

- search_decisions(query, kind?, file?, workspace?, limit?): items holding the query's words;
- list_decisions(workspace?, file?, kind?, include_dismissed?, limit?): a workspace's items, accepted
  first, newest first;
- get_decision(id): one item with an excerpt of every turn it came from;
- checkpoint_status(workspace?): captured / pending / failed turns of the workspace's sessions;
- check_file(path, workspace?): the file's lines that accepted decisions' checks find (checkpoint.checks).

A workspace is a folder and the folders below it; the default is the server's cwd (an agent starts
its MCP servers in the session's folder). Every answer is JSON text (checkpoint.agent.answers),
bounded, saying how many items it left out. The database is opened read-only for each call (a
call never waits on a writer for long, and a database created or migrated after the server started
is read as it is now). stdout carries protocol frames only: logs go to stderr.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import CallToolResult, JSONRPCError, JSONRPCRequest, JSONRPCResponse, TextContent, ToolAnnotations
from pydantic import ValidationError

from checkpoint import __version__, config, redact
from checkpoint.agent import answers, render
from checkpoint.agent.workspace import workspace_folders
from checkpoint.model import ItemKind, session_title
from checkpoint.store import Store, StoreUnavailable
from checkpoint.team.provenance import shared_by
from checkpoint.team.sync import refresh

log = logging.getLogger("checkpoint.mcp")

Kind = Literal["decision", "constraint", "question"]
MAX_LIMIT = 50
# Text only (structured_output=False): with an output schema the SDK also sends {"result": <the text>},
# which Claude Code hands the model instead of the text, JSON inside JSON.
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
BUSY_SECONDS = 5.0  # a tool call may wait this long for a writer's lock; a hook waits far less
# The records are read in before a call (a teammate's, pulled since): a writer holding the lock then
# costs the call this much at most, and the store is read as it is; the next call reads them in.
RECORDS_BUSY_SECONDS = 0.5
MAX_QUERY_CHARS = 1_000  # a search is a few words; more is not a query
ANSWER_WAIT_SECONDS = 30.0  # after stdin ends, how long the requests read before it may take to answer


class _NoDatabase(Exception):
    """The database does not exist yet: nothing was captured, which is an answer, not an error."""


def _limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise ToolError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
    return limit


def _kind(kind: Kind | None) -> ItemKind | None:
    return ItemKind(kind) if kind else None


def _scope(folders: list[str]) -> str:
    return ("every workspace" if folders == ["/"]
            else f"the sessions run in {folders[0]} and below it (workspace \"/\": every workspace)")


def _argument_error(tool: str, exc: ValidationError) -> str:
    """A bad argument in one line: which, what is expected, what was given (pydantic's own text names
    its model and a documentation link, which mean nothing to the agent)."""
    said = []
    for error in exc.errors(include_url=False):
        name = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            said.append(f"{name} is required")
            continue
        expected = error["msg"].removeprefix("Input should be ").removeprefix("input should be ")
        given = error.get("input")
        shown = answers.echo(given) if isinstance(given, str) else answers.echo(json.dumps(given, default=str))
        said.append(f"{name} must be {expected}, not {shown}")
    return f"{tool}: " + "; ".join(said)


class _PlainArgumentErrors:
    """Checks a tool call's arguments against the tool's own schema before the SDK does, and answers
    a bad one as a tool error in one line (_argument_error) instead of the SDK's pydantic report."""

    def __init__(self, find_tool: Callable[[str], Any]) -> None:
        self._find_tool = find_tool

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params if ctx.method == "tools/call" and isinstance(ctx.params, dict) else None
        name = params.get("name") if params else None
        tool = self._find_tool(name) if isinstance(name, str) else None
        if tool is not None and params is not None and isinstance(name, str):
            arguments = params.get("arguments") or {}
            try:
                tool.fn_metadata.arg_model.model_validate(arguments)
            except ValidationError as exc:
                return CallToolResult(content=[TextContent(type="text", text=_argument_error(name, exc))],
                                      is_error=True)
        return await call_next(ctx)


def _check_query(query: str) -> None:
    """A search's words: some, and few enough to be a search (a ToolError saying which, else nothing)."""
    if not query.split():
        raise ToolError("query is empty: give one or more words to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise ToolError(f"query is {len(query)} characters, over the {MAX_QUERY_CHARS} a search takes: "
                        "give the few words to search for")


def build_server(settings: config.Settings, cwd: str) -> MCPServer:
    redactor = redact.redactor(settings.redact, settings.redact_patterns)
    server = MCPServer(
        name="checkpoint",
        instructions=(
            "Checkpoint records the decisions, constraints and open questions of earlier coding-agent sessions, "
            "each with the transcript lines it came from. Search or list them before re-deciding something."
        ),
        log_level="WARNING",
        version=__version__,
        middleware=[_PlainArgumentErrors(lambda name: server._tool_manager.get_tool(name))],
    )

    def workspaces(workspace: str | None) -> list[str]:
        given = workspace or cwd
        if not os.path.isabs(os.path.expanduser(given)):
            raise ToolError(f"workspace must be an absolute folder path, not {answers.echo(given)}")
        folders = workspace_folders(given)
        with contextlib.suppress(Exception):  # the store as it is, when the records cannot be read in now
            refresh(settings.db, folders, settings.decisions_dir, busy_seconds=RECORDS_BUSY_SECONDS)
        return folders

    @contextmanager
    def reading() -> Iterator[Store]:
        if not settings.db.is_file():
            raise _NoDatabase
        try:
            store = Store.read_only(settings.db, busy_seconds=BUSY_SECONDS)
        except StoreUnavailable as exc:
            raise ToolError(str(exc)) from None
        try:
            yield store
        finally:
            store.close()

    def elsewhere(store: Store, folders: list[str], count: Callable[[list[str]], int], scope: str) -> dict[str, str]:
        """Nothing in this workspace: how many there are in the others, and how to ask for them."""
        if folders == ["/"]:
            return {}
        n = count(["/"])
        return {"hint": answers.elsewhere_hint(n, scope)} if n else {}

    def nothing_yet(tool: str) -> str:
        return answers.dumps(tool, {"items": [], "shown": 0, "total": 0, "left_out": 0,
                                    "note": f"no database at {settings.db} yet: nothing captured (`checkpoint now`)"})

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def search_decisions(query: str, kind: Kind | None = None, file: str | None = None,
                         workspace: str | None = None, limit: int = 20, include_one_off: bool = False) -> str:
        """Search the decisions, constraints and open questions recorded in earlier sessions for the
        words of `query` (every word must occur). Searches only the sessions run in this session's
        folder and below it unless `workspace` says otherwise (a folder, or "/" for every workspace);
        the CLI's `checkpoint search` searches every workspace. Optional: `kind`; `file`, a path the
        item names (or its last parts, e.g. "src/db.py"); `include_one_off`, orders given for one earlier
        task ("when you're done", "for now"), left out unless asked for. Answers JSON, compact: each item's id, kind,
        state, statement, when it was said and files (get_decision gives one with its provenance);
        `left_out` counts matches not shown."""
        _check_query(query)
        folders = workspaces(workspace)
        try:
            with reading() as store:
                page = store.search_items(query, workspaces=folders, kind=_kind(kind), file=file,
                                          limit=_limit(limit), released_only=True, lasting_only=not include_one_off)
                hint = {} if page.total else elsewhere(store, folders, lambda everywhere: store.search_items(
                    query, workspaces=everywhere, kind=_kind(kind), file=file, limit=1, released_only=True,
                    lasting_only=not include_one_off).total,
                    "match")
        except _NoDatabase:
            return nothing_yet("search_decisions")
        return answers.items_answer("search_decisions", page.items, page.total, redactor, query=query,
                                    workspace=folders[0], searched=_scope(folders), **hint)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def list_decisions(workspace: str | None = None, file: str | None = None, kind: Kind | None = None,
                       include_dismissed: bool = False, limit: int = 30, include_one_off: bool = False) -> str:
        """List the items recorded in sessions run in a workspace folder or below it (default: this
        session's folder), accepted first, then newest first; dismissed ones only when asked. Optional
        `file` (a path the item names, or its last parts) and `kind`; `workspace` "/" lists every
        workspace; `include_one_off`: also orders given for one earlier task. JSON as search_decisions."""
        folders = workspaces(workspace)
        try:
            with reading() as store:
                kinds = [k for k in [_kind(kind)] if k]
                page = store.workspace_items(
                    folders, kinds=kinds, file=file, include_dismissed=include_dismissed, limit=_limit(limit),
                    released_only=True, lasting_only=not include_one_off)
                hint = {} if page.total else elsewhere(store, folders, lambda everywhere: store.workspace_items(
                    everywhere, kinds=kinds, file=file, include_dismissed=include_dismissed, limit=1,
                    released_only=True, lasting_only=not include_one_off).total, "recorded")
        except _NoDatabase:
            return nothing_yet("list_decisions")
        return answers.items_answer("list_decisions", page.items, page.total, redactor, workspace=folders[0],
                                    listed=_scope(folders), **hint)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def get_decision(id: str) -> str:
        """One recorded item by its id (as the other tools and the session-start context give it), with
        an excerpt of every transcript turn it came from (redacted, each cut to about 1,200 characters)."""
        if not id.strip():
            raise ToolError("id is empty: search_decisions or list_decisions give the ids")
        ambiguous: list[str] = []
        try:
            with reading() as store:
                matches = store.item_ids(id.strip())  # the id, or a prefix that names one item (as the CLI takes)
                item = store.item(matches[0]) if len(matches) == 1 else None
                ambiguous = matches if len(matches) > 1 else []
                excerpts = store.item_excerpts(item.id, answers.EXCERPT_CHARS) if item else []
        except _NoDatabase:
            item = None
        if ambiguous:
            raise ToolError(f"{answers.echo(id)} begins {len(ambiguous)} item ids: give more of the id")
        if item is None:
            raise ToolError(f"no item with id {answers.echo(id)}; search_decisions or list_decisions give the ids")
        if item.held_back:
            # Held for the developer's review (checkpoint.extract.held): neither it nor its sources until accepted.
            raise ToolError(f"item {item.id} is held for the developer's review and is not shown until accepted")
        shown = excerpts[: answers.SOURCES_SHOWN * 2]
        # A shared item: the decision record it is in, and who shared it (its decision-makers, no e-mail).
        shared = {"shared": {"record": render.clean(item.record, redactor, 300),
                             "by": render.clean(shared_by(item), redactor, 200)}} if item.record else {}
        return answers.dumps("get_decision", {
            "item": answers.item_json(item, redactor) | shared,
            "excerpts": [answers.excerpt_json(e, redactor) for e in shown],
            "excerpts_left_out": len(excerpts) - len(shown),
        })

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def search_said(query: str, workspace: str | None = None, limit: int = 10) -> str:
        """Search what the developer and the agent said in earlier sessions (their own words, not tool
        output) for `query`: every word must occur; any language (a few characters of a Chinese or
        Japanese sentence find it). For what was said but never recorded as a decision. Searches this
        session's folder and below unless `workspace` says otherwise ("/" for every workspace). Answers
        JSON: each passage's session, agent, time, transcript path and line, and the text around the match."""
        _check_query(query)
        folders = workspaces(workspace)
        try:
            with reading() as store:
                result = store.search_said(query, workspaces=None if folders == ["/"] else folders,
                                           limit=_limit(limit))
        except _NoDatabase:
            return nothing_yet("search_said")
        hits = [dict(hit.as_json(), snippet=render.clean(hit.snippet, redactor, answers.EXCERPT_CHARS))
                for hit in result.hits]
        return answers.dumps("search_said", {"passages": hits, "shown": len(hits), "query": answers.echo(query),
                                             "searched": _scope(folders)})

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def check_file(path: str, workspace: str | None = None) -> str:
        """What in a file breaks which accepted decision: the file's lines that the checks of the
        workspace's accepted decisions and constraints find (a library they replaced still imported, a
        call they forbid), each with the item's id and statement. `path`: absolute, or relative to the
        workspace's top folder. Nothing is run: the checks are patterns."""
        from checkpoint.agent.edit_checks import file_findings

        folders = workspaces(workspace)
        try:
            try:
                with reading() as store:
                    found = file_findings(store, folders[0], path, settings.decisions_dir, redactor)
            except _NoDatabase:  # a clone with no captures: the shared records' checks still act
                found = file_findings(None, folders[0], path, settings.decisions_dir, redactor)
        except ValueError as exc:
            raise ToolError(render.clean(str(exc), redactor, 300) or "the file cannot be checked") from None
        return answers.dumps("check_file", found)

    @server.tool(annotations=READ_ONLY, structured_output=False)
    def checkpoint_status(workspace: str | None = None) -> str:
        """How much of the workspace's sessions Checkpoint has captured: turns captured, pending (not
        extracted yet) and failed, per session (newest first) and in total, with the causes of failures."""
        folders = workspaces(workspace)
        try:
            with reading() as store:
                sessions = store.workspace_sessions(folders)
                hint = {} if sessions else elsewhere(
                    store, folders, lambda everywhere: store.workspace_items(everywhere, limit=1).total, "recorded")
        except _NoDatabase:
            sessions, hint = [], {}
        shown = sessions[:MAX_LIMIT]
        total = {k: sum(getattr(s, k) for s in sessions) for k in ("turns", "captured", "pending", "failed")}
        return answers.dumps("checkpoint_status", {
            "workspace": folders[0],
            "total": {"sessions": len(sessions), **total},
            "sessions": [{"id": s.id, "agent": s.agent,
                          "title": render.clean(session_title(s.title, s.cwd), redactor, 120),
                          "cwd": s.cwd, "last_activity": s.last_ts, "turns": s.turns, "captured": s.captured,
                          "pending": s.pending, "failed": s.failed,
                          "failure_causes": [render.clean(c, redactor, 300) for c in s.causes[:3]]}
                         for s in shown],
            "sessions_left_out": len(sessions) - len(shown),
            **hint,
        })

    return server


def serve() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="checkpoint mcp: %(message)s")
    try:
        settings = config.load()
    except config.SettingsError as exc:
        print(f"checkpoint mcp: error in the settings: {exc}", file=sys.stderr)
        return 2
    anyio.run(_serve_stdio, build_server(settings, os.getcwd()))
    return 0


class _Pending:
    """The requests read and not answered yet: stdin may end right after a tool call (a client
    that sends its last call and closes), and the SDK would cancel that call when it sees the end.
    So the end of stdin is passed on only once they are answered (or ANSWER_WAIT_SECONDS passed)."""

    def __init__(self) -> None:
        self.ids: set[str | int] = set()
        self.none_left = anyio.Event()

    def read(self, item: object) -> None:
        if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCRequest):
            if not self.ids:
                self.none_left = anyio.Event()  # an anyio Event cannot be cleared
            self.ids.add(item.message.id)

    def sent(self, item: SessionMessage) -> None:
        if isinstance(item.message, JSONRPCResponse | JSONRPCError) and item.message.id is not None:
            self.ids.discard(item.message.id)
            if not self.ids:
                self.none_left.set()

    async def answered(self) -> None:
        if self.ids:
            with anyio.move_on_after(ANSWER_WAIT_SECONDS):
                await self.none_left.wait()


class _ReadUntilAnswered:
    """The SDK's stdin stream (its ReadStream protocol), whose end waits for _Pending."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except anyio.EndOfStream:
            await self._pending.answered()
            raise
        self._pending.read(item)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _ReadUntilAnswered:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _ReadUntilAnswered:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _WriteNoting:
    """The SDK's stdout stream, noting each answer sent in _Pending."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        self._pending.sent(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WriteNoting:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _serve_stdio(server: MCPServer) -> None:
    """MCPServer.run_stdio_async, with every request read answered before the server leaves."""
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async drives it the same way
    async with stdio_server() as (read_stream, write_stream):
        pending = _Pending()
        await lowlevel.run(_ReadUntilAnswered(read_stream, pending), _WriteNoting(write_stream, pending),
                           lowlevel.create_initialization_options())
