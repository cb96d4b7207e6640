"""Every name the daemon and its clients agree on. The VS Code extension mirrors this module in
TypeScript (constants.ts); rename nothing here without renaming it there.

Payloads use the same snake_case keys as `checkpoint status --json` and `checkpoint items --json`,
so one reader of the JSON serves the CLI and the editor alike.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NotRequired, Required, TypedDict
from urllib.parse import quote

SERVER_NAME = "checkpoint"

# -- custom methods ---------------------------------------------------------------------------------

CHECKPOINT_STATUS = "checkpoint/status"
"""Server -> client notification, sent whenever a count or the run state changes. Params: Status.
`totals` count every session in scope; the workspace folders' sessions come as a delta
(`workspace_sessions`: the sessions changed since the status before, by id), which a client applies
to its copy, and asks CHECKPOINT_WORKSPACE_SESSIONS for the whole list when its `since` is not the
version the copy is at."""

CHECKPOINT_WORKSPACE_SESSIONS = "checkpoint/workspaceSessions"
"""Client -> server request. Params: none (or {}). Result: WorkspaceSessionsResult, the workspace
folders' sessions exactly as the statuses sent so far left them, with the version of the last one."""

CHECKPOINT_SESSIONS = "checkpoint/sessions"
"""Client -> server request. Params: SessionsQuery (every key optional). Result: SessionsResult,
every session in scope (or one page), newest turn first. Ask again when a status's `others_version`
differs from the one seen when last asked."""

CHECKPOINT_ITEMS = "checkpoint/items"
"""Client -> server request. Params: ItemsQuery (every key optional). Result: ItemsResult."""

CHECKPOINT_SEARCH = "checkpoint/search"
"""Client -> server request. Params: SearchQuery (or the query as a bare string). Result:
SearchResponse, the items best first; an empty query answers empty `terms` and no items."""

CHECKPOINT_TURN = "checkpoint/turn"
"""Client -> server request. Params: {"item": item_id} (or the id bare). Result: TurnResult, the
item and the turns it cites (whole, up to 20,000 characters each) with the turns around them in the
exchange (their start): what VS Code's Open Turn renders. An unknown id is InvalidParams."""

CHECKPOINT_TRANSCRIPTS = "checkpoint/transcripts"
"""Client -> server request. Params: {"session": session_id} (or the id bare). Result:
TranscriptsResult, the session's transcript files still on disk, the latest written first: what the
panel's Open Transcript opens. An unknown session is InvalidParams."""

# -- workspace/executeCommand ids -------------------------------------------------------------------

CMD_NOW = "checkpoint.now"
"""Arguments: none, or [session_id], or [{"session": session_id}]. Result: NowResult."""

CMD_DISMISS = "checkpoint.dismiss"
"""Arguments: [item_id]. The item stops producing diagnostics. Result: TriageResult."""

CMD_ACCEPT = "checkpoint.accept"
"""Arguments: [item_id]. Result: TriageResult."""

CMD_REOPEN = "checkpoint.reopen"
"""Arguments: [item_id]. The item is new again (neither accepted nor dismissed): the editor's Undo of
an Accept or a Dismiss. Result: TriageResult."""

CMD_SUPERSEDE = "checkpoint.supersede"
"""Arguments: [SupersedeArgs] or [old_id, new_id]. `new` supersedes `old` (kept, marked; a dismissed
item may be superseded); with `undo`, the link is removed (every link from `old` when `new` is not
given). A link that would close a loop, an unknown id or an item superseding itself is refused with
InvalidParams and a message that says which. Result: SupersedeResult."""

CMD_SHARE = "checkpoint.share"
"""Arguments: [item_id] or [{"id": item_id, "undo"?: bool}]. Writes the item's decision record into the
repository of the workspace folder it belongs to (not committed); with `undo`, removes a record not yet
committed. A refusal (a secret found, no repository, a committed record) is InvalidParams with the
sentence that says why. Result: ShareResult."""

