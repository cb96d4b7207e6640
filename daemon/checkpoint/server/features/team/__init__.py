"""The repository's decision records, for the editor: read into the store for the workspace folders'
repositories when the daemon starts, when the folders or settings change, when a record changes on
disk (watched: a `git pull` that brings a teammate's record shows at once) and on every rescan; then
the items, the panel's Team group and the diagnostics refresh (ItemsChanged).

Also `checkpoint.share` (write or remove an item's record), and the records of shared items kept in
step with the user's triage and supersessions here (`reflect`)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from lsprotocol import types
from watchfiles import Change, awatch

from checkpoint.server.events import CountsChanged, ItemsChanged
from checkpoint.server.feature import Feature
from checkpoint.server.messages import once_key
from checkpoint.server.protocol import ShareResult
from checkpoint.server.server import CheckpointServer
from checkpoint.store import Store, SyncReport
from checkpoint.team import share as sharing
from checkpoint.team.sync import records_dir, repositories, sync_folders

DEBOUNCE_MS = 200


def parse_arguments(args: tuple[object, ...]) -> tuple[str, bool]:
    """[item_id] or [{"id": item_id, "undo"?: bool}]. ValueError says what is wrong."""
    first = args[0] if args else None
    if isinstance(first, str) and first:
        return first, False
    if isinstance(first, dict) and isinstance(first.get("id"), str) and first["id"]:
        undo = first.get("undo", False)
        if not isinstance(undo, bool):
            raise ValueError("`undo` must be true or false")
        return first["id"], undo
    raise ValueError("expected [item_id] or [{id, undo?}]")


def _folder_for(store: Store, item_id: str, folders: list[str]) -> str:
    """The workspace folder whose repository the item belongs to (its session's), else the first."""
    item = store.item(item_id)
    if item is None:
        raise sharing.ShareRefused(f"no item {item_id}")
    mine = {r.common_dir for r in repositories([item.cwd])} if item.cwd else set()
    for folder in folders:
        if {r.common_dir for r in repositories([folder])} & mine:
            return folder
    if not folders:
        raise sharing.ShareRefused("no workspace folder is open: a decision is shared through its repository")
    return folders[0]


class TeamRecords(Feature):
    def __init__(self, server: CheckpointServer) -> None:
        super().__init__(server)
        self._wake: asyncio.Event | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._watched: tuple[Path, ...] = ()

    async def initialized(self) -> None:
        self._wake = asyncio.Event()
        self.server.run_task(self._loop(), name="team records")
        self.request()

    def request(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def folders_changed(self) -> None:
        self.request()

    def settings_changed(self, engine: Any, daemon: Any) -> None:
        self.request()

    def shutdown(self) -> None:
        if self._watch_task is not None:
            self._watch_task.cancel()

    async def _loop(self) -> None:
        assert self._wake is not None
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.server.daemon_settings.rescan_seconds)
            self._wake.clear()
            self._ensure_watch()
            try:
                report: SyncReport = await self.server.read_worker.call(
                    sync_folders, self.server.folders.paths, self.server.settings.decisions_dir)
            except Exception as exc:
                self.server.messages.log_once(once_key("records", str(exc)),
                                              f"decision records: {exc}", types.MessageType.Warning)
                continue
            if report.changed:
                self.server.messages.log(f"decision records: {report.records} read, {report.changed} changes")
                self.server.events.publish(ItemsChanged())
                self.server.events.publish(CountsChanged())
            if self._ensure_watch():  # a folder on the way appeared or went meanwhile: read again, watched
                self.request()

    def _ensure_watch(self) -> bool:
        """Each repository's record folder and the folders on the way to it from its top, not below:
        a repository's own tree (.git, node_modules) is never watched; a folder on the way that
        appears or goes (a pull that brings the first record) wakes a sync, which watches anew.
        True: other folders are watched now."""
        folders: set[Path] = set()
        records: set[Path] = set()
        for repository in repositories(self.server.folders.paths):
            target = records_dir(repository, self.server.settings.decisions_dir)
            records.add(target)
            folders |= set(on_the_way(Path(repository.root), target))
        dirs = tuple(sorted(folders))
        if dirs == self._watched and self._watch_task is not None and not self._watch_task.done():
            return False
        if self._watch_task is not None:
            self._watch_task.cancel()
        moved, self._watched = dirs != self._watched, dirs
        self._watch_task = self.server.run_task(self._watch(dirs, records), name="watch records") if dirs else None
        if dirs:
            self.server.messages.log("watching decision records in " + ", ".join(map(str, dirs)), types.MessageType.Log)
        return moved  # not a watch that ended and was started again: that would read in a loop

    async def _watch(self, dirs: tuple[Path, ...], records: set[Path]) -> None:
        def concerns_records(change: Change, path: str) -> bool:
            changed = Path(path)
            return (changed.parent in records and changed.suffix == ".md") or any(
                changed == r or changed in r.parents for r in records)

        with contextlib.suppress(Exception):  # the rescan still reads them
            async for _ in awatch(*dirs, watch_filter=concerns_records, debounce=DEBOUNCE_MS, recursive=False,
                                  ignore_permission_denied=True):
                self.request()

    async def share(self, args: tuple[object, ...]) -> ShareResult:
        item_id, undo = parse_arguments(args)
        folders = self.server.folders.paths
        settings = self.server.settings

        def run(store: Store) -> ShareResult:
            folder = _folder_for(store, item_id, folders)
            if undo:
                return {"id": item_id, "path": sharing.undo(store, item_id, folder, settings), "record": None,
                        "created": False, "removed": True}
            shared = sharing.share(store, item_id, folder, settings)
            return {"id": shared.item_id, "path": shared.path, "record": shared.relative,
                    "created": shared.created, "removed": False}

        result: ShareResult = await self.server.read_worker.call(lambda store: run(store))
        self.server.messages.log(f"item {item_id}: {'record removed' if undo else 'shared'}: {result['path']}")
        self.server.events.publish(ItemsChanged())
        return result

    async def reflect(self, item_ids: list[str]) -> None:
        """Shared items changed here: their records say the new status (to be committed)."""
        folders, settings = self.server.folders.paths, self.server.settings
        try:
            rewritten = await self.server.read_worker.call(sharing.reflect, item_ids, folders, settings)
        except Exception as exc:
            self.server.messages.log(f"decision records not updated: {exc}", types.MessageType.Warning)
            return
        for path in rewritten:
            self.server.messages.log(f"updated the decision record {path} (commit it to share the change)")


def on_the_way(root: Path, target: Path) -> list[Path]:
    """The repository's top and each folder from it down to `target` (inside it) that exists now."""
    out = [root]
    for part in target.relative_to(root).parts:
        if not (out[-1] / part).is_dir():
            break
        out.append(out[-1] / part)
    return out
