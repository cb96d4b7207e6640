"""The shapes every layer agrees on: what readers learn about sessions, chunks sent to an extractor,
what a request cost. Plain dataclasses: `checkpoint scan` and `status` never load pydantic, which
validates only what a model answers (`checkpoint.answer`). The read-only records, read by attribute
and never replaced, are NamedTuples: every command's start defines them all, and a frozen dataclass
costs ~0.6 ms to define on Python 3.11 (its methods are compiled one by one), a NamedTuple ~0.15 ms."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"  # tool calls and their results: context for the model, never a source of heuristics


class ChunkState(StrEnum):
    PENDING = "pending"  # formed, never answered
    SENT = "sent"  # leased to a running extraction; reverts to pending when the lease expires
    CAPTURED = "captured"  # answer parsed, validated and committed
    FAILED = "failed"  # last attempt failed; cause recorded; retried on the next run


class ItemKind(StrEnum):
    DECISION = "decision"
    CONSTRAINT = "constraint"
    QUESTION = "question"


class Citation(StrEnum):
    """How an item knows where it came from."""

    TURNS = "turns"  # the turns the model cited (those of them in the chunk)
    CHUNK = "chunk"  # the model cited no turn of the chunk: attributed to the chunk's turns instead


class ItemState(StrEnum):
    NEW = "new"
    ACCEPTED = "accepted"
    DISMISSED = "dismissed"


@dataclass(slots=True)
class SessionInfo:
    """What a reader learns about the session a file belongs to (all optional; newest wins for title)."""

    id: str
    agent: str
    cwd: str | None = None
    title: str | None = None
    # Every folder the session worked in (cd, a relocation, a Codex turn in another cwd) that this
    # batch newly saw: all count for workspace scoping, `cwd` (the first) stays the session's own.
    cwds: tuple[str, ...] = ()


@dataclass(frozen=True)
class FileCursor:
    """How far a file has been consumed, and what it looked like then."""

    path: str
    dev: int = 0
    inode: int = 0
    size: int = 0
    mtime_ns: int = 0
    offset: int = 0  # end of the last consumed line
    line_no: int = 0  # lines consumed so far
    head_hash: str = ""  # hash of the first head_len bytes, to notice a file replaced in place
    head_len: int = 0


@dataclass(frozen=True, slots=True)
class FileEdit:
    """What an agent wrote to a file in one tool call: the file (absolute when the session's folder
    was known) and the text written there (a whole file's content, or the new side of a change)."""

    path: str
    text: str


@dataclass(slots=True)
class TurnDraft:
    """A turn as a reader sees it; the store gives it its place (seq) in the session."""

    id: str
    role: Role
    text: str
    files: tuple[str, ...] = ()
    timestamp: str | None = None
    message_id: str | None = None
    redacted: dict[str, int] | None = None  # secrets the pipeline replaced in `text`, by kind
    edits: tuple[FileEdit, ...] = ()  # what the turn's tool calls wrote to files, in order


class ScannedTurn(NamedTuple):
    """A turn read from a file, ready to store: where it was read, and what it costs in a chunk."""

    draft: TurnDraft
    line_no: int  # the line of the file it was read from
    tokens: int  # estimated, header included
    header_tokens: int  # of those, the header the prompt gives it


class LineProblem(NamedTuple):
    """What was wrong with one line of a file being read (0: the file as a whole)."""

    line_no: int
    message: str


class ProblemKind(StrEnum):
    LINE = "line"  # a line (or the file's state at a line: rewritten, cut short) read with a problem
    UNREADABLE = "unreadable"  # a file that cannot be read at all (not a file, no permission, gone)
    UNLISTABLE = "unlistable"  # a directory under a root that cannot be listed
    VANISHED = "vanished"  # a file read before that is no longer there


class ReadProblem(NamedTuple):
    """A problem a scan met, said once on stderr (CLI) or in the editor (daemon)."""

    path: str
    line: int | None  # None: the file or directory as a whole
    kind: ProblemKind
    message: str

    @property
    def text(self) -> str:
        return f"{self.path}: {self.message}" if self.line is None else f"{self.path}:{self.line}: {self.message}"


@dataclass(slots=True)
class TurnSlice:
    """The part of one turn that a chunk carries: the whole text, or one part of a split turn."""

    turn_id: str
    seq: int
    role: Role
    text: str
    files: tuple[str, ...] = ()
    timestamp: str | None = None
    part: int = 1
    parts: int = 1
    char_start: int = 0  # where this part starts in the turn's text (a part of a split turn)


@dataclass(slots=True)
class KnownItem:
    """An item already recorded for the session, shown to a model so that a restatement in a later
    chunk can point at it (`same_as`) instead of becoming a second item."""

    id: str
    kind: ItemKind
    statement: str


@dataclass(slots=True)
class ChunkInput:
    """Everything an extractor gets: one chunk of one session, never more than the budget."""

    chunk_id: int
    session_id: str
    agent: str
    cwd: str | None
    turns: list[TurnSlice]
    token_estimate: int
    known_items: list[KnownItem] = field(default_factory=list)


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    requests: int = 0
    cost_usd: float = 0.0

    def add(self, more: Usage) -> None:
        self.input_tokens += more.input_tokens
        self.output_tokens += more.output_tokens
        self.cache_creation_input_tokens += more.cache_creation_input_tokens
        self.cache_read_input_tokens += more.cache_read_input_tokens
        self.requests += more.requests
        self.cost_usd += more.cost_usd

    @property
    def tokens(self) -> int:
        """Every token billed: uncached and cached input, and output."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens + self.output_tokens

    def as_dict(self) -> dict[str, int | float]:
        # by hand: dataclasses.asdict deep-copies, and a status holds one Usage per session
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens, "requests": self.requests,
                "cost_usd": self.cost_usd}


class Totals(NamedTuple):
    """Turns captured / pending / failed summed over sessions (the `totals` of every status)."""

    turns: int = 0
    captured: int = 0
    pending: int = 0
    failed: int = 0

    @classmethod
    def of(cls, sessions: Sequence[SessionCounts]) -> Totals:
        return cls(turns=sum(s.turns for s in sessions), captured=sum(s.captured for s in sessions),
                   pending=sum(s.pending for s in sessions), failed=sum(s.failed for s in sessions))

    def as_dict(self) -> dict[str, int]:
        return {"turns": self.turns, "captured": self.captured, "pending": self.pending, "failed": self.failed}


def session_title(title: str | None, cwd: str | None) -> str:
    """What every surface shows as a session's title (the CLI's tables, the MCP tools): the title its
    transcript gave, else the folder it ran in (most transcripts have none)."""
    return title or cwd or ""


@dataclass
class SessionCounts:
    id: str
    agent: str
    title: str | None
    cwd: str | None
    turns: int = 0
    captured: int = 0
    pending: int = 0
    failed: int = 0
    watermark: int = 0
    last_ts: str | None = None
    causes: list[str] = field(default_factory=list)
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    problems: int = 0
    usage: Usage = field(default_factory=Usage)
    redacted: dict[str, int] = field(default_factory=dict)  # secrets replaced before storing, by kind
    # Claude Code deletes a transcript once it is cleanupPeriodDays old (by mtime): the newest of the
    # session's transcripts still on disk, and (set by status_model.with_risk, for the agents that
    # delete old transcripts) whether it goes soon while turns are not captured yet.
    newest_file_mtime: float | None = None
    at_risk: bool = False
    deletes_in_days: int | None = None
    held: list[Hold] = field(default_factory=list)  # what keeps its chunks that are not captured from a run

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agent": self.agent,
            "title": self.title,
            "cwd": self.cwd,
            "turns": self.turns,
            "captured": self.captured,
            "pending": self.pending,
            "failed": self.failed,
            "watermark": self.watermark,
            "last_ts": self.last_ts,
            "causes": self.causes,
            "dropped": self.dropped,
            "problems": self.problems,
            "usage": self.usage.as_dict(),
            "redacted": self.redacted,
            "at_risk": self.at_risk,
            "deletes_in_days": self.deletes_in_days,
            "held": [h.as_dict() for h in self.held],
        }


# C0 and C1 control characters but tab and newline (terminal escapes, NUL, backspace ...), and the
# bidirectional overrides and isolates that make text display in another order than it reads.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def plain_text(text: str) -> str:
    """The text without control characters (tab and newline stay): safe to print and to show."""
    return _CONTROL.sub("", text)


# Text Checkpoint itself hands an agent starts with one of these marks: the session-start context
# (checkpoint.agent.context) and the MCP tools' answers (checkpoint.agent.answers). When the agent
# writes that text back into its transcript, the reader knows it and leaves it out (policy
# `checkpoint_context`): what Checkpoint fed the agent never comes back as new decisions.
AGENT_CONTEXT_MARK = "Checkpoint context:"
AGENT_ANSWER_MARK = '{"checkpoint": '


# -- read models: what the store hands back to every layer above it ------------------------------


class ItemSource(NamedTuple):
    """A transcript line an item was extracted from (a cited turn still stored)."""

    turn_id: str
    path: str  # the transcript file
    line: int  # 1-based line in it
    timestamp: str | None
    role: str | None = None  # who said it: "user" (the person) or "assistant" (the agent)

    def as_json(self) -> dict[str, Any]:
        return {"turn_id": self.turn_id, "path": self.path, "line": self.line, "timestamp": self.timestamp,
                "role": self.role}


ORIGIN_LOCAL = "local"
ORIGIN_SHARED = "shared"
# The session that holds the items read from a repository's decision records, one per workspace:
# `team:` + the workspace (checkpoint.repository), agent TEAM_AGENT.
TEAM_SESSION_PREFIX = "team:"
TEAM_AGENT = "team"


class SharedDecision(NamedTuple):
    """A decision record of a repository (checkpoint.team.records), as read from its file: what the
    repository says of the item, which wins over the local copy."""

    id: str
    kind: ItemKind
    statement: str
    rationale: str | None
    files: tuple[str, ...]
    state: ItemState  # from the record's status: proposed -> new, accepted, rejected/deprecated -> dismissed
    status: str  # the record's status as written
    date: str  # YYYY-MM-DD
    supersedes: tuple[str, ...]
    superseded_by: tuple[str, ...]
    path: str  # relative to the repository's top folder
    decision_makers: str = ""  # who the record says decided, as written: its author's claim
    held: bool = False  # reads as an instruction planted for an agent (checkpoint.extract.held)


class ItemRecord(NamedTuple):
    """A captured item, with its session's title and cwd and the transcript lines it came from."""

    id: str
    session_id: str
    kind: ItemKind
    statement: str
    rationale: str | None
    confidence: float
    turn_ids: tuple[str, ...]
    files: tuple[str, ...]
    state: ItemState
    extractor: str
    created_at: float
    session_title: str | None
    cwd: str | None
    sources: tuple[ItemSource, ...]
    cited: Citation = Citation.TURNS
    agent: str | None = None  # the session's agent ("claude", "codex"), where the read fills it in
    superseded_by: str | None = None  # the newest item that replaces this one; None: current
    supersedes: tuple[str, ...] = ()  # the items this one replaces
    origin: str = ORIGIN_LOCAL  # ORIGIN_LOCAL: captured here; ORIGIN_SHARED: a decision record in the repository
    record: str | None = None  # the decision record's path, relative to its repository's top folder
    # reads as a planted instruction to an agent (checkpoint.extract.held): agents see it once accepted
    held: bool = False
    accepted_here: bool = False  # this user accepted it (a record's "accepted" is its author's claim)
    record_by: str | None = None  # who the decision record says decided (its decision-makers), as written
    # False: an order about the task at hand (checkpoint.extract.one_off): shown in its session, given to
    # no later session, reminder, MCP answer (unless asked for) or shared record
    lasting: bool = True
    # path -> "statement" | "edit" | "statement+edit": where each file came from (checkpoint.extract.item_files);
    # empty for items stored before it was kept
    file_sources: dict[str, str] = {}  # noqa: RUF012 - a NamedTuple default, never mutated
    # a question answered later (checkpoint.store.answered): the answering item and the turn that says it
    answered_by: str | None = None
    answered_turn: str | None = None

    @property
    def accepted_by_user(self) -> bool:
        """Accepted by this user, here: the only acceptance that releases a held item to agents (a
        record's status may say otherwise afterwards: the user's acceptance of this text stands)."""
        return self.accepted_here and self.state is not ItemState.DISMISSED

    @property
    def held_back(self) -> bool:
        """Held for the user's review and not accepted by this user yet: no agent is shown it."""
        return self.held and not self.accepted_by_user

    def as_json(self) -> dict[str, Any]:
        """The shape of `checkpoint items --json` (by hand: dataclasses.asdict deep-copies, and slowly)."""
        return {
            "id": self.id, "session_id": self.session_id, "kind": self.kind.value, "statement": self.statement,
            "rationale": self.rationale, "confidence": self.confidence, "turn_ids": list(self.turn_ids),
            "files": list(self.files), "state": self.state.value, "extractor": self.extractor,
            "created_at": self.created_at, "session_title": self.session_title, "cwd": self.cwd,
            "sources": [s.as_json() for s in self.sources], "cited": self.cited.value,
            "superseded_by": self.superseded_by, "supersedes": list(self.supersedes),
            "origin": self.origin, "record": self.record, "held": self.held, "agent": self.agent,
            "lasting": self.lasting, "file_sources": self.file_sources, "answered_by": self.answered_by,
            "answered_turn": self.answered_turn,
        }


