"""`checkpoint status`: captured, pending and failed turns per session, and what went wrong."""

from __future__ import annotations

import json
import os
import sys

from checkpoint import config, status_model
from checkpoint.cli.check import check_issues, status_lines
from checkpoint.cli.printing import in_days, print_table, print_totals, redactions, usage_line
from checkpoint.model import plain_text, plural
from checkpoint.store import Store


def status_command(store: Store, settings: config.Settings, as_json: bool) -> int:
    from checkpoint.agent.problems import recent as agent_problems  # a JSON file beside the database

    status = status_model.read_status(store, at_risk_days=settings.at_risk_days)
    if as_json:
        out = status.as_dict()
        out["agent_problems"] = [p.as_json() for p in agent_problems(settings.db, limit=50)]
        out["check_problems"] = [i.as_json() for i in check_issues(store, settings, os.getcwd())]
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    at_risk, forgotten = status.at_risk, status.forgotten
    # A repository's shared records are held by a session of its own (team:<workspace>, no turns): not
    # a session anyone ran, so not in the table; its records are counted on a line of their own.
    teams = [s.cwd or s.id for s in status.sessions if status_model.is_team_session(s.id)]
    sessions = [s for s in status.sessions if not status_model.is_team_session(s.id)]
    print_totals(sessions, sys.stdout)
    if teams:
        shared = sum(1 for i in store.items() if i.record)
        print(plain_text(f"Shared decision records: {plural(shared, 'item')} read from {', '.join(teams[:3])}"
                         " (`checkpoint items` says who shared each)."))
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
        if not status.record_problems:
            return 0
    if at_risk:
        soonest = min(s.deletes_in_days or 0 for s in at_risk)
        print(f"At risk: {plural(len(at_risk), 'session')} with turns not captured whose transcript Claude Code "
              f"deletes soon (the first {in_days(soonest)}); `checkpoint now` extracts them first.")
    if sessions:
        print_table(sessions)
    redacted = status.redacted
    if redacted:
        print(f"Redacted before storing: {redactions(redacted)}.")
    elif not settings.redact:
        print("Redaction is off (redact = false): secrets in transcripts are stored and sent as they are.")
    spent = status.usage
    if spent.requests:
        print(f"Spent on extraction so far: {usage_line(spent)}.")
    dropped: dict[str, list[int]] = {}
    for s in sessions:
        for policy, counts in s.dropped.items():
            agg = dropped.setdefault(policy, [0, 0])
            agg[0] += counts["records"]
            agg[1] += counts["chars"]
    if dropped:
        summary = ", ".join(f"{p} {plural(r, 'record')} ({plural(c, 'char')})" for p, (r, c) in sorted(dropped.items()))
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
