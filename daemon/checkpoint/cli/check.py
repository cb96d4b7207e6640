"""`checkpoint check`: run the checks of the accepted decisions over the repository (or the given paths)
and exit 1 on a line that breaks one, 0 when clean, 2 on a usage error; and the checks by hand:

    checkpoint check [PATH...] [--format text|json|sarif|github] [--all-files | --since REF]
    checkpoint check add ITEM (--uses NAME [--calls] | --pattern P --lang L | --rule JSON --lang L
                                | --regex RE) [--path GLOB]... [--message TEXT]
    checkpoint check list | accept CHECK | dismiss CHECK

The checks come from this machine's store and from the repository's decision records, so a clone with
no transcripts and an empty HOME (CI) enforces what anyone shared (checkpoint.checks.active).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checkpoint import config
from checkpoint.cli.names import one_item
from checkpoint.cli.team import folder
from checkpoint.model import plain_text, plural
from checkpoint.store import Store

VERBS = ("add", "list", "accept", "dismiss")


def add_parser(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    from checkpoint.checks.model import FORMATS

    check = sub.add_parser(
        "check", help="find the code that breaks an accepted decision (pre-commit, CI); `check add` gives one a check",
        description="Run every accepted decision's checks over the staged and changed files (--all-files: every "
                    "file; --since REF: also the files changed since REF; or the PATHs given). Exit status 1 when a "
                    "line breaks one, 0 when clean, 2 on a usage error. `check add ITEM ...` gives an item a check "
                    "by hand (accepted); `check list`, `check accept ID`, `check dismiss ID`. A line holding "
                    "'checkpoint: ignore' is left alone.",
    )
    common(check)
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: staged and changed files)")
    check.add_argument("--format", default="text", metavar="{" + ",".join(FORMATS) + "}", help="output (default text)")
    check.add_argument("--all-files", action="store_true", help="every file of the repository")
    check.add_argument("--since", metavar="REF", help="also the files changed between REF and HEAD (a pull request)")
    check.add_argument("--workspace", type=Path, metavar="DIR", help="the repository DIR is in (default: the cwd)")
    check.add_argument("--uses", metavar="NAME", help="check add: a library, module or function that must not appear")
    check.add_argument("--calls", action="store_true", help="check add --uses: only calls break the item")
    check.add_argument("--pattern", help="check add: an ast-grep pattern of the code that breaks the item")
    check.add_argument("--rule", metavar="JSON", help="check add: a whole ast-grep rule (pattern, inside, has, not...)")
    check.add_argument("--lang", help="check add --pattern/--rule: python, typescript, tsx, javascript, go, rust")
    check.add_argument("--regex", help="check add: an re2 regular expression (for files with no grammar; needs --path)")
    check.add_argument("--path", action="append", dest="globs", metavar="GLOB", help="check add: files it holds for")
    check.add_argument("--message", help="check add: what to do instead")
    check.add_argument("--json", action="store_true", help="check add/list/accept/dismiss: machine-readable output")


def _usage(message: str) -> int:
    print(plain_text(f"checkpoint check: {message}"), file=sys.stderr)
    return 2


def check_command(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    verb = args.paths[0] if args.paths and args.paths[0] in VERBS else None
    if verb == "add":
        return _add(store, settings, args)
    if verb == "list":
        return _list(store, settings, args)
    if verb in ("accept", "dismiss"):
        return _set_state(store, args, "accepted" if verb == "accept" else "dismissed")
    return _run(store, settings, args)


def _given_check(args: argparse.Namespace) -> dict[str, Any] | str:
    shapes = [k for k in ("uses", "pattern", "rule", "regex") if getattr(args, k)]
    if len(shapes) != 1:
        return "give one of --uses, --pattern, --rule or --regex"
    data: dict[str, Any] = {}
    if args.uses:
        data = {"uses": args.uses, **({"calls": True} if args.calls else {})}
    elif args.regex:
        data = {"regex": args.regex}
    else:
        lang = args.lang or _lang_of_globs(args.globs or [])
        if not lang:
            return "--pattern and --rule need --lang (or a --path whose extension names the language)"
        if args.pattern:
            rule: Any = {"pattern": args.pattern}
        else:
            try:
                rule = json.loads(args.rule)
            except ValueError as exc:
                return f"--rule is not JSON ({exc})"
        data = {"lang": lang, "rule": rule}
    if args.uses and args.lang:
        data["lang"] = args.lang
    if args.globs:
        data["paths"] = args.globs
    if args.message:
        data["message"] = args.message
    return data


def _lang_of_globs(globs: list[str]) -> str | None:
    from checkpoint.checks.model import language_of_file

    found = {language_of_file(g) for g in globs} - {None}
    return found.pop() if len(found) == 1 else None


def _add(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    from checkpoint.checks.model import CheckProblem, read_check

    if len(args.paths) != 2:
        return _usage("usage: checkpoint check add ITEM (--uses NAME | --pattern P --lang L | --regex RE --path G)")
    item_id = one_item(store, args.paths[1])
    if item_id is None:
        return 2
    data = _given_check(args)
    if isinstance(data, str):
        return _usage(data)
    try:
        check = read_check(data)
    except CheckProblem as exc:
        return _usage(f"the check cannot be read: {exc}")
    from checkpoint.checks.engine import ActiveCheck, Engine

    compiled = Engine([ActiveCheck("new", item_id, check, "", "decision", "local")])
    if compiled.issues:
        return _usage(f"the check cannot be run: {compiled.issues[0].message}")
    cid = store.add_check(item_id, check, "user", "accepted")
    item = store.item(item_id)
    record = None
    if item is not None and item.record:  # shared: its record carries the check too
        from checkpoint.team.share import ShareRefused, share

        try:
            record = share(store, item_id, folder(args), settings).path
        except ShareRefused as exc:
            print(plain_text(f"checkpoint check: the record was not updated: {exc}"), file=sys.stderr)
    if args.json:
        print(json.dumps({"id": cid, "item": item_id, "check": check.as_json(), "record": record}))
    else:
        print(plain_text(f"Check {cid} on item {item_id} (accepted): {check.describe()}."))
        if record:
            print(plain_text(f"Updated the decision record {record} (commit it to share the check)."))
    return 0


def _set_state(store: Store, args: argparse.Namespace, state: str) -> int:
    if len(args.paths) != 2:
        return _usage(f"usage: checkpoint check {args.paths[0]} CHECK")
    found = store.checks_named(args.paths[1])
    if len(found) != 1:
        return _usage(f"{args.paths[1]!r} names {len(found)} checks (`checkpoint check list` lists them)")
    store.set_check_state(found[0], "accepted" if state == "accepted" else "dismissed")
    print(json.dumps({"id": found[0], "state": state}) if args.json else f"Check {found[0]} {state}.")
    return 0


def _list(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    from checkpoint.checks.active import acts
    from checkpoint.checks.active import gather as gather_checks
    from checkpoint.repository import repository_of, workspace_key

    where = folder(args)
    repository = repository_of(where)
    rows = store.checks_in(workspace_key(repository.root if repository else where))
    shared = [c for c in gather_checks(None, where, settings.decisions_dir).active]
    if args.json:
        print(json.dumps({"checks": [{**r.as_json(), "acts": acts(r)} for r in rows],
                          "shared": [{"id": c.id, "item": c.item_id, "check": c.check.as_json(), "record": c.source}
                                     for c in shared]}))
        return 0
    if not rows and not shared:
        print("No checks yet. `checkpoint check add ITEM --uses NAME` gives an item one.")
    for r in rows:
        mark = "acts" if acts(r) else r.state
        print(plain_text(f"{r.id}  [{mark}]  item {r.item_id}: {r.statement}"))
        print(plain_text(f"    {r.text}  (by {r.said_by})"))
    for c in shared:
        print(plain_text(f"{c.id}  [acts, shared in {c.source}]  item {c.item_id}: {c.statement}"))
        print(plain_text(f"    {c.check.text()}"))
    return 0


def _run(store: Store, settings: config.Settings, args: argparse.Namespace) -> int:
    from checkpoint.checks.active import gather as gather_checks
    from checkpoint.checks.model import FORMATS
    from checkpoint.checks.report import render, summary
    from checkpoint.checks.run import FilesUnknown, all_files, changed_files, given_files, run_checks
    from checkpoint.repository import repository_of

    if args.format not in FORMATS:
        return _usage(f"--format: unknown format {args.format!r} (allowed: {', '.join(FORMATS)})")
    if args.all_files and args.paths:
        return _usage("give PATHs or --all-files, not both")
    where = folder(args)
    repository = repository_of(where)
    root = repository.root if repository else where
    gathered = gather_checks(store, where, settings.decisions_dir)
    try:
        if args.paths:
            files = given_files(root, args.paths, repository is not None)
        elif args.all_files:
            files = all_files(root, repository is not None)
        elif repository is None:
            return _usage(f"{where} is in no git repository: give PATHs or --all-files")
        else:
            files = changed_files(root, args.since)
    except FilesUnknown as exc:
        return _usage(str(exc))
    run = run_checks(root, files, gathered.active)
    run.issues = [*gathered.issues, *run.issues]
    out = render(run, args.format)
    if out:
        print(out)
    if args.format == "text":
        for issue in run.issues:
            print(plain_text(f"checkpoint check: check {issue.check_id} (item {issue.item_id}) cannot act: "
                             f"{issue.message}"), file=sys.stderr)
        waiting = (f"; {plural(gathered.waiting, 'check')} proposed, not acting until accepted"
                   if gathered.waiting else "")
        print(plain_text(f"checkpoint check: {summary(run)}{waiting}."), file=sys.stderr)
    return 1 if run.hits else 0


def check_issues(store: Store, settings: config.Settings, where: str) -> list[Any]:
    """The checks that cannot act for the repository `where` is in (checks.engine.CheckIssue)."""
    from checkpoint.checks.active import gather as gather_checks
    from checkpoint.checks.engine import Engine

    gathered = gather_checks(store, where, settings.decisions_dir)
    return [*gathered.issues, *Engine(gathered.active).issues]


def status_lines(store: Store, settings: config.Settings, where: str) -> list[str]:
    """For `checkpoint status`: the checks that cannot act, one line each (none: nothing said)."""
    issues = check_issues(store, settings, where)
    if not issues:
        return []
    return [f"Checks that cannot act ({len(issues)}; fix the record's line, or `checkpoint check dismiss ID`):",
            *(plain_text(f"  {i.check_id} (item {i.item_id}): {i.message}") for i in issues)]