class StoredProblem(NamedTuple):
    """A problem a scan recorded with the file it was met in (`status` lists the newest)."""

    path: str
    line: int
    message: str
    session_id: str | None

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "message": self.message, "session_id": self.session_id}


class ForgottenSession(NamedTuple):
    """A session forgotten on request: not read in again until it is unforgotten."""

    session_id: str
    forgotten_at: float
    turns: int

    def as_json(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "forgotten_at": self.forgotten_at, "turns": self.turns}


# -- run reports ------------------------------------------------------------------------------------


@dataclass
class Failure:
    chunk_id: int
    session_id: str
    cause: str
    lost: bool = False  # not failed: another runner holds the chunk now (see LEASE_LOST)

    def as_dict(self) -> dict[str, Any]:
        return {"chunk_id": self.chunk_id, "session_id": self.session_id, "cause": self.cause, "lost": self.lost}


# A run stalled past its lease (a machine asleep, a stopped process) and another runner leased the chunk:
# this run's answer, or its failure, is not recorded. The chunk is not captured, and not failed either.
class HoldKind(StrEnum):
    """What keeps a chunk that is not captured from being claimed now."""

    LEASED = "leased"  # leased by a live run on this machine (its pid is known)
    LEASED_ELSEWHERE = "leased_elsewhere"  # leased by a run whose life cannot be told: until the lease ends
    BACKOFF = "backoff"  # failed; background runs wait until the backoff ends (an explicit run retries at once)


