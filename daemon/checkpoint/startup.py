"""The `checkpoint` command's entry (the console script, and `python -m checkpoint`, which is how the
VS Code extension starts the daemon): the CLI imported with the cyclic garbage collector held back.
What an agent waits for (a hook, `checkpoint mcp`'s first answer) goes straight to its front end: the
CLI's own imports (the pipeline, the run layer, argparse and its parser) are not paid for it."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence

from checkpoint.long_lived import long_lived_imports


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["hook"] and given[1:2] not in (["--help"], ["-h"]):
        # A hook runs on the agent's path, once per edit for pre-edit: it loads what it uses, not the
        # CLI's pipeline and extractors (the entry alone routes hooks: the CLI never sees one).
        # It lives well under a second and makes few cycles: the collector waits until it is done
        # (about 5 ms of collections during its imports otherwise).
        enabled = gc.isenabled()
        gc.disable()
        try:
            if given == ["hook", "pre-edit"]:
                # Before every edit the agent makes: the narrow path (standard library only, settings
                # and statements prepared by the writers), which hands what it does not handle to the
                # full hook below.
                import os

                from checkpoint.agent.pre_edit_narrow import main as pre_edit_main

                # run as a process (the console script): it ends as soon as it has answered
                return pre_edit_main(sys.stdin.buffer, sys.stdout, os.environ, exit_now=argv is None)
            from checkpoint.agent.hooks import main as hook_main

            return hook_main(given[1:])
        finally:
            if enabled:
                gc.enable()
    if given == ["mcp"]:
        # The agent waits for the MCP server's first answer: the SDK and the tools' modules load, not
        # the CLI's pipeline, extractors and parser (the entry alone routes `mcp`).
        with long_lived_imports():
            from checkpoint.agent.mcp_server import serve as serve_mcp
        return serve_mcp()
    with long_lived_imports():
        from checkpoint import cli
    return cli.main(argv)
