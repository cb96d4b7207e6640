"""Per-session counts kept between statuses, re-read only for the sessions that changed: the daemon's
status over a long history costs what changed, not the whole history (issue 40: 3,000 workspace
sessions with five growing cost 23-32 % of a core, 73 % of it re-reading every session's counts).

What changed comes from the database's change feed (migration "session changes": triggers number
every write to what counts are read from, by whichever process writes: this daemon, a second one,
`checkpoint now`), read `WHERE seq > last`. What depends on the clock rather than on a write (the
holds: leases that expire, failed chunks waiting out their backoff) is read again for every session
each time, from the few chunks that hold anything. A new connection (another database, reopened)
starts again from a full read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from checkpoint.model import SessionCounts, Totals, Usage
from checkpoint.store import Store


class CountsCache:
    """The counts of every session, as of the newest change read. One reader thread at a time."""

    def __init__(self) -> None:
        self._conn: object = None
        self._last = 0
        self._counts: dict[str, SessionCounts] = {}
        self.reread = 0  # sessions read again at the last `read` (all of them on a full read)
        # each session's as_dict, with what it was made from (the record kept, what the clock sets, its
        # workspace folder)
        self._shown: dict[str, tuple[SessionCounts, tuple[Any, ...], dict[str, Any]]] = {}
        # sums over the sessions of the last `sums`, each record as it was added
        self._summed: dict[str, SessionCounts] = {}
        self._totals = [0, 0, 0, 0]  # turns, captured, pending, failed
        self._usage = [0, 0, 0, 0, 0]  # Usage's token counts and requests (its cost is summed again)
        self._redacted: Counter[str] = Counter()
        self._kinds: Counter[str] = Counter()  # how many sessions name each kind of secret
        self._cost = 0.0
        self._digested: tuple[list[dict[str, Any]], str] | None = None
        self._ordered: list[SessionCounts] = []  # every session kept, in session_counts' order
        self._held: set[str] = set()  # the sessions something held at the last read
        # status_model.with_risk's answer for each session (the record, and until when it stands),
        # and what it was worked out with (Claude Code's cleanup period, the days at risk)
        self.risk_until: dict[str, tuple[SessionCounts, float]] = {}
        self.risk_basis: tuple[float, float] | None = None

    def read(self, store: Store, session_ids: Sequence[str] | None = None) -> list[SessionCounts]:
        """store.session_counts(session_ids), from what was kept and the sessions changed since."""
        last, changed = store.session_changes(self._last if store.conn is self._conn else -1)
        if store.conn is not self._conn or last < self._last:
            self._counts = {s.id: s for s in store.session_counts()}
            self._conn, self.reread = store.conn, len(self._counts)
            self._ordered = _in_order(self._counts.values())
            self._held = set()
        else:
            fresh = {s.id: s for s in store.session_counts(changed)} if changed else {}
            for session_id in changed:
                if session_id in fresh:
                    self._counts[session_id] = fresh[session_id]
                else:
                    self._counts.pop(session_id, None)  # forgotten
                    self._shown.pop(session_id, None)
            self.reread = len(changed)
            if changed:  # the others keep their places: the changed ones are placed again
                gone = set(changed)
                self._ordered = [s for s in self._ordered if s.id not in gone]
                for session_id in changed:
                    if session_id in fresh:
                        _place(self._ordered, fresh[session_id])
            for session_id in self._held:  # what held a session at the last read may have ended
                if session_id in self._counts:
                    self._counts[session_id].held = []
            self._held = set()
            for hold in store.holds():
                if hold.session_id in self._counts:
                    self._counts[hold.session_id].held.append(hold)
                    self._held.add(hold.session_id)
        self._last = last
        if session_ids is None:
            return list(self._ordered)
        wanted = set(session_ids)
        return [s for s in self._ordered if s.id in wanted]

    def shown(self, s: SessionCounts, workspace: str | None) -> dict[str, Any]:
        """s.as_dict() with its `workspace`, made again only when the session was re-read, its holds or
        risk changed or its folder did. The same dict while it is the same: not to be changed."""
        clock = (s.at_risk, s.deletes_in_days, tuple(s.held), workspace)
        kept = self._shown.get(s.id)
        if kept is None or kept[0] is not s or kept[1] != clock:
            shown = s.as_dict()
            shown["workspace"] = workspace
            kept = (s, clock, shown)
            self._shown[s.id] = kept
        return kept[2]

    def sums(self, sessions: Sequence[SessionCounts]) -> tuple[Totals, Usage, dict[str, int]]:
        """(Totals.of, status_model.usage_of, status_model.redacted_totals) of these sessions (records
        this cache read): what changed since the last call is taken out and added, the rest kept. The
        integers are exact either way; the cost, a float, is summed again in order when it changed."""
        before = self._summed
        now: dict[str, SessionCounts] = {}
        cost_changed = False
        matched = 0  # sessions of the last call here again: fewer than there were, some have left
        for s in sessions:
            now[s.id] = s
            old = before.get(s.id)
            matched += old is not None
            if old is not s:
                if old is not None:
                    self._count(old, -1)
                self._count(s, 1)
                cost_changed |= (old.usage.cost_usd if old is not None else 0.0) != s.usage.cost_usd
        if matched < len(before):
            for session_id, old in before.items():
                if session_id not in now:
                    self._count(old, -1)
                    cost_changed |= old.usage.cost_usd != 0.0
        self._summed = now
        if cost_changed:
            self._cost = sum(s.usage.cost_usd for s in sessions)
        turns, captured, pending, failed = self._totals
        tokens_in, tokens_out, cache_creation, cache_read, requests = self._usage
        usage = Usage(tokens_in, tokens_out, cache_creation, cache_read, requests, self._cost if sessions else 0.0)
        redacted = {kind: self._redacted[kind] for kind in sorted(self._kinds)}
        return Totals(turns, captured, pending, failed), usage, redacted

    def _count(self, s: SessionCounts, sign: int) -> None:
        totals, usage, spent = self._totals, self._usage, s.usage
        totals[0] += sign * s.turns
        totals[1] += sign * s.captured
        totals[2] += sign * s.pending
        totals[3] += sign * s.failed
        usage[0] += sign * spent.input_tokens
        usage[1] += sign * spent.output_tokens
        usage[2] += sign * spent.cache_creation_input_tokens
        usage[3] += sign * spent.cache_read_input_tokens
        usage[4] += sign * spent.requests
        for kind, n in s.redacted.items():
            self._redacted[kind] += sign * n
            self._kinds[kind] += sign
            if not self._kinds[kind]:
                del self._kinds[kind], self._redacted[kind]

    def digest_of(self, shown: list[dict[str, Any]], make: Callable[[list[dict[str, Any]]], str]) -> str:
        """make(shown), for a list of dicts made by `shown`: made again only when one of them is not
        the dict it was at the last call (a session re-read, its holds, risk or folder changed)."""
        last = self._digested
        if last is None or len(last[0]) != len(shown) or any(a is not b for a, b in zip(last[0], shown, strict=True)):
            last = self._digested = (shown, make(shown))
        return last[1]


def _before(a: SessionCounts, b: SessionCounts) -> bool:
    """session_counts' order: the latest activity first, then by id."""
    at, bt = a.last_ts or "", b.last_ts or ""
    return at > bt or (at == bt and a.id < b.id)


def _in_order(sessions: Iterable[SessionCounts]) -> list[SessionCounts]:
    ordered = sorted(sessions, key=lambda s: s.id)
    ordered.sort(key=lambda s: s.last_ts or "", reverse=True)
    return ordered


def _place(ordered: list[SessionCounts], s: SessionCounts) -> None:
    """Insert `s` where session_counts' order puts it (a binary search: the list is in that order)."""
    low, high = 0, len(ordered)
    while low < high:
        middle = (low + high) // 2
        if _before(ordered[middle], s):
            low = middle + 1
        else:
            high = middle
    ordered.insert(low, s)