CMD_FORGET = "checkpoint.forget"
"""Arguments: [session_id] or [{"session": session_id, "undo"?: bool}]. Removes everything stored for
the session (turns, chunks, its items, counts; an item other sessions said too stays with them),
compacts the database and reads its transcripts no more, as `checkpoint forget` does; with `undo`, the
next scan reads them in again from their start. A repository's team session (its decision records) is
refused: those are the records' to remove. An unknown session is InvalidParams. Result: ForgetResult."""

COMMANDS = (CMD_NOW, CMD_DISMISS, CMD_ACCEPT, CMD_REOPEN, CMD_SUPERSEDE, CMD_SHARE, CMD_FORGET)

# -- the editor's own commands, which the daemon links to (hover actions, a diagnostic's code) ------
# VS Code commands of the extension (its package.json declares them), not workspace/executeCommand
# ids: a link runs them in the editor, which shows the turn or asks before accepting a held item.
# Arguments: [item_id]. Clients without command links (Neovim) use the code actions instead.

EDITOR_OPEN_TURN = "checkpoint.openTurn"
EDITOR_ACCEPT = "checkpoint.acceptItem"
EDITOR_DISMISS = "checkpoint.dismissItem"
EDITOR_OPEN_RECORD = "checkpoint.openRecord"
EDITOR_COMMANDS = (EDITOR_OPEN_TURN, EDITOR_ACCEPT, EDITOR_DISMISS, EDITOR_OPEN_RECORD)


def command_link(command: str, *arguments: str) -> str:
    """A `command:` URI that runs an editor command with these arguments when clicked."""
    return f"command:{command}?{quote(json.dumps(list(arguments)))}"


DIAGNOSTIC_SOURCE = "checkpoint"
"""`source` of every diagnostic the daemon publishes. Its `code` is the item's kind ("decision",
"constraint", "question") with a codeDescription linking to EDITOR_OPEN_TURN for the item; its
range is a few lines at most, never a whole file; its `data` is
{"item_id": ..., "session_id": ..., "kind": ..., "mark": "edited" | "named" | "line"} (how its lines
were found: those the session wrote, those naming what the statement names, or the file's first line
of code, then at Information severity at most), plus "superseded_by" (an item id) on a superseded
item's diagnostic, which is also tagged DiagnosticTag.Deprecated, "stale": true when the lines it
was anchored to were deleted or rewritten since the session, "held": true for an item held for
review, and "said": who said it, where and when (one plain line with a date). With the setting
`marks: "codelens"`, an item that needs no action (neither held nor stale) is a textDocument/codeLens
at its mark's first line instead, its command EDITOR_OPEN_TURN [item_id]."""

PROGRESS_TITLE = "Checkpoint"

# -- payload shapes (documentation for clients; the server builds plain dicts) ----------------------


class Totals(TypedDict):
    turns: int
    captured: int
    pending: int
    failed: int


class SessionStatus(TypedDict):
    id: str
    agent: str
    title: str | None
    cwd: str | None
    turns: int
    captured: int
    pending: int
    failed: int
    watermark: int
    last_ts: str | None
    causes: list[str]  # why chunks of this session failed, one entry per distinct cause
    dropped: dict[str, dict[str, int]]  # policy -> {"records", "chars"}
    problems: int  # transcript lines that could not be read
    usage: dict[str, float]  # what extracting this session cost: requests, tokens, cost_usd
    redacted: dict[str, int]  # secrets replaced before storing, by kind
    at_risk: bool  # Claude Code deletes the transcript soon while turns are not captured yet
    deletes_in_days: int | None
    workspace: str | None  # URI of the workspace folder holding the session's cwd, if any
    held: list[dict[str, Any]]  # what holds its pending chunks (model.Hold.as_dict)
    # checkpoint/sessions only: the top folder of the repository its cwd is in, else its cwd
    repository: NotRequired[str | None]


class RunProgress(TypedDict):
    done: int  # chunks settled (captured, failed, or lost to another worker) in the current run
    total: int  # chunks due when the run started


