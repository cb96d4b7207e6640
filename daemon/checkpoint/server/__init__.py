"""`checkpoint serve`: the LSP daemon. It watches the transcript roots, ingests new lines as they
are written, extracts in the background, and tells any LSP editor about it: `checkpoint/status`
notifications, work-done progress, diagnostics on the files items concern, hover, triage commands
and the `checkpoint/items` request. A thin shell over the pipeline; names in `protocol`.

The core is here (app.py builds the features and registers the handlers; server.py, transport.py,
workers.py, events.py, settings.py ...); each feature is a package of server/features/, each
request handler a module of server/requests/ (docs/layout.md).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any


def serve(flags: dict[str, Any] | None = None) -> int:
    """Speak LSP over stdio until the client exits or the connection closes."""
    from checkpoint.server.app import create_server

    # stdout carries the protocol: Python logging goes to stderr, which editors show as the server log.
    from checkpoint.server.transport import OneLineFormatter

    level = os.environ.get("CHECKPOINT_LOG_LEVEL", "WARNING").upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter("%(asctime)s %(name)s %(levelname)s %(message)s", debug=level == "DEBUG"))
    logging.basicConfig(level=level, handlers=[handler])
    from checkpoint.redact.outside import hide_secrets_in_logs

    hide_secrets_in_logs()  # a traceback or an error logged may quote a key
    server = create_server(flags)
    server.start_io()
    if not server.close():
        # An extraction still waits on the model; its leases expire and the chunks become due
        # again, so leaving now loses nothing (the store's exactly-once invariant).
        sys.stderr.flush()
        os._exit(0)
    return 0