class Hold(NamedTuple):
    """Chunks of one session held the same way: by one live run, by leases of unknown owners, or by
    one failure cause's backoff. `until`: the latest lease end or backoff end among them."""

    session_id: str
    kind: HoldKind
    chunks: int
    turns: int
    until: float
    pid: int | None = None
    cause: str | None = None

    def phrase(self) -> str:
        """"2 chunks (9 turns) leased by a live run (pid 4242), lease renewed until 10:04:05"."""
        at = time.strftime("%H:%M:%S", time.localtime(self.until))
        what = f"{plural(self.chunks, 'chunk')} ({plural(self.turns, 'turn')})"
        if self.kind is HoldKind.LEASED:
            return f"{what} leased by a live run (pid {self.pid}), lease renewed until {at}"
        if self.kind is HoldKind.LEASED_ELSEWHERE:
            return (f"{what} leased by a run on another machine or one whose life cannot be told,"
                    f" due again when its lease ends at {at}")
        return f"{what} in backoff until {at} after a failure: {self.cause or 'cause not recorded'}"

    def as_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "kind": self.kind.value, "chunks": self.chunks, "turns": self.turns,
                "until": self.until, "pid": self.pid, "cause": self.cause}


LEASE_LOST = "lease lost: another worker took this chunk over after its lease expired; this run's {} was discarded"