class RunSummary(TypedDict):
    """The run report's JSON form (model.RunReport.as_dict, the `run` of `checkpoint now --json`),
    plus `explicit` and `finished_at`."""

    explicit: bool  # checkpoint.now (True) or background (False)
    extractor: str
    tried: int
    captured: int
    failed: int
    lost: int  # taken over by another worker before their answers were committed: not captured, not failed
    items_added: int
    items_attributed: int  # items of captured answers that cited no turn of their chunk: attributed to it
    items_dropped: dict[str, int]  # items validation dropped, by reason ("tool_output_only": only tool output cited)
    stopped_by: str | None  # a budget that ended the run early; the rest stays pending
    failures: list[dict[str, Any]]  # {"chunk_id", "session_id", "cause", "lost"}
    finished_at: float
    resplit: int  # chunks replaced by smaller ones, whose pieces were tried in the same run
    usage: dict[str, float]  # what the run's requests cost: requests, tokens, cost_usd
    models: dict[str, int]  # answers per model (fallbacks show here)
    redacted: dict[str, int]  # secrets taken out right before sending, by kind
    left: dict[str, Any]  # {"chunks", "tokens", "estimate"}: still due, and what finishing should cost
    sentence: str  # "Extracted 3 chunks with the heuristic extractor: 3 captured, 0 failed; 2 new items (...)."


class OtherCause(TypedDict):
    session_id: str
    title: str | None
    cwd: str | None
    cause: str


class WorkspaceSessionsDelta(TypedDict):
    """The workspace folders' sessions that changed since the status before. Applied to a copy at
    version `since` (0: to an empty list), it gives the whole list at `version`; a client whose copy
    is at another version asks CHECKPOINT_WORKSPACE_SESSIONS. Versions count up from 1 in each daemon
    process; `version` == `since` when no session changed."""

    version: int
    since: int
    changed: list[SessionStatus]  # new or changed sessions, whole, newest turn first
    removed: list[str]  # ids of sessions no longer in the workspace's list (forgotten, folder closed)
    total: int  # the workspace's sessions after this delta (the list's length at `version`)


class WorkspaceSessionsResult(TypedDict):
    version: int  # the delta version this list is at: apply the statuses whose `since` is this
    sessions: list[SessionStatus]  # newest turn first (then by id), as the statuses left them
    total: int


class Status(TypedDict):
    scope: Literal["workspace", "all"]
    workspace_folders: list[str]
    totals: Totals  # over every session in scope, listed here or not
    workspace_sessions: WorkspaceSessionsDelta  # those whose cwd is in a workspace folder, as a delta
    sessions_total: int  # sessions in scope, in the workspace or not
    team_sessions: int  # of them, repositories' team sessions (their decision records), not agent sessions
    others_version: str  # digest of the sessions in scope not listed here: changes when one of them does; "" if none
    other_causes: list[OtherCause]  # failing causes of sessions not listed (at most 20)
    problems: list[dict[str, Any]]  # {"path", "line", "message", "session_id"}
    usage: dict[str, float]  # the sessions' usage added up
    items: dict[str, Any]  # {"by_kind": {...}, "by_state": {...}, "held": n}; by_kind omits dismissed; held: to review
    running: bool
    progress: RunProgress | None
    extraction: Literal["auto", "manual"]
    paused: str | None  # why background extraction waits (a budget was reached), else None
    last_run: RunSummary | None
    last_error: str | None


class SessionsQuery(TypedDict, total=False):
    scope: Literal["workspace", "all"]  # default: the `scope` setting
    workspace: str  # a folder URI: only sessions run in it or below it
    offset: int  # sessions to skip, newest first (default 0)
    limit: int  # at most this many (default: all)


class SessionsResult(TypedDict):
    sessions: list[SessionStatus]
    total: int  # sessions the query matches, before offset and limit


