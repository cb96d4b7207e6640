"""The `checkpoint` command. Thin: parse flags, call the pipeline, print what happened."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import checkpoint
from checkpoint import config, pipeline, status_model
from checkpoint.cli.check import add_parser as add_check_parser
from checkpoint.cli.check import check_command, status_lines
from checkpoint.cli.items import ATTRIBUTED, accept_command, items_command, print_item, supersede_command
from checkpoint.cli.names import NoSuchSession, one_session
from checkpoint.cli.team import read_records, share_command
from checkpoint.extract import registry
from checkpoint.model import (
    Citation,
    ItemKind,
    ItemRecord,
    RunReport,
    SessionCounts,
    Totals,
    Usage,
    plain_text,
    plural,
    session_title,
)
from checkpoint.store import Store, StoreUnavailable, fault_message, read_only_file

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
    parser = argparse.ArgumentParser(
        prog="checkpoint",
        description="Keep the decisions, constraints and open questions of your coding-agent sessions.",
    )
    # The VS Code extension runs `checkpoint --version` to use a `checkpoint` on PATH only when it is its own version.
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    scan = sub.add_parser("scan", help="ingest new turns and form chunks; no model calls")
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
    status = sub.add_parser("status", help="captured, pending and failed turns per session")
    _common(status)
    status.add_argument("--json", action="store_true", help="stable machine-readable output")
    items = sub.add_parser("items", help="captured decisions, constraints and open questions")
    _common(items)
    items.add_argument("--json", action="store_true", help="stable machine-readable output")
    items.add_argument("--session", help="only this session")
    items.add_argument("--kind", metavar="{" + ",".join(KINDS) + "}")
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
    search.add_argument("--kind", metavar="{" + ",".join(KINDS) + "}")
    search.add_argument("--workspace", type=Path, metavar="DIR",
                        help="only items of sessions run in DIR or in a folder inside it")
    search.add_argument("--limit", type=int, default=20, help="at most this many items (default 20)")
    search.add_argument("--json", action="store_true", help="stable machine-readable output")
    add_check_parser(sub, _common)
    serve = sub.add_parser("serve", help="the LSP daemon over stdio: watch, extract, report to the editor")
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["hook"] and given[1:2] != ["--help"] and given[1:2] != ["-h"]:
        # Before argparse: a hook must exit 0 and print nothing whatever its arguments (an exit
        # status of 2 would block Claude Code's Stop), so the agent front end parses them itself.
        from checkpoint.agent.hooks import main as hook_main

        return hook_main(given[1:])
    parser = build_parser()
    _refuse_unknown_first_option(parser, given)
    args = parser.parse_args(given)
    if args.command == "mcp":
        from checkpoint.agent.mcp_server import serve as serve_mcp  # the MCP SDK loads only for `checkpoint mcp`

        return serve_mcp()
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
        from checkpoint.startup import long_lived_imports

        with long_lived_imports():
            from checkpoint.server import serve  # pygls and watchfiles load only for the daemon

        return serve(flags)  # the editor's settings come on top; a bad one is said in the editor
    try:
        if args.command in READ_COMMANDS and read_only_file(settings.db):
            store = Store.read_only(settings.db, busy_seconds=30.0)
        else:
            store = Store(settings.db)
    except StoreUnavailable as exc:
        print(f"checkpoint: {exc}", file=sys.stderr)
        return 1
    try:
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
    if args.command == "scan":
        return _scan(store, settings, args.json)
    if args.command == "now":
        return _now(store, settings, args)
    if args.command == "status":
        read_records(store, settings, args, lists_problems=True)
        return _status(store, settings, args.json)
    if args.command == "forget":
        return _forget(store, args)
    if args.command == "search":
        return _search(store, settings, args)
    if args.command == "supersede":
        return supersede_command(store, settings, args)
    if args.command == "share":
        return share_command(store, settings, args)
    if args.command == "accept":
        return accept_command(store, settings, args)
    if args.command == "check":
        return check_command(store, settings, args)
    return items_command(store, settings, args)


# -- commands ---------------------------------------------------------------------------------------


def _warn(report: pipeline.ScanReport) -> None:
    for problem in report.problems[:50]:
        print(f"warning: {plain_text(problem.text)}", file=sys.stderr)
    if len(report.problems) > 50:
        print(f"warning: … and {len(report.problems) - 50} more (checkpoint status --json lists them)",
              file=sys.stderr)


def _where_looked(report: pipeline.ScanReport) -> str:
    parts = []
    for root in report.roots:
        if not root.is_dir():
            parts.append(f"{root} (missing)")
        else:
            n = report.files_per_root.get(root, 0)
            parts.append(f"{root} ({plural(n, 'transcript') if n else 'no transcripts'})")
    return ", ".join(parts) if parts else "no roots configured"


def _print_scan(report: pipeline.ScanReport, out: TextIO) -> None:
    _warn(report)
    if not report.files_seen:
        print(f"No transcripts found. Looked in: {_where_looked(report)}.", file=out)
        print("Point Checkpoint elsewhere with --source DIR or CHECKPOINT_SOURCES.", file=out)
        return
    print(f"Looked in: {_where_looked(report)}.", file=out)
    print(
        f"Scanned {plural(report.files_seen, 'transcript file')} ({report.files_read} changed): "
        f"{plural(report.turns_added, 'new turn')}, {plural(report.chunks_created, 'new chunk')}.",
        file=out,
    )
    if report.redacted:
        print(f"Redacted before storing: {_redactions(report.redacted)}.", file=out)
    if report.problems:
        problems = plural(len(report.problems), "problem")
        print(f"{problems} reading transcripts (on stderr; `checkpoint status` lists them).", file=out)


def _scan_json(report: pipeline.ScanReport) -> dict[str, Any]:
    return {
        "roots": [
            {"path": str(r), "exists": r.is_dir(), "files": report.files_per_root.get(r, 0)} for r in report.roots
        ],
        "files_seen": report.files_seen,
        "files_read": report.files_read,
        "turns_added": report.turns_added,
        "chunks_created": report.chunks_created,
        "redacted": dict(sorted(report.redacted.items())),
        "warnings": [p.text for p in report.problems],
    }


def _redactions(counts: Mapping[str, int]) -> str:
    total = sum(counts.values())
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{plural(total, 'secret')} ({kinds})"


def _money(usd: float) -> str:
    return f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"


def _usage_line(usage: Usage) -> str:
    cache = ""
    if usage.cache_creation_input_tokens or usage.cache_read_input_tokens:
        cache = (f", cache write {usage.cache_creation_input_tokens:,}, "
                 f"cache read {usage.cache_read_input_tokens:,}")
    return (f"{plural(usage.requests, 'request')}, {usage.tokens:,} tokens (input {usage.input_tokens:,}{cache}, "
            f"output {usage.output_tokens:,}): {_money(usage.cost_usd)}")


def _scan(store: Store, settings: config.Settings, as_json: bool) -> int:
    with store.grouped_commits():  # one-shot and single-threaded: files committed a group at a time
        report = pipeline.scan(store, settings, two_processes=True)
    if as_json:
        _warn(report)
        _, totals = store.totals()
        print(json.dumps({"scan": _scan_json(report), "totals": totals.as_dict()}, indent=2, ensure_ascii=False))
        return 0
    _print_scan(report, sys.stdout)
    if report.files_seen:
        _print_total_line(*store.totals(), sys.stdout)
    return 0


def _now(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    # Imported here: `scan` and `status` start without the run layer (their start is measured).
    from checkpoint import runner
    from checkpoint.extract.choose import choose_extractor

    out = sys.stderr if args.json else sys.stdout
    turns_before = {s.id: s.turns for s in store.session_counts()}
    items_before = store.item_counts()
    choice = choose_extractor(settings)
    print(choice.sentence, file=out)
    show_progress = sys.stderr.isatty()

    def progress(report: RunReport) -> None:
        if show_progress:
            spent = report.usage
            money = f" · {spent.tokens:,} tokens · {_money(spent.cost_usd)}" if spent.requests else ""
            print(f"\rextracting: {report.done}/{max(report.total, report.tried)} chunks{money}\033[K", end="",
                  file=sys.stderr, flush=True)

    def scan(scan_settings: config.Settings) -> pipeline.ScanReport:
        scan_report = pipeline.scan(store, scan_settings, two_processes=True)
        if args.json:
            _warn(scan_report)
        else:
            _print_scan(scan_report, out)
        return scan_report

    started = store.clock()
    captured = runner.capture(store, settings, choice=choice, scan=scan,
                              sessions=(lambda scanned: [one_session(scanned, args.session)]) if args.session
                              else None, concurrency=args.concurrency, on_update=progress)
    scan_report, report = captured.scan, captured.run
    assert scan_report is not None  # an explicit capture scans
    if show_progress and report.tried:
        print(file=sys.stderr)
    sessions = status_model.with_risk(store.session_counts(), at_risk_days=settings.at_risk_days)
    if args.json:
        print(json.dumps({"scan": _scan_json(scan_report), "run": report.as_dict(),
                          "totals": Totals.of(sessions).as_dict()}, indent=2, ensure_ascii=False))
        return 0 if report.ok else 1

    new_items = store.items(created_after=started)
    held = report.held_sentence()
    if report.tried:
        print(report.sentence())
    elif not report.stopped_by and sessions and not held:
        print("Nothing new to extract.")
    if held:
        print(plain_text(held))
    if report.redacted:
        print(f"Redacted right before sending (stored before redaction covered them): "
              f"{_redactions(report.redacted)}.")
    if report.usage.requests:
        print(f"Used {_usage_line(report.usage)}.")
        if len(report.models) > 1 or (report.models and settings.model not in report.models):
            print("Answers by model: " + ", ".join(f"{m} {n}" for m, n in report.models.most_common()) + ".")
    for failure in report.failures[:20]:
        how = "not captured" if failure.lost else "failed"
        print(plain_text(f"  {how}: session {failure.session_id} chunk {failure.chunk_id}: {failure.cause}"))
    if len(report.failures) > 20:
        print(f"  … and {len(report.failures) - 20} more failures (checkpoint status shows their causes)")
    if report.stopped_by:
        print(plain_text(f"Stopped: {report.stopped_by}; the rest stays pending for the next run."))
    if report.left_chunks and (report.stopped_by or report.failed or report.lost):
        estimate = report.left_estimate
        cost = (f"; finishing them should cost about {_money(estimate.cost_usd)} "
                f"({plural(estimate.requests, 'request')}, ~{estimate.tokens:,} tokens)") if estimate else ""
        print(f"Left for the next run: {plural(report.left_chunks, 'chunk')} "
              f"(~{report.left_tokens:,} tokens by the local estimate){cost}.")
    if not sessions:
        return 0 if report.ok else 1
    items_after = store.item_counts()
    new_per_session = {
        sid: sum((counts - items_before.get(sid, Counter())).values()) for sid, counts in items_after.items()
    }
    touched = [
        s for s in sessions
        if s.turns != turns_before.get(s.id) or new_per_session.get(s.id) or s.pending or s.failed
    ]
    if touched:
        print()
        _print_table(touched[:20], new_per_session)
        if len(touched) > 20:
            print(f"  … and {len(touched) - 20} more sessions (checkpoint status lists them all)")
    _print_totals(sessions, sys.stdout)
    if new_items:
        print()
        more = f", `checkpoint items` lists all {len(new_items)}" if len(new_items) > 10 else ""
        print(f"Captured in this run{more}:")
        for item in new_items[:10]:
            print(f"  {item.kind.value:<10}  {_short(item.statement, 96)}  [{plain_text(_provenance(item))}]")
    return 0 if report.ok else 1


def _short(text: str, width: int) -> str:
    text = " ".join(plain_text(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _provenance(item: ItemRecord) -> str:
    source = item.sources[0] if item.sources else None
    where = f"{Path(source.path).name}:{source.line}" if source else "?"
    return f"session {item.session_id[:8]} · {where}{ATTRIBUTED if item.cited is Citation.CHUNK else ''}"


def _print_table(sessions: Sequence[SessionCounts], new_items: dict[str, int] | None = None) -> None:
    new_col = f" {'NEW ITEMS':>9}" if new_items is not None else ""
    priced = any(s.usage.requests for s in sessions)
    cost_col = f" {'COST':>9}" if priced else ""
    print(f"  {'SESSION':<8}  {'AGENT':<6} {'TURNS':>6} {'CAPTURED':>8} {'PENDING':>7} {'FAILED':>6}{new_col}{cost_col}"
          "  TITLE")
    for s in sessions:
        title = _short(session_title(s.title, s.cwd), 60)
        new = f" {new_items.get(s.id, 0):>9}" if new_items is not None else ""
        cost = f" {_money(s.usage.cost_usd):>9}" if priced else ""
        print(f"  {s.id[:8]:<8}  {s.agent:<6} {s.turns:>6} {s.captured:>8} {s.pending:>7} {s.failed:>6}{new}{cost}"
              f"  {title}")
        for cause in s.causes[:3]:
            print(f"      failing: {_short(cause, 150)}")
        for hold in s.held[:3]:
            print(f"      held: {_short(hold.phrase(), 150)}")
        if s.at_risk:
            print(f"      at risk: Claude Code deletes this transcript {_in_days(s.deletes_in_days)} "
                  f"(cleanupPeriodDays); its {s.pending + s.failed} turns not captured yet are extracted first")


def _in_days(days: int | None) -> str:
    return "within a day" if not days else f"in {plural(days, 'day')}"


def _print_totals(sessions: Sequence[SessionCounts], out: TextIO) -> None:
    _print_total_line(len(sessions), Totals.of(sessions), out)


def _print_total_line(sessions: int, t: Totals, out: TextIO) -> None:
    print(
        f"Total: {plural(sessions, 'session')}, {plural(t.turns, 'turn')}: {t.captured} captured, "
        f"{t.pending} pending, {t.failed} failed.",
        file=out,
    )


def _status(store: Store, settings: config.Settings, as_json: bool) -> int:
    from checkpoint.agent.problems import recent as agent_problems  # a JSON file beside the database

    status = status_model.read_status(store, at_risk_days=settings.at_risk_days)
    if as_json:
        out = status.as_dict()
        out["agent_problems"] = [p.as_json() for p in agent_problems(settings.db, limit=50)]
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    sessions, at_risk, forgotten = status.sessions, status.at_risk, status.forgotten
    _print_totals(sessions, sys.stdout)
    if forgotten:
        print("Forgotten on request (not read again; `checkpoint forget --undo SESSION` reads one in again): "
              + ", ".join(f.session_id for f in forgotten[:10]) + (" …" if len(forgotten) > 10 else ""))
    hook_problems = agent_problems(settings.db, limit=5)
    if hook_problems:
        print("Problems of the agent hooks and captures (newest first; `checkpoint status --json` lists 50):")
        for agent_problem in hook_problems:
            print(plain_text(f"  {_local_time(agent_problem.at)} {agent_problem.where}: {agent_problem.message}"))
    for line in status_lines(store, settings, os.getcwd()):  # checks that cannot act (checkpoint.checks)
        print(line)
    if not sessions:
        print("Nothing read yet. Run `checkpoint now`.")
        return 0
    if at_risk:
        soonest = min(s.deletes_in_days or 0 for s in at_risk)
        print(f"At risk: {plural(len(at_risk), 'session')} with turns not captured whose transcript Claude Code "
              f"deletes soon (the first {_in_days(soonest)}); `checkpoint now` extracts them first.")
    _print_table(sessions)
    redacted = status.redacted
    if redacted:
        print(f"Redacted before storing: {_redactions(redacted)}.")
    elif not settings.redact:
        print("Redaction is off (redact = false): secrets in transcripts are stored and sent as they are.")
    spent = status.usage
    if spent.requests:
        print(f"Spent on extraction so far: {_usage_line(spent)}.")
    dropped: dict[str, list[int]] = {}
    for s in sessions:
        for policy, counts in s.dropped.items():
            agg = dropped.setdefault(policy, [0, 0])
            agg[0] += counts["records"]
            agg[1] += counts["chars"]
    if dropped:
        summary = ", ".join(f"{p} {r} records ({c} chars)" for p, (r, c) in sorted(dropped.items()))
        print(f"Not sent, by policy: {summary}")
    if status.record_problems:
        print(f"Decision records that cannot be read ({len(status.record_problems)}; each is left out until fixed):")
        for problem in status.record_problems:
            print(plain_text(f"  {problem.path}:{problem.line}: {problem.message}"))
    problems = status.transcript_problems[:10]
    if problems:
        total = sum(s.problems for s in sessions if not status_model.is_team_session(s.id))
        print(f"Problems reading transcripts ({total}; newest first, `checkpoint status --json` lists 50):")
        for problem in problems:
            print(plain_text(f"  {problem.path}:{problem.line}: {problem.message}"))
    return 0


def _local_time(at: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _forget(store: Store, args: argparse.Namespace) -> int:
    session_id = one_session(store, args.session, forgotten=args.undo)
    if args.undo:
        store.unforget(session_id)
        if args.json:
            print(json.dumps({"session_id": session_id, "undone": True}))
        else:
            print(f"Session {session_id} is no longer forgotten: the next scan reads its transcripts in again, "
                  "from their start (those still on disk).")
        return 0
    removed = store.forget_session(session_id) or {}
    if args.json:
        print(json.dumps({"session_id": session_id, "removed": removed}, indent=2))
        return 0
    print(f"Forgot session {session_id}: {plural(removed.get('turns', 0), 'turn')}, "
          f"{plural(removed.get('items', 0), 'item')}, {plural(removed.get('chunks', 0), 'chunk')} and "
          f"{plural(removed.get('files', 0), 'file cursor')} removed; the database was compacted.")
    print("Its transcripts will not be read in again; `checkpoint forget --undo "
          f"{session_id[:8]}` undoes that.")
    return 0


def _search(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    read_records(store, settings, args)
    text = " ".join(args.query)
    if args.limit < 1:
        print("checkpoint search: --limit must be at least 1", file=sys.stderr)
        return 2
    workspaces = [str(args.workspace.expanduser().absolute())] if args.workspace else None
    result = store.search(text, kind=args.kind, workspaces=workspaces, limit=args.limit)
    if args.json:
        print(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
        return 0 if result.terms else 2
    if not result.terms:
        print(plain_text(f"Nothing to search for in {text!r}: give a word or more (letters or digits)."),
              file=sys.stderr)
        return 2
    scope = (plain_text(f"Searched {workspaces[0]} and the folders below it.") if workspaces
             else "Searched every workspace (--workspace DIR: one folder and those below it).")
    if not result.hits:
        print(plain_text(f"No item matches {' '.join(result.terms)!r}."))
        print(scope)
        return 0
    if result.matched == "any" and len(result.terms) > 1:
        print(plain_text(f"No item has all of {' '.join(result.terms)!r}; items with any of them:"))
    for item, _ in result.hits:
        print_item(item)
    print(f"{plural(len(result.hits), 'item')} found.")
    print(scope)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