_KIND_WORDS = {"decision": ("decision", "decisions"), "constraint": ("constraint", "constraints"),
               "question": ("open question", "open questions")}


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def kinds_phrase(counts: Counter[str]) -> str:
    """"2 decisions, 1 open question": the kinds present, in their fixed order."""
    return ", ".join(plural(counts[k], *_KIND_WORDS[k]) for k in ("decision", "constraint", "question") if counts[k])


# Why validation (runner.validate) drops an item of an answer, as RunReport.items_dropped counts it:
# its only sources were tool output, what was run and read, not said (issue 32).
TOOL_OUTPUT_ONLY = "tool_output_only"


@dataclass
class RunReport:
    """What one checkpoint run did: its one JSON form (`as_dict`, the `run` of `checkpoint now --json`
    and of the daemon's run summary) and its one sentence (`sentence`), for every front end."""

    run_id: int
    extractor: str
    tried: int = 0
    captured: int = 0
    failed: int = 0
    lost: int = 0  # leased by another runner before this run could record its answer: not captured
    resplit: int = 0  # chunks replaced by smaller ones (their pieces are tried in the same run)
    items_added: int = 0
    items_attributed: int = 0  # items of committed answers that cited no turn of their chunk (Citation.CHUNK)
    # items of committed answers that validation dropped, by reason (TOOL_OUTPUT_ONLY)
    items_dropped: Counter[str] = field(default_factory=Counter)
    total: int = 0  # chunks due when the run started, plus pieces added by re-splits
    usage: Usage = field(default_factory=Usage)
    failures: list[Failure] = field(default_factory=list)
    stopped_by: str | None = None
    models: Counter[str] = field(default_factory=Counter)  # answers per model (fallbacks show here)
    # what is still due when the run ends, and what finishing it should cost (priced extractors)
    left_chunks: int = 0
    left_tokens: int = 0
    left_estimate: Usage | None = None
    # secrets found right before sending (in rows stored before redaction was on or a pattern was
    # added), by kind; the chunks went out without them
    redacted: Counter[str] = field(default_factory=Counter)
    new_kinds: Counter[str] = field(default_factory=Counter)  # items new since the run started, by kind
    # what keeps chunks of the run's sessions that are not captured from being claimed, when it ends
    held: list[Hold] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.lost == 0

    @property
    def done(self) -> int:
        return self.captured + self.failed + self.lost

    def lose(self, chunk: ChunkInput, what: str) -> None:
        self.lost += 1
        self.failures.append(Failure(chunk.chunk_id, chunk.session_id, LEASE_LOST.format(what), lost=True))

    def sentence(self) -> str:
        """"Extracted 3 chunks with the anthropic extractor: 3 captured, 0 failed; 4 new items (...)."."""
        found = f" ({kinds_phrase(self.new_kinds)})" if self.new_kinds else ""
        resplit = f", {self.resplit} re-split into smaller chunks" if self.resplit else ""
        lost = f", {self.lost} not captured (taken over by another worker)" if self.lost else ""
        n, their = self.items_attributed, "its" if self.items_attributed == 1 else "their"
        attributed = f" {plural(n, 'item')} cited no turn of {their} chunk: attributed to the chunk." if n else ""
        tool_only = self.items_dropped.get(TOOL_OUTPUT_ONLY, 0)
        dropped = (f" {plural(tool_only, 'item')} dropped: {'it' if tool_only == 1 else 'they'} cited only tool"
                   " output (what was run or read), which no one in the session said." if tool_only else "")
        return (f"Extracted {plural(self.tried, 'chunk')} with the {self.extractor} extractor: "
                f"{self.captured} captured, {self.failed} failed{lost}{resplit}; "
                f"{plural(self.items_added, 'new item')}{found}.{attributed}{dropped}")

    def held_sentence(self) -> str | None:
        """What holds the chunks left, in one sentence; None when nothing holds any. A run that tried
        nothing says this instead of "Nothing new to extract": the work is there, something holds it."""
        if not self.held:
            return None
        chunks, turns = sum(h.chunks for h in self.held), sum(h.turns for h in self.held)
        shown = "; ".join(f"session {h.session_id[:8]}: {h.phrase()}" for h in self.held[:5])
        more = f"; and {plural(len(self.held) - 5, 'more hold')}" if len(self.held) > 5 else ""
        lead = "Nothing extracted: " if not self.tried else "Still held: "
        return f"{lead}{plural(chunks, 'chunk')} ({plural(turns, 'turn')}) not due now ({shown}{more})."

    def as_dict(self) -> dict[str, Any]:
        return {
            "extractor": self.extractor,
            "tried": self.tried,
            "captured": self.captured,
            "failed": self.failed,
            "lost": self.lost,
            "resplit": self.resplit,
            "items_added": self.items_added,
            "items_attributed": self.items_attributed,
            "items_dropped": dict(sorted(self.items_dropped.items())),
            "usage": self.usage.as_dict(),
            "models": dict(self.models),
            "stopped_by": self.stopped_by,
            "redacted": dict(sorted(self.redacted.items())),
            "left": {
                "chunks": self.left_chunks,
                "tokens": self.left_tokens,
                "estimate": self.left_estimate.as_dict() if self.left_estimate else None,
            },
            "failures": [f.as_dict() for f in self.failures],
            "held": [h.as_dict() for h in self.held],
            "sentence": self.sentence(),
        }

    def absorb(self, part: RunReport) -> None:
        """Add a later run's counts to this one (one run over several sessions, one session at a time)."""
        for name in ("tried", "captured", "failed", "lost", "resplit", "items_added", "items_attributed", "total"):
            setattr(self, name, getattr(self, name) + getattr(part, name))
        self.usage.add(part.usage)
        self.failures += part.failures
        self.models.update(part.models)
        self.redacted.update(part.redacted)
        self.items_dropped.update(part.items_dropped)
        self.stopped_by = part.stopped_by or self.stopped_by
