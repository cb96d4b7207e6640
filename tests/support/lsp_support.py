"""Driving `checkpoint serve` as an editor would, for the end-to-end tests and the daemon benchmark.

`Transcript` writes Claude Code records (the real on-disk shape, as tests/support/synth.py does) line by
line, so a test can append turns, or half a line, while the daemon watches. `Daemon` starts the real
server process over stdio with an explicit environment (HOME, CHECKPOINT_DB, CHECKPOINT_SOURCES,
CHECKPOINT_EXTRACTOR) and records what it says: every `checkpoint/status` with its arrival time,
diagnostics per URI, progress, shown and logged messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cattrs import Converter
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from checkpoint.server.protocol import (
    CHECKPOINT_ITEMS,
    CHECKPOINT_SESSIONS,
    CHECKPOINT_STATUS,
    CHECKPOINT_WORKSPACE_SESSIONS,
)
from checkpoint.server.requests.items import plain  # custom notifications arrive as namedtuples too
from tests.support.status_deltas import SessionMirror

SERVER = [sys.executable, "-m", "checkpoint", "serve"]


# -- transcripts ------------------------------------------------------------------------------------


def slug(cwd: Path) -> str:
    """The project directory Claude Code names after the launch directory."""
    return re.sub(r"[^a-zA-Z0-9]", "-", str(cwd))


class Transcript:
    """One Claude Code session file under `root`, launched in `cwd`."""

    def __init__(self, root: Path, cwd: Path, session_id: str | None = None) -> None:
        self.session_id = session_id or str(uuid.uuid4())
        self.cwd = cwd
        self.path = root / slug(cwd) / f"{self.session_id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.parent: str | None = None
        self.n = 0
        self.turns = 0  # turns the reader makes of what was written (one per content block / result)

    def _env(self) -> dict[str, Any]:
        self.n += 1
        return {"sessionId": self.session_id, "cwd": str(self.cwd), "version": "2.1.50", "isSidechain": False,
                "userType": "external", "timestamp": f"2026-01-05T10:{self.n // 60 % 60:02d}:{self.n % 60:02d}.000Z"}

    def _record(self, **fields: Any) -> dict[str, Any]:
        uid = str(uuid.uuid4())
        record = {**self._env(), "uuid": uid, "parentUuid": self.parent, **fields}
        self.parent = uid
        return record

    def user(self, text: str) -> list[dict[str, Any]]:
        self.turns += 1
        return [self._record(type="user", message={"role": "user", "content": text})]

    def assistant(self, text: str, edits: Sequence[tuple[Path, str, str]] = ()) -> list[dict[str, Any]]:
        """Text, then an Edit per (file, old, new) and its structured result, as Claude Code writes them."""
        msg_id = f"msg_{uuid.uuid4().hex[:16]}"
        records = [self._assistant_line(msg_id, {"type": "text", "text": text})]
        self.turns += 1
        for k, (path, old, new) in enumerate(edits):
            tool_id = f"toolu_{msg_id}_{k}"
            records.append(self._assistant_line(msg_id, {
                "type": "tool_use", "id": tool_id, "name": "Edit",
                "input": {"file_path": str(path), "old_string": old, "new_string": new},
            }))
            records.append(self._record(
                type="user",
                message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                                       "content": f"The file {path} has been updated."}]},
                toolUseResult={"filePath": str(path), "oldString": old, "newString": new,
                               "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                                                    "lines": [f"-{old}", f"+{new}"]}]},
            ))
            self.turns += 2
        return records

    def _assistant_line(self, msg_id: str, block: dict[str, Any]) -> dict[str, Any]:
        return self._record(type="assistant", requestId=f"req_{msg_id}", message={
            "id": msg_id, "type": "message", "role": "assistant", "model": "claude-x", "content": [block],
            "stop_reason": None})

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        with self.path.open("ab") as fh:
            fh.write(b"".join(dump(r) for r in records))

    def write_bytes(self, data: bytes) -> None:
        with self.path.open("ab") as fh:
            fh.write(data)


def dump(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


# -- the daemon under test --------------------------------------------------------------------------


def server_env(home: Path, db: Path, sources: Sequence[Path], **extra: str) -> dict[str, str]:
    """Built from scratch, never inherited: the daemon must not see the real HOME or an API key."""
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "CHECKPOINT_DB": str(db),
        "CHECKPOINT_SOURCES": os.pathsep.join(map(str, sources)),
        "CHECKPOINT_EXTRACTOR": "heuristic",
        # To test a checkout other than the installed one (a worktree), as tests/support/cli_run.py does.
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    if os.environ.get("PYTHONPATH"):  # to serve from a checkout other than the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env.update(extra)
    return {k: v for k, v in env.items() if v != ""}


@dataclass
class Stamped:
    at: float
    value: Any


@dataclass
class Record:
    """What the daemon sent. `statuses` are as a client shows them: each with the whole list of the
    workspace's sessions (`sessions`), rebuilt from the deltas; `wire` holds them as sent."""

    statuses: list[Stamped] = field(default_factory=list)
    wire: list[dict[str, Any]] = field(default_factory=list)
    mirror: SessionMirror = field(default_factory=SessionMirror)
    gaps: int = 0  # statuses whose delta did not follow on from the one before (never, in order)
    diagnostics: list[tuple[float, str, list[types.Diagnostic]]] = field(default_factory=list)
    lens_refreshes: int = 0  # workspace/codeLens/refresh requests the daemon sent
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class Daemon:
    """A `checkpoint serve` process and the test client talking to it."""

    def __init__(self, client: LanguageClient, record: Record) -> None:
        self.client = client
        self.record = record

    @classmethod
    async def start(
        cls, env: dict[str, str], folders: Sequence[Path], options: dict[str, Any] | None = None,
        capabilities: str = "visual-studio-code", command: Sequence[str] = SERVER,
    ) -> Daemon:
        record = Record()
        client = make_client(record)
        await client.start_io(*command, env=env)
        daemon = cls(client, record)
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities(capabilities),
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            root_uri=folders[0].as_uri() if folders else None,
            initialization_options=options,
        ))
        return daemon

    async def stop(self) -> None:
        """Shutdown and exit, then the process must end: one that does not is killed and said, so
        that a hang fails its test instead of stalling the suite."""
        try:
            await asyncio.wait_for(self.client.shutdown_session(), 10)
        finally:
            try:
                await asyncio.wait_for(self.client.stop(), 20)
            except TimeoutError:
                process = self.client._server
                if process is not None:
                    process.kill()
                raise AssertionError("the daemon did not end within 20 s of shutdown and exit") from None

    # -- what it said -----------------------------------------------------------------------------

    @property
    def statuses(self) -> list[dict[str, Any]]:
        return [s.value for s in self.record.statuses]

    @property
    def status(self) -> dict[str, Any] | None:
        return self.record.statuses[-1].value if self.record.statuses else None

    def sent(self, shown: dict[str, Any]) -> dict[str, Any]:
        """A status (one of `statuses`) as it came on the wire, its delta not yet applied."""
        return next(self.record.wire[n] for n, s in enumerate(self.record.statuses) if s.value is shown)

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
        """Until predicate() is truthy; re-checked on every message from the server."""
        deadline = time.monotonic() + timeout
        while True:
            self.record.changed.clear()
            result = predicate()
            if result:
                return result
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}; "
                                     f"last status: {json.dumps(self.status, indent=1)[:3000]}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.record.changed.wait(), min(left, 0.25))

    async def wait_status(self, predicate: Callable[[dict[str, Any]], Any], timeout: float = 10.0,
                          after: int = 0, what: str = "") -> dict[str, Any]:
        """The first status notification from index `after` on that satisfies predicate."""

        def find() -> dict[str, Any] | None:
            return next((s for s in self.statuses[after:] if predicate(s)), None)

        result: dict[str, Any] = await self.wait_for(find, timeout, what or "a status")
        return result

    async def wait_diagnostics(self, uri: str, predicate: Callable[[list[types.Diagnostic]], Any],
                               timeout: float = 10.0) -> list[types.Diagnostic]:
        def check() -> tuple[list[types.Diagnostic]] | None:
            diags = list(self.client.diagnostics.get(uri, []))
            return (diags,) if predicate(diags) else None  # a tuple: an empty list is an answer too

        result: tuple[list[types.Diagnostic]] = await self.wait_for(check, timeout, f"diagnostics on {uri}")
        return result[0]

    async def command(self, command: str, *arguments: Any) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=list(arguments))
        )

    async def items(self, **query: Any) -> list[dict[str, Any]]:
        result = await self.client.protocol.send_request_async(CHECKPOINT_ITEMS, query)
        items: list[dict[str, Any]] = plain(result)["items"]
        return items

    async def sessions(self, **query: Any) -> dict[str, Any]:
        result: dict[str, Any] = plain(await self.client.protocol.send_request_async(CHECKPOINT_SESSIONS, query))
        return result

    async def workspace_sessions(self) -> dict[str, Any]:
        """`checkpoint/workspaceSessions`: the workspace's sessions as the last status left them."""
        result: dict[str, Any] = plain(await self.client.protocol.send_request_async(CHECKPOINT_WORKSPACE_SESSIONS, {}))
        return result

    def shown(self) -> list[str]:
        return [m.message for m in self.client.messages]

    def logged(self) -> list[str]:
        return [m.message for m in self.client.log_messages]


