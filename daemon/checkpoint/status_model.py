"""The status read model: what `checkpoint status`, `checkpoint now`, the daemon's `checkpoint/status`
and `checkpoint/sessions` and the agent front ends show about capture, as typed records built from
the store's (per-session counts, problems, forgotten sessions). Every surface reads the records by
attribute; the JSON they print or send is made once, by `as_dict`, at the edge."""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from checkpoint import config
from checkpoint.model import TEAM_SESSION_PREFIX, ForgottenSession, SessionCounts, StoredProblem, Totals, Usage
from checkpoint.pipeline import DAY
from checkpoint.sources import EXPIRING
from checkpoint.status_counts import CountsCache
from checkpoint.store import Store


def with_risk(
    sessions: Sequence[SessionCounts], cleanup_days: float | None = None, at_risk_days: float = config.AT_RISK_DAYS,
    now: float | None = None, agents: Collection[str] = EXPIRING, in_place: bool = False,
    kept: CountsCache | None = None,
) -> list[SessionCounts]:
    """The sessions, in order, each of `agents` (those whose CLI deletes old transcripts: Claude Code)
    with `deletes_in_days` set when it has a transcript on disk (whole days until Claude Code deletes
    its newest one: cleanupPeriodDays after its mtime) and `at_risk` when that is at most
    `at_risk_days` away while some of its turns are not captured. `in_place`: set on the records
    given (the caller owns them: status_counts' kept counts, set again every status), not copies.
    `kept`: those counts' cache, which remembers until when each record's answer stands (the next
    whole day, or the days at risk reached): only the records re-read or due are worked out again."""
    cleanup = config.claude_cleanup_days() if cleanup_days is None else cleanup_days
    now = time.time() if now is None else now
    until = None
    if kept is not None:
        if kept.risk_basis != (cleanup, at_risk_days):
            kept.risk_until, kept.risk_basis = {}, (cleanup, at_risk_days)
        until = kept.risk_until
    out = []
    for s in sessions:
        if s.newest_file_mtime is None or s.agent not in agents:
            out.append(s)
            continue
        if until is not None and (stands := until.get(s.id)) is not None and stands[0] is s and now < stands[1]:
            out.append(s)  # in place, as set before
            continue
        left = cleanup - (now - s.newest_file_mtime) / DAY
        days, risk = max(0, math.floor(left)), left <= at_risk_days and s.pending + s.failed > 0
        if until is not None:  # `left` falls with the clock: the answer changes at its next whole day or at risk
            changes = [left - math.floor(left)] if left > 0 else []
            if left > at_risk_days:
                changes.append(left - at_risk_days)
            until[s.id] = (s, now + min(changes) * DAY if changes else math.inf)
        if in_place or until is not None:  # replace() is half the cost of a status over thousands of sessions
            s.deletes_in_days, s.at_risk = days, risk
            out.append(s)
        else:
            out.append(replace(s, deletes_in_days=days, at_risk=risk))
    return out


def redacted_totals(sessions: Sequence[SessionCounts]) -> dict[str, int]:
    """Secrets replaced before storing, by kind, summed over the sessions (kinds in order)."""
    out: Counter[str] = Counter()
    for s in sessions:
        out.update(s.redacted)
    return dict(sorted(out.items()))


def is_team_session(session_id: str | None) -> bool:
    """The session that holds a repository's decision records (store.shared.team_session)."""
    return session_id is not None and session_id.startswith(TEAM_SESSION_PREFIX)


def usage_of(sessions: Sequence[SessionCounts]) -> Usage:
    spent = Usage()
    for s in sessions:
        spent.add(s.usage)
    return spent


class Status(NamedTuple):
    """The status every surface shows (the contract of `status --json`): the sessions with their
    counts (each says what was redacted in it and whether its transcript is about to be deleted),
    the newest problems and the sessions forgotten on request; totals, usage and redaction counts
    follow from the sessions."""

    sessions: tuple[SessionCounts, ...]
    problems: tuple[StoredProblem, ...]
    forgotten: tuple[ForgottenSession, ...]

    @property
    def totals(self) -> Totals:
        return Totals.of(self.sessions)

    @property
    def at_risk(self) -> list[SessionCounts]:
        return [s for s in self.sessions if s.at_risk]

    @property
    def usage(self) -> Usage:
        return usage_of(self.sessions)

    @property
    def record_problems(self) -> tuple[StoredProblem, ...]:
        """The decision records of a repository that cannot be read (one each, file:line): the
        problems of its team session (checkpoint.team)."""
        return tuple(p for p in self.problems if is_team_session(p.session_id))

    @property
    def transcript_problems(self) -> tuple[StoredProblem, ...]:
        """The rest: lines of transcripts (and files beside them) a scan could not read."""
        return tuple(p for p in self.problems if not is_team_session(p.session_id))

    @property
    def redacted(self) -> dict[str, int]:
        return redacted_totals(self.sessions)

    def as_dict(self, with_sessions: bool = True, sums: tuple[Totals, Usage, dict[str, int]] | None = None,
                ) -> dict[str, Any]:
        """The JSON form; without `sessions` for a caller that sends them its own way (the daemon).
        `sums`: (totals, usage, redacted) as a caller keeps them (status_counts.CountsCache.sums)."""
        sessions = {"sessions": [s.as_dict() for s in self.sessions]} if with_sessions else {}
        totals, usage, redacted = sums if sums is not None else (self.totals, self.usage, self.redacted)
        return {"totals": totals.as_dict(), **sessions,
                "problems": [p.as_json() for p in self.problems], "usage": usage.as_dict(),
                "redacted": redacted, "forgotten": [f.as_json() for f in self.forgotten]}


def read_status(
    store: Store, session_ids: Sequence[str] | None = None, at_risk_days: float = config.AT_RISK_DAYS,
    counts: CountsCache | None = None,
) -> Status:
    """The status of these sessions (None: every session); `counts`: the counts kept since the last
    status, re-read for the sessions changed since (the daemon)."""
    read = counts.read(store, session_ids) if counts is not None else store.session_counts(session_ids)
    sessions = with_risk(read, at_risk_days=at_risk_days, in_place=counts is not None, kept=counts)
    return Status(sessions=tuple(sessions), problems=tuple(store.problems()), forgotten=tuple(store.forgotten()))