class ItemsQuery(TypedDict, total=False):
    scope: Literal["workspace", "all"]  # default: the `scope` setting
    workspace: str  # a folder URI: only sessions in it
    session: str
    kind: Literal["decision", "constraint", "question"]
    state: Literal["new", "accepted", "dismissed", "any"]  # default: all but dismissed
    file: str  # a file URI: only items that concern it


class Source(TypedDict):
    turn_id: str
    path: str  # transcript file
    line: int  # 1-based line in it
    timestamp: str | None
    uri: str  # file URI of the transcript


class Item(TypedDict):
    id: str
    session_id: str
    kind: str
    statement: str
    rationale: str | None
    confidence: float
    turn_ids: list[str]
    files: list[str]
    state: str
    extractor: str
    created_at: float
    session_title: str | None
    cwd: str | None
    sources: list[Source]
    cited: Literal["turns", "chunk"]  # chunk: the model cited no turn of the chunk; sources are its turns
    superseded_by: str | None  # the newest item that replaced this one; None: current
    supersedes: list[str]  # the items this one replaced
    # reads as an instruction planted for an agent (checkpoint.extract.held): agents are shown it only
    # once it is accepted (checkpoint.accept)
    held: bool
    workspace: NotRequired[str | None]
    # who the decision record says decided, e-mail addresses left out (a shared item; None: it names no one)
    shared_by: NotRequired[str | None]
    accepted_here: NotRequired[bool]  # this user accepted it (a record's "accepted" is its author's claim)


class ItemsResult(TypedDict):
    items: list[Item]


class TurnText(TypedDict):
    id: str
    role: str  # "user", "assistant" (or another role a reader keeps)
    text: str  # a cited turn whole (up to a limit), a turn around it its start
    length: int  # the turn's whole length in characters
    cited: bool  # one the item cites; the others are around it
    timestamp: str | None
    path: str | None  # the transcript file and 1-based line: on the cited turns
    line: int | None
    uri: str | None


class TurnResult(TypedDict):
    item: Item
    turns: list[TurnText]  # in session order


class NowResult(TypedDict):
    scanned: dict[str, int]  # {"files_seen", "files_read", "turns_added", "chunks_created"}
    run: RunSummary
    totals: Totals


class TriageResult(TypedDict):
    id: str
    state: str
    changed: bool


class SearchQuery(TypedDict, total=False):
    query: Required[str]  # words; quotes, `*`, `:`, `-` and NEAR/AND/OR/NOT are searched as text
    kind: Literal["decision", "constraint", "question"]
    workspace: str  # a folder URI: only sessions run in it or below it
    scope: Literal["workspace", "all"]  # default: the `scope` setting
    state: Literal["current", "any"]  # default current: dismissed items left out
    limit: int  # 1..200, default 20


class SearchHit(Item):
    score: float  # bm25, lower is better: a statement match ranks above a rationale match


class SearchResponse(TypedDict):
    terms: list[str]  # the words searched for; empty: the query held none
    matched: Literal["all", "any"]  # "any": no item had every word, these have some
    items: list[SearchHit]


class SupersedeArgs(TypedDict, total=False):
    old: Required[str]  # item id
    new: str  # item id; required unless undo
    reason: str
    undo: bool


class ShareResult(TypedDict):
    id: str
    path: str  # the record, absolute (written, or removed with `undo`)
    record: str | None  # relative to the repository's top folder; None: removed
    created: bool  # a new record (False: the item's record was rewritten)
    removed: bool


class SupersedeResult(TypedDict):
    old_id: str
    new_id: str | None
    changed: bool  # a link was made (or, undoing, removed)
    removed: int  # links removed (undo)
    superseded_by: str | None  # the old item's newest superseding item now


class TranscriptFile(TypedDict):
    path: str
    uri: str


class TranscriptsResult(TypedDict):
    session_id: str
    files: list[TranscriptFile]  # still on disk, the latest written first


class ForgetResult(TypedDict):
    session_id: str
    removed: dict[str, int]  # rows removed per table (empty with `undo`)
    undone: bool  # `undo`: the session is read in again at the next scan
