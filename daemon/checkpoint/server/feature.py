"""The base of every daemon feature: no-op hooks the server calls (esbonio's LanguageFeature)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checkpoint import config
    from checkpoint.server.server import CheckpointServer
    from checkpoint.server.settings import ServerSettings


class Feature:
    def __init__(self, server: CheckpointServer) -> None:
        self.server = server

    async def initialized(self) -> None:
        """The client is ready: start background work."""

    def settings_changed(self, engine: config.Settings, daemon: ServerSettings) -> None:
        """Called with the previous settings after new ones took effect."""

    def folders_changed(self) -> None:
        """Workspace folders were added or removed."""

    def document_changed(self, uri: str) -> None:
        """A document was opened, changed or saved."""

    def shutdown(self) -> None:
        """The client asked the server to shut down: stop background work."""