def converter() -> Converter:
    """lsprotocol reads any code action that has a `command` as a bare Command, though a CodeAction's
    `command` is an object and a Command's a string (VS Code and Neovim tell them apart that way)."""
    c: Converter = default_converter()

    def code_action(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return c.structure(obj, types.Command)
        return c.structure(obj, types.CodeAction)

    c.register_structure_hook(types.Command | types.CodeAction, code_action)
    return c


def make_client(record: Record) -> LanguageClient:
    """pytest-lsp's test client, also stamping status notifications and diagnostics as they arrive."""
    client = LanguageClient(converter_factory=converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    default_publish = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]
    default_log = features[types.WINDOW_LOG_MESSAGE]
    default_show = features[types.WINDOW_SHOW_MESSAGE]
    default_progress = features[types.PROGRESS]

    def on_publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        default_publish(client, params)
        record.diagnostics.append((time.monotonic(), params.uri, list(params.diagnostics)))
        record.changed.set()

    def on_log(client: LanguageClient, params: types.LogMessageParams) -> None:
        default_log(client, params)
        record.changed.set()

    def on_show(client: LanguageClient, params: types.ShowMessageParams) -> None:
        default_show(client, params)
        record.changed.set()

    def on_progress(client: LanguageClient, params: types.ProgressParams) -> None:
        default_progress(client, params)
        record.changed.set()

    def on_status(params: Any) -> None:
        sent = plain(params)
        record.wire.append(sent)
        shown = sent
        if "workspace_sessions" in sent:  # a daemon from before issue 32 sends `sessions` whole
            if not record.mirror.apply(sent["workspace_sessions"]):
                record.gaps += 1
            shown = record.mirror.full(sent)
        record.statuses.append(Stamped(time.monotonic(), shown))
        record.changed.set()

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
    features[types.WINDOW_LOG_MESSAGE] = on_log
    features[types.WINDOW_SHOW_MESSAGE] = on_show
    features[types.PROGRESS] = on_progress
    register_lsp_features(client, features)
    client.feature(CHECKPOINT_STATUS)(on_status)

    def on_lens_refresh(params: Any = None) -> None:
        record.lens_refreshes += 1  # the editor would ask for the open files' lenses again
        record.changed.set()

    client.feature(types.WORKSPACE_CODE_LENS_REFRESH)(on_lens_refresh)

    return client


def session(status: dict[str, Any] | None, session_id: str) -> dict[str, Any] | None:
    if not status:
        return None
    return next((s for s in status["sessions"] if s["id"] == session_id), None)
