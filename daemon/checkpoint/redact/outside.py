"""The one redaction for every string from outside that Checkpoint stores or shows: an API error's
body and cause, a problem message, a base URL, a log line, what goes to the editor.

Two passes. The configured credentials by value (the API key, the auth token, the password in a
base URL's userinfo): a gateway may quote one whatever its shape, so it is replaced wherever it
appears. Then the transcript detectors (`redact.redactor()`), which know the shapes of keys,
tokens, URL passwords and `NAME=value` assignments. Callers that cut a text short must call this
before cutting: a key cut in half matches neither its value nor its shape.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from checkpoint.redact.detectors import PLACEHOLDER

if TYPE_CHECKING:
    import logging

# The environment variables whose values are credentials Checkpoint or its agents are configured with.
CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY")
# Variables holding a URL whose userinfo may carry a password (a proxy or gateway).
URL_VARS = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
CREDENTIAL = PLACEHOLDER.format("credential")
_MIN_KEY = 8  # shorter values are words more often than keys: replaced only as a whole token
_MIN_SHORT_KEY = 4  # a configured key this short (sk-1234, a test key) is still replaced, as a token
_MIN_URL_PASSWORD = 4


def configured_credentials() -> list[str]:
    """The credential values of this process's environment, longest first (a value inside another
    must not leave the rest of the longer one behind), with the percent-decoded and the raw
    spelling of a URL password."""
    values: set[str] = set()
    for var in CREDENTIAL_VARS:
        value = os.environ.get(var, "").strip()
        if len(value) >= _MIN_SHORT_KEY:
            values.add(value)
    for var in URL_VARS:
        raw = os.environ.get(var, "").strip()
        if "@" not in raw:
            continue
        try:
            netloc = urlsplit(raw).netloc
        except ValueError:
            continue
        userinfo = netloc.rpartition("@")[0]
        _, colon, password = userinfo.partition(":")
        if colon and len(password) >= _MIN_URL_PASSWORD:
            values.update({password, unquote(password)})
    return sorted(values, key=len, reverse=True)


def hide_secrets(text: str) -> str:
    """The text with the configured credentials and every secret the detectors know replaced by
    placeholders. For strings from outside (errors, messages, URLs, logs), not transcripts: those go
    through the pipeline's redactor with the user's settings."""
    if not text:
        return text
    for value in configured_credentials():
        if value not in text:
            continue
        if len(value) >= _MIN_KEY:
            text = text.replace(value, CREDENTIAL)
        else:  # a short key: not inside a longer word ("abcd" in "abcdef" stays)
            import re

            text = re.sub(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])", CREDENTIAL, text)
    from checkpoint import redact  # the facade imports this module: import it when first used

    return redact.redactor().redact(text).text


@lru_cache(maxsize=1)
def _filter_class() -> type[logging.Filter]:
    """The log filter's class, made when first asked for: logging is imported only by a process that
    logs (the server), not at every start of a scan (~3.5 ms of CPU)."""
    import logging

    class HideSecretsFilter(logging.Filter):
        """A log record's message, arguments and traceback text pass `hide_secrets` before any handler
        writes them (stderr, the debug log): an exception's text may quote a key."""

        def filter(self, record: logging.LogRecord) -> bool:
            try:
                message = record.getMessage()
            except Exception:  # a bad format string: let logging report it as it would
                return True
            record.msg, record.args = hide_secrets(message), None
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = hide_secrets(record.exc_text)
            return True

    return HideSecretsFilter


def hide_secrets_in_logs(*handlers: logging.Handler) -> None:
    """Put the filter on these handlers (default: the root logger's), once each."""
    import logging

    hiding = _filter_class()
    for handler in handlers or tuple(logging.getLogger().handlers):
        if not any(isinstance(f, hiding) for f in handler.filters):
            handler.addFilter(hiding())
