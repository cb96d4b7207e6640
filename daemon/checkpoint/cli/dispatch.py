"""The `checkpoint` command run: its arguments parsed (cli/parser.py), its settings loaded, its
database opened, and the command's own module called. `hook` and `mcp` never come here:
`checkpoint.startup`, the entry, hands them to their front end before the CLI is imported."""

from __future__ import annotations

import argparse
import gc
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence

from checkpoint import config
from checkpoint.backfills import run_due
from checkpoint.cli.names import NoSuchSession
from checkpoint.cli.parser import KINDS, READ_COMMANDS, build_parser
from checkpoint.long_lived import long_lived_imports
from checkpoint.model import plain_text
from checkpoint.store import Store, StoreUnavailable, fault_message, read_only_file


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    _refuse_unknown_first_option(parser, given)
    args = parser.parse_args(given)
    if args.command in ("hook", "mcp"):
        # The parser knows them for `--help` only: the entry (checkpoint.startup) hands `checkpoint hook ...`
        # and `checkpoint mcp` to their front ends before the CLI is imported, so only a caller of this
        # function that is not the entry comes here.
        print(f"checkpoint: `{args.command}` runs through the `checkpoint` command (checkpoint.startup), "
              "not the CLI's main", file=sys.stderr)
        return 2
    if args.command == "model":
        from checkpoint.cli import model_serve

        return model_serve.serve_command(args)
    if getattr(args, "kind", None) not in (None, *KINDS):
        print(f"checkpoint: error in the options: --kind: unknown kind {args.kind!r} (allowed: {', '.join(KINDS)})",
              file=sys.stderr)
        return 2
    flags = {k: v for k, v in vars(args).items() if k in config.NAMES}
    try:
        settings = config.load(flags, overrides_from="the command line")
    except config.SettingsError as exc:
        print(f"checkpoint: error in the settings: {exc}", file=sys.stderr)
        return 2
    if args.command == "serve":
        with long_lived_imports():
            from checkpoint.server import serve  # pygls and watchfiles load only for the daemon

        return serve(flags)  # the editor's settings come on top; a bad one is said in the editor
    writable = not (args.command in READ_COMMANDS and read_only_file(settings.db))
    try:
        store = Store(settings.db) if writable else Store.read_only(settings.db, busy_seconds=30.0)
    except StoreUnavailable as exc:
        print(f"checkpoint: {exc}", file=sys.stderr)
        return 1
    try:
        if writable:
            run_due(store)  # the back-fills a migration left, once; a database gone bad is said below
        code = _command(store, settings, args)
        sys.stdout.flush()
        return code
    except NoSuchSession as exc:
        print(plain_text(f"checkpoint: {exc}"), file=sys.stderr)
        return 2
    except sqlite3.Error as exc:  # a full disk or a file gone bad mid-command: what was committed stays
        print(f"checkpoint: {fault_message(exc, settings.db)}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (`checkpoint items | head`): what was done is committed; print no more.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13  # as a shell reports a command ended by SIGPIPE
    finally:
        store.close()


def _refuse_unknown_first_option(parser: argparse.ArgumentParser, given: Sequence[str]) -> None:
    """An option before the command that `checkpoint` itself does not take (`checkpoint --bogus`,
    `checkpoint --db x status`): called unknown, with the usage (argparse would first say the
    command is missing, or name it among "unrecognized arguments" after the command ran its parse)."""
    first = given[0] if given else ""
    own = {option for action in parser._actions for option in action.option_strings}
    if first.startswith("-") and first.split("=", 1)[0] not in own:
        parser.error(f"unknown option {first.split('=', 1)[0]} (a command's options come after it: "
                     "`checkpoint COMMAND --help` lists them)")


def _command(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    # The command's modules load with the cyclic collector held back, as the entry's do (collections
    # during imports free nothing); not frozen after: what the command's caller holds by then (its
    # objects, its open files) must stay collectable and be finalised at exit.
    enabled = gc.isenabled()
    gc.disable()
    try:
        run = _command_function(args.command)
    finally:
        if enabled:
            gc.enable()
    return run(store, settings, args)


Command = Callable[[Store, config.Settings, argparse.Namespace], int]


def _command_function(command: str) -> Command:
    """The command's function, its module imported now: every start is measured (`checkpoint scan` of
    a first history, against ccusage), and one command loads none of the others' modules."""
    if command == "scan":
        from checkpoint.cli.scan import scan_command

        return lambda store, settings, args: scan_command(store, settings, args.json)
    if command == "now":
        from checkpoint.cli.now import now_command

        return now_command
    if command == "status":
        from checkpoint.cli.status import status_command
        from checkpoint.cli.team import read_records

        def status(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
            read_records(store, settings, args, lists_problems=True)
            return status_command(store, settings, args.json)

        return status
    if command == "forget":
        from checkpoint.cli.forget import forget_command

        return lambda store, settings, args: forget_command(store, args)
    if command == "search":
        from checkpoint.cli.search import search_command

        return search_command
    if command == "supersede":
        from checkpoint.cli.supersessions import supersede_command

        return supersede_command
    if command == "share":
        from checkpoint.cli.team import share_command

        return share_command
    if command == "check":
        from checkpoint.cli.check import check_command

        return check_command
    from checkpoint.cli.items import accept_command, items_command

    return accept_command if command == "accept" else items_command
