"""The `checkpoint` command's arguments: every command and its options, in one argparse parser.
What a command does is its own module's (cli/dispatch.py names which)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import checkpoint
from checkpoint.cli import model_serve
from checkpoint.cli.check import add_parser as add_check_parser
from checkpoint.cli.suggest import SuggestingParser
from checkpoint.extract import registry
from checkpoint.model import ItemKind

# `--kind` is checked after parsing, not by argparse's choices, so that a bad one is one line, as a bad
# setting is (argparse would print the usage too).
KINDS = tuple(kind.value for kind in ItemKind)
# The commands that only read the database: on a database the user made read-only they open it so.
READ_COMMANDS = ("status", "items", "search")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", type=Path, help="database file (env CHECKPOINT_DB)")
    parser.add_argument(
        "--source", action="append", type=Path, dest="sources", metavar="DIR",
        help="transcript root; repeat for several (env CHECKPOINT_SOURCES)",
    )
    parser.add_argument("--chunk-tokens", type=int, help="token budget of one chunk")


class _VersionAction(argparse.Action):
    """`--version`: the package's own `__version__` (the one pyproject.toml reads)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sys.stdout.write(f"checkpoint {checkpoint.__version__}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = SuggestingParser(
        prog="checkpoint",
        description="Keep the decisions, constraints and open questions of your coding-agent sessions.",
    )
    # The VS Code extension runs `checkpoint --version` to use a `checkpoint` on PATH only when it is its own version.
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    scan = sub.add_parser("scan", help="ingest new turns and form chunks; no model calls",
                          description="Read what is new in every transcript root (incrementally), store the "
                                      "turns (secrets redacted) and form chunks; no model is called.")
    _common(scan)
    scan.add_argument("--json", action="store_true", help="print a machine-readable report (messages go to stderr)")
    now = sub.add_parser(
        "now", help="scan, then extract every pending chunk within the run budget",
        description="Scan, then extract every pending chunk within the run budget. Exit status 0 when every chunk "
                    "it tried is captured; 1 when any failed or was taken over by another worker before its answer "
                    "was committed (each is listed with its cause and stays due).",
    )
    _common(now)
    now.add_argument("--json", action="store_true", help="print a machine-readable report (messages go to stderr)")
    # The names are checked by the settings, as the config file's and the environment's are: an unknown
    # one is refused in one line that says where it came from (argparse's choices would print usage too).
    now.add_argument("--extractor", metavar="{" + ",".join(registry.NAMES) + "}",
                     help="which extractor runs (default: chosen automatically; env CHECKPOINT_EXTRACTOR): "
                          + "; ".join(f"{e.name}: {e.description.rstrip('.')}" for e in registry.ENTRIES))
    now.add_argument("--session", help="only this session")
    now.add_argument("--max-requests", type=int, help="run budget: model requests (env CHECKPOINT_MAX_REQUESTS)")
    now.add_argument("--max-tokens", type=int,
                     help="run budget: tokens billed, input, cache and output (env CHECKPOINT_MAX_TOKENS)")
    now.add_argument("--max-cost", type=float, metavar="USD", help="run budget: US dollars (env CHECKPOINT_MAX_COST)")
    now.add_argument("--concurrency", type=int, help="chunks in flight at once")
    status = sub.add_parser("status", help="captured, pending and failed turns per session",
                            description="Turns captured, pending and failed per session, with the causes of "
                                        "failures, sessions at risk, what was redacted and spent, and problems.")
    _common(status)
    status.add_argument("--json", action="store_true", help="stable machine-readable output")
    items = sub.add_parser("items", help="captured decisions, constraints and open questions",
                           description="The captured decisions, constraints and open questions, each with its id "
                                       "and where it was said (session, transcript file and line), or the "
                                       "decision record it was shared in.")
    _common(items)
    items.add_argument("--json", action="store_true", help="stable machine-readable output")
    items.add_argument("--session", help="only this session")
    items.add_argument("--kind", metavar="{" + ",".join(KINDS) + "}", help="only items of this kind")
    items.add_argument("--all", action="store_true", help="also the items a later one superseded (marked so)")
    items.add_argument("--workspace", type=Path, metavar="DIR",
                       help="only items of DIR's workspace: its repository (every worktree), else DIR and below")
    share = sub.add_parser(
        "share", help="share an item with the team: write its decision record into the repository",
        description="Write the item's decision record (MADR Markdown) into the repository's decisions_dir "
                    "(docs/decisions) and print its path; commit and push it like code. Refused if a secret is found.",
    )
    _common(share)
    share.add_argument("item", metavar="ITEM", help="item id, or a prefix that names one item")
    share.add_argument("--undo", action="store_true", help="remove the item's record (only if not committed)")
    share.add_argument("--workspace", type=Path, metavar="DIR", help="the repository DIR is in (default: the cwd)")
    share.add_argument("--json", action="store_true", help="machine-readable output")
    accept = sub.add_parser(
        "accept", help="accept an item: one held for review (`checkpoint items` marks it) reaches agents from now on",
        description="Accept item ID (a prefix that names one item will do). An item that reads as an "
                    "instruction planted for an agent (a command, a URL or a credential path in an instruction, "
                    "or known prompt-injection phrasing) is held: the SessionStart context and the MCP tools "
                    "leave it out until it is accepted.",
    )
    _common(accept)
    accept.add_argument("id", metavar="ID", help="the item to accept")
    accept.add_argument("--json", action="store_true", help="machine-readable output")
    supersede = sub.add_parser(
        "supersede", help="mark an item as superseded by a later one (or undo that)",
        description="Record that item NEW replaces item OLD (a decision reversed or changed). OLD is kept, "
                    "marked superseded: `checkpoint items` hides it unless --all, the editor strikes it through. "
                    "A chain of supersessions never loops: a link that would close one is refused. "
                    "Ids may be given by a prefix that names one item (`checkpoint items` prints them).",
    )
    _common(supersede)
    supersede.add_argument("old", metavar="OLD", help="the item that no longer holds")
    supersede.add_argument("new", metavar="NEW", nargs="?", help="the item that replaces it (with --undo: optional)")
    supersede.add_argument("--reason", help="why OLD no longer holds")
    supersede.add_argument("--undo", action="store_true", help="remove the link (all of OLD's when NEW is not given)")
    supersede.add_argument("--json", action="store_true", help="machine-readable output")
    search = sub.add_parser(
        "search", help="full-text search over the items' statements, rationales and files",
        description="Find items by their words (statement, rationale, files), best match first: a statement "
                    "match ranks above a rationale match. Every word must match; when no item has them all, "
                    "items with any of them are shown (and the output says so). The query is words only: "
                    "quotes, `*`, `:`, `-` and NEAR/AND/OR/NOT are searched as text, not as operators. "
                    "Searches every workspace unless --workspace is given (the MCP tool search_decisions "
                    "searches the agent's folder unless told otherwise).",
    )
    _common(search)
    search.add_argument("query", metavar="QUERY", nargs="+", help="words to find")
    search.add_argument("--kind", metavar="{" + ",".join(KINDS) + "}", help="only items of this kind")
    search.add_argument("--workspace", type=Path, metavar="DIR",
                        help="only items of sessions run in DIR or in a folder inside it")
    search.add_argument("--limit", type=int, default=20, help="at most this many items (default 20)")
    search.add_argument("--json", action="store_true", help="stable machine-readable output")
    search.add_argument("--said", action="store_true",
                        help="search what the user and the assistant said in every session (no model needed; "
                             "any language: a few characters of a Chinese or Japanese sentence find it)")
    add_check_parser(sub, _common)
    serve = sub.add_parser("serve", help="the LSP daemon over stdio: watch, extract, report to the editor",
                           description="The daemon behind the editor extensions, speaking LSP over stdio: it "
                                       "watches the transcript roots, extracts in the background and publishes "
                                       "diagnostics (docs/protocol.md). Started by an editor, not by hand.")
    _common(serve)
    sub.add_parser("mcp", help="an MCP server over stdio: read-only tools that search and list the captured items")
    hook = sub.add_parser(
        "hook", help="a Claude Code hook (reads its JSON on stdin; always exits 0, problems go to `status`)",
        description="Claude Code hooks: session-start prints the workspace's current decisions as context; pre-edit "
                    "those about the file about to be edited (PreToolUse; also Codex's and Copilot CLI's); stop, "
                    "post-compact and session-end ask for the session to be captured soon, without waiting.",
    )
    hook.add_argument("event", choices=["session-start", "pre-edit", "stop", "post-compact", "session-end"])
    forget = sub.add_parser(
        "forget", help="remove everything stored for a session and do not read its transcripts again",
        description="Remove a session's turns, chunks, items, drops, problems, usage and file cursors, then "
                    "compact the database so the bytes are gone. Its transcripts are not read in again until "
                    "`checkpoint forget --undo SESSION` (which reads them from the start at the next scan).",
    )
    _common(forget)
    forget.add_argument("session", metavar="SESSION", help="session id, or a prefix that names one session")
    forget.add_argument("--undo", action="store_true", help="read the forgotten session in again at the next scan")
    forget.add_argument("--json", action="store_true", help="machine-readable output")
    model_serve.add_parser(sub)
    return parser
