"""What the user is told. Everything goes to window/logMessage; a problem the user must act on
(a refusal, a failing chunk, a missing API key, an unreadable transcript) also pops up once via
window/showMessage, not on every retry. API keys never leave the process: every text passes through
`redact.hide_secrets`, the one redaction of strings from outside (configured credentials by value, and
every shape the transcript detectors know).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from lsprotocol import types

from checkpoint.redact.outside import hide_secrets

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger("checkpoint.server")

_DIGITS = re.compile(r"\d+")
MAX_REMEMBERED = 1000


def once_key(kind: str, text: str) -> str:
    """Retries of one problem differ in counts and delays ("retry after 12s"); they are one problem."""
    return kind + ":" + _DIGITS.sub("#", text)[:300]


class Messenger:
    """Call from the event loop thread only: the stdio writer is not shared with worker threads."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        self._shown: set[str] = set()
        self._logged: set[str] = set()

    def log(self, text: str, level: types.MessageType = types.MessageType.Info) -> None:
        text = hide_secrets(text)
        log.log(_PY_LEVEL.get(level, logging.INFO), "%s", text)
        try:
            self._server.window_log_message(types.LogMessageParams(type=level, message=text))
        except Exception:  # a client gone mid-shutdown must not break the caller
            log.debug("could not send logMessage", exc_info=True)

    def log_once(self, key: str, text: str, level: types.MessageType = types.MessageType.Info) -> None:
        """For problems every rescan sees again (an unreadable file): logged the first time only."""
        if self._remember(self._logged, key):
            self.log(text, level)

    def show_once(
        self, key: str, text: str, level: types.MessageType = types.MessageType.Warning, log_again: bool = True
    ) -> bool:
        """Pop the message up the first time this key is seen. Logged every time (each retry of a
        failing chunk is news), or, with log_again=False, the first time only (what every rescan
        sees again). True when it was shown now."""
        first = self._remember(self._shown, key)
        if first or log_again:
            self.log(text, level)
        if not first:
            return False
        try:
            self._server.window_show_message(types.ShowMessageParams(type=level, message=hide_secrets(text)))
        except Exception:
            log.debug("could not send showMessage", exc_info=True)
        return True

    @staticmethod
    def _remember(seen: set[str], key: str) -> bool:
        if key in seen:
            return False
        if len(seen) >= MAX_REMEMBERED:
            seen.clear()
        seen.add(key)
        return True


_PY_LEVEL = {
    types.MessageType.Error: logging.ERROR,
    types.MessageType.Warning: logging.WARNING,
    types.MessageType.Info: logging.INFO,
    types.MessageType.Log: logging.DEBUG,
}
