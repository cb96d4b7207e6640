/**
 * The payloads the daemon sends, declared once as {@link Shape}s: the types below are derived from
 * them, and the contract test (test/protocol.test.ts) checks the daemon's real JSON (test/golden/,
 * written by tests/server/test_protocol_golden.py) against the same shapes. The names the two sides agree
 * on are in constants.ts.
 *
 * Keys are the snake_case keys of `checkpoint status --json` and `checkpoint items --json`. A key
 * is required when the daemon always sends it, `nullable` when it sends null, `optional` only when
 * it may leave the key out.
 */

import { Methods } from './constants';
import { array, boolean, literal, nullable, number, object, optional, record, recordOf, string, type TypeOf } from './shape';

export const ItemKindShape = literal('decision', 'constraint', 'question');
export const ItemStateShape = literal('new', 'accepted', 'dismissed');
export const ScopeShape = literal('workspace', 'all');
export type ItemKind = TypeOf<typeof ItemKindShape>;
export type ItemState = TypeOf<typeof ItemStateShape>;
export const ITEM_KINDS: readonly ItemKind[] = ItemKindShape.values;

export const TotalsShape = object({ turns: number, captured: number, pending: number, failed: number });
export type Totals = TypeOf<typeof TotalsShape>;

/** What extracting cost. */
export const UsageShape = object({
  input_tokens: number,
  output_tokens: number,
  cache_creation_input_tokens: number,
  cache_read_input_tokens: number,
  requests: number,
  cost_usd: number,
});

/** Chunks of a session that are not captured and cannot be claimed now, held the same way. */
export const HoldShape = object({
  session_id: string,
  /** leased: by a live run on this machine (pid); leased_elsewhere: until the lease ends; backoff: after a failure. */
  kind: literal('leased', 'leased_elsewhere', 'backoff'),
  chunks: number,
  turns: number,
  /** Seconds since the epoch: the latest lease end or backoff end among them. */
  until: number,
  pid: nullable(number),
  cause: nullable(string),
});

export const SessionStatusShape = object({
  id: string,
  agent: string,
  title: nullable(string),
  cwd: nullable(string),
  turns: number,
  captured: number,
  pending: number,
  failed: number,
  watermark: number,
  last_ts: nullable(string),
  /** Why chunks of this session failed, one entry per distinct cause. */
  causes: array(string),
  /** Policy -> {records, chars}: content left out on purpose, counted. */
  dropped: record(object({ records: number, chars: number })),
  /** Transcript lines that could not be read. */
  problems: number,
  usage: UsageShape,
  /** Secrets replaced before storing, by kind. */
  redacted: record(number),
  /** Claude Code deletes the transcript soon while turns are not captured yet. */
  at_risk: boolean,
  deletes_in_days: nullable(number),
  /** URI of the workspace folder holding the session's cwd, if any. */
  workspace: nullable(string),
  /** What holds its pending chunks. */
  held: array(HoldShape),
  /** `checkpoint/sessions` only: the top folder of the git repository its cwd is in, else its cwd. */
  repository: optional(nullable(string)),
});
export type SessionStatus = TypeOf<typeof SessionStatusShape>;

export const RunProgressShape = object({ done: number, total: number });
export type RunProgress = TypeOf<typeof RunProgressShape>;

export const RunFailureShape = object({
  chunk_id: number,
  session_id: string,
  cause: string,
  /** Taken over by another worker: not captured, not failed. */
  lost: boolean,
});

export const RunSummaryShape = object({
  /** checkpoint.now (true) or background extraction (false). */
  explicit: boolean,
  extractor: string,
  tried: number,
  captured: number,
  failed: number,
  /** Chunks whose answer was refused because another worker took them over: still due, not captured. */
  lost: number,
  items_added: number,
  /** Items that cited no turn of their chunk: kept, attributed to the chunk's turns. */
  items_attributed: number,
  /** Items validation dropped, by reason ('tool_output_only': only tool output cited); absent from older daemons. */
  items_dropped: optional(record(number)),
  /** What held the chunks the run could not take. */
  held: array(HoldShape),
  /** A budget that ended the run early; the rest stays pending. */
  stopped_by: nullable(string),
  failures: array(RunFailureShape),
  finished_at: number,
  /** Chunks replaced by smaller ones, whose pieces the same run tried. */
  resplit: number,
  usage: UsageShape,
  /** Answers per model (fallback models show here). */
  models: record(number),
  /** Secrets found right before sending, by kind: the chunks went out without them. */
  redacted: record(number),
  /** What is still due when the run ends, and (priced extractors) what finishing it should cost. */
  left: object({ chunks: number, tokens: number, estimate: nullable(UsageShape) }),
  /** The run layer's one human sentence for the run (the CLI prints the same). */
  sentence: string,
});
export type RunSummary = TypeOf<typeof RunSummaryShape>;

export const ProblemShape = object({ path: string, line: number, message: string, session_id: nullable(string) });

/** A failing cause of a session a status leaves out. */
export const OtherCauseShape = object({ session_id: string, title: nullable(string), cwd: nullable(string), cause: string });

/**
 * The workspace's sessions that changed since the status before, by id: applied to a copy at version
 * `since` (0: to an empty list) it gives the whole list at `version`. A copy at another version asks
 * `checkpoint/workspaceSessions` for the whole list (sessionMirror.ts).
 */
export const WorkspaceSessionsDeltaShape = object({
  /** Counts up from 1 in each daemon process; equal to `since` when no session changed. */
  version: number,
  since: number,
  /** New or changed sessions, whole. */
  changed: array(SessionStatusShape),
  /** Ids of sessions no longer in the workspace's list. */
  removed: array(string),
  /** The workspace's sessions at `version`. */
  total: number,
});
export type WorkspaceSessionsDelta = TypeOf<typeof WorkspaceSessionsDeltaShape>;

/** `checkpoint/workspaceSessions`: the workspace's sessions as the statuses so far left them. */
export const WorkspaceSessionsResultShape = object({
  /** Apply the statuses whose `since` is this. */
  version: number,
  /** Newest turn first, then by id. */
  sessions: array(SessionStatusShape),
  total: number,
});
export type WorkspaceSessionsResult = TypeOf<typeof WorkspaceSessionsResultShape>;

/** A `checkpoint/status` notification as the daemon sends it; the surfaces read {@link Status}. */
export const StatusMessageShape = object({
  scope: ScopeShape,
  workspace_folders: array(string),
  /** Over every session in scope, in the workspace or not. */
  totals: TotalsShape,
  /** The workspace's sessions that changed; the others are `checkpoint/sessions`'. */
  workspace_sessions: WorkspaceSessionsDeltaShape,
  /** Sessions in scope, in the workspace or not. */
  sessions_total: number,
  /** Of them, repositories' team sessions (their decision records: a Team node, not a session); absent from an older daemon. */
  team_sessions: optional(number),
  /** Digest of the sessions in scope left out here: it changes when one of them does ("" when none). */
  others_version: string,
  /** Failing causes of sessions left out here (at most 20). */
  other_causes: array(OtherCauseShape),
  problems: array(ProblemShape),
  usage: UsageShape,
  redacted: record(number),
  /** Sessions the user asked to forget. */
  forgotten: array(object({ session_id: string, forgotten_at: number, turns: number })),
  /** by_kind leaves dismissed items out. */
  items: object({
    by_kind: recordOf(ItemKindShape, number),
    by_state: recordOf(ItemStateShape, number),
    /** Held for review, neither accepted nor dismissed: what needs the user's review (absent from an older daemon). */
    held: optional(number),
  }),
  running: boolean,
  progress: nullable(RunProgressShape),
  extraction: literal('auto', 'manual'),
  /** Why background extraction waits (a budget was reached), else null. */
  paused: nullable(string),
  last_run: nullable(RunSummaryShape),
  last_error: nullable(string),
});
export type StatusMessage = TypeOf<typeof StatusMessageShape>;

/**
 * A status as the surfaces read it: the message with its delta applied, `sessions` being every
 * session of the workspace (newest turn first) at the delta's version.
 */
export type Status = Omit<StatusMessage, 'workspace_sessions'> & { sessions: SessionStatus[] };

/** What the extension asks `checkpoint/sessions` for: every key optional (sent, not received). */
export interface SessionsQuery {
  /** Default: the `scope` setting. */
  scope?: 'workspace' | 'all';
  /** A folder URI: only sessions run in it or below it. */
  workspace?: string;
  /** Sessions to skip, newest first. */
  offset?: number;
  /** At most this many (default: all). */
  limit?: number;
}

/** Every session in scope (or a page of them), newest turn first. */
export const SessionsResultShape = object({
  sessions: array(SessionStatusShape),
  /** Sessions the query matches, before offset and limit. */
  total: number,
});
export type SessionsResult = TypeOf<typeof SessionsResultShape>;

/** What the extension asks `checkpoint/items` for: every key optional (sent, not received). */
export interface ItemsQuery {
  scope?: 'workspace' | 'all';
  workspace?: string;
  session?: string;
  kind?: ItemKind;
  state?: ItemState | 'any';
  file?: string;
}

export const SourceShape = object({
  turn_id: string,
  /** Transcript file. */
  path: string,
  /** 1-based line in it. */
  line: number,
  timestamp: nullable(string),
  /** Who said it: 'user' (the person) or 'assistant' (the agent); absent from an older daemon. */
  role: optional(nullable(string)),
  uri: string,
});
export type Source = TypeOf<typeof SourceShape>;

export const ItemShape = object({
  id: string,
  session_id: string,
  kind: ItemKindShape,
  statement: string,
  rationale: nullable(string),
  confidence: number,
  turn_ids: array(string),
  files: array(string),
  state: ItemStateShape,
  extractor: string,
  /** Seconds since the epoch. */
  created_at: number,
  session_title: nullable(string),
  cwd: nullable(string),
  sources: array(SourceShape),
  /** 'chunk': the model cited no turn of the chunk; the sources are the chunk's turns, not the lines that said it. */
  cited: literal('turns', 'chunk'),
  /** The newest item that replaced this one (along a chain); null: it is current. */
  superseded_by: nullable(string),
  /** The items this one replaced. */
  supersedes: array(string),
  /**
   * Held for review: it reads as an instruction planted for an agent, and no agent is shown it until it
   * is accepted (absent from daemons before it).
   */
  held: optional(boolean),
  /** URI of the workspace folder holding the session's cwd, if any. */
  workspace: nullable(string),
  /** 'local': captured here; 'shared': read from a decision record of the repository. */
  origin: optional(literal('local', 'shared')),
  /** The decision record's path, relative to the repository's top folder (a shared item). */
  record: optional(nullable(string)),
  /** The session's agent ("claude", "codex", "team" for a record): absent from an older daemon. */
  agent: optional(nullable(string)),
  /** false: an order for the task at hand only ("when you're done"), given to no later session. */
  lasting: optional(boolean),
  /** Where each of `files` came from: 'statement' (named there), 'edit' (its turn wrote it), 'statement+edit'. */
  file_sources: optional(record(string)),
  /** A question answered later: the answering item's id, and the turn it was said in. */
  answered_by: optional(nullable(string)),
  answered_turn: optional(nullable(string)),
  /** Who the decision record says decided, e-mail addresses left out (a shared item); absent from an older daemon. */
  shared_by: optional(nullable(string)),
  /** This user accepted it (a record's "accepted" is its author's claim); absent from an older daemon. */
  accepted_here: optional(boolean),
});
export type Item = TypeOf<typeof ItemShape>;

export const ItemsResultShape = object({ items: array(ItemShape) });
export type ItemsResult = TypeOf<typeof ItemsResultShape>;

export const NowResultShape = object({
  scanned: object({ files_seen: number, files_read: number, turns_added: number, chunks_created: number }),
  run: RunSummaryShape,
  totals: TotalsShape,
});
export type NowResult = TypeOf<typeof NowResultShape>;

export const TriageResultShape = object({ id: string, state: ItemStateShape, changed: boolean });
export type TriageResult = TypeOf<typeof TriageResultShape>;

/** What the extension asks `checkpoint/search` for (sent, not received). */
export interface SearchQuery {
  /** Words; quotes, `*`, `:`, `-` and NEAR/AND/OR/NOT are searched as plain text. */
  query: string;
  kind?: ItemKind;
  /** A folder URI: only sessions run in it or below it. */
  workspace?: string;
  /** Default: the `scope` setting. */
  scope?: 'workspace' | 'all';
  /** Default current: dismissed items left out. */
  state?: 'current' | 'any';
  /** 1..200, default 20. */
  limit?: number;
}

/** An item a search found, with its bm25 score (lower is better). */
export const SearchHitShape = object({ ...ItemShape.fields, score: number });
export type SearchHit = TypeOf<typeof SearchHitShape>;

export const SearchResponseShape = object({
  /** The words searched for; empty: the query held none. */
  terms: array(string),
  /** "any": no item had every word, these have some. */
  matched: literal('all', 'any'),
  /** Best first. */
  items: array(SearchHitShape),
});
export type SearchResponse = TypeOf<typeof SearchResponseShape>;

/** The argument of `checkpoint.supersede` (sent, not received). */
export interface SupersedeArgs {
  /** The older item's id. */
  old: string;
  /** The item that replaces it; required unless `undo`. */
  new?: string;
  reason?: string;
  /** Remove the link (every link from `old` when `new` is not given). */
  undo?: boolean;
}

export const SupersedeResultShape = object({
  old_id: string,
  new_id: nullable(string),
  /** A link was made (or, undoing, removed). */
  changed: boolean,
  /** Links removed (undo). */
  removed: number,
  /** The old item's newest superseding item now. */
  superseded_by: nullable(string),
});
export type SupersedeResult = TypeOf<typeof SupersedeResultShape>;

export const ShareResultShape = object({
  id: string,
  /** The record, absolute (written, or removed with `undo`). */
  path: string,
  /** Relative to the repository's top folder; null: removed. */
  record: nullable(string),
  created: boolean,
  removed: boolean,
});
export type ShareResult = TypeOf<typeof ShareResultShape>;

/**
 * The `data` of every diagnostic the daemon publishes (its `code` is the item id too). A superseded
 * item's diagnostic also carries `superseded_by` (and the Deprecated tag, which VS Code strikes
 * through); `stale` says the lines it was anchored to were deleted or rewritten since the session;
 * `held`, that the item is held for review and reaches no agent until accepted.
 */
export const DiagnosticDataShape = object({
  item_id: string,
  session_id: string,
  kind: ItemKindShape,
  superseded_by: optional(string),
  stale: optional(boolean),
  /** Held for review, not accepted: no agent is shown the item until it is. */
  held: optional(boolean),
  /** How its lines were found: those the session wrote, those naming what it names, or one line. */
  mark: optional(literal('edited', 'named', 'line')),
  /** Who said it, where and when, in one plain line with a date (for a client without the hover card). */
  said: optional(string),
});
export type DiagnosticData = TypeOf<typeof DiagnosticDataShape>;

/** A turn of Open Turn's answer: one the item cites (whole, up to a limit) or one around it (its start). */
export const TurnTextShape = object({
  id: string,
  role: string,
  text: string,
  /** The turn's whole length in characters. */
  length: number,
  cited: boolean,
  timestamp: nullable(string),
  path: nullable(string),
  line: nullable(number),
  uri: nullable(string),
});
export type TurnText = TypeOf<typeof TurnTextShape>;

/** A `checkpoint/turn` answer: the item and its turns in session order. */
export const TurnResultShape = object({ item: ItemShape, turns: array(TurnTextShape) });
export type TurnResult = TypeOf<typeof TurnResultShape>;

/** A `checkpoint/transcripts` answer: the session's transcript files on disk, the latest written first. */
export const TranscriptsResultShape = object({
  session_id: string,
  files: array(object({ path: string, uri: string })),
});
export type TranscriptsResult = TypeOf<typeof TranscriptsResultShape>;

/** What `checkpoint.forget` did: the rows removed per table (none with `undo`). */
export const ForgetResultShape = object({ session_id: string, removed: record(number), undone: boolean });
export type ForgetResult = TypeOf<typeof ForgetResultShape>;

/** A `checkpoint/transcripts` answer, checked enough to read its files. */
export function transcriptsResultOf(result: unknown): TranscriptsResult {
  const answer = result as TranscriptsResult | null;
  if (answer && typeof answer === 'object' && Array.isArray(answer.files)) {
    return answer;
  }
  throw new Error(`unexpected answer to ${Methods.transcripts}: ${JSON.stringify(result)?.slice(0, 200)}`);
}

/** A `checkpoint/turn` answer, checked. */
export function turnResultOf(result: unknown): TurnResult {
  const answer = result as TurnResult | null;
  if (answer && typeof answer === 'object' && answer.item && Array.isArray(answer.turns)) {
    return answer;
  }
  throw new Error(`unexpected answer to ${Methods.turn}: ${JSON.stringify(result)?.slice(0, 200)}`);
}

/** The items of a `checkpoint/items` answer, whether it came as `{items: [...]}` or a bare list. */
export function itemsOf(result: unknown): Item[] {
  if (Array.isArray(result)) {
    return result as Item[];
  }
  if (result && typeof result === 'object' && Array.isArray((result as ItemsResult).items)) {
    return (result as ItemsResult).items;
  }
  throw new Error(`unexpected answer to ${Methods.items}: ${JSON.stringify(result)?.slice(0, 200)}`);
}

/** A `checkpoint/sessions` answer, checked enough to read its sessions. */
export function sessionsResultOf(result: unknown): SessionsResult {
  if (result && typeof result === 'object' && Array.isArray((result as SessionsResult).sessions)) {
    return result as SessionsResult;
  }
  throw new Error(`unexpected answer to ${Methods.sessions}: ${JSON.stringify(result)?.slice(0, 200)}`);
}

/** A `checkpoint/workspaceSessions` answer, checked enough to read its sessions and version. */
export function workspaceSessionsResultOf(result: unknown): WorkspaceSessionsResult {
  const answer = result as WorkspaceSessionsResult | null;
  if (answer && typeof answer === 'object' && Array.isArray(answer.sessions) && typeof answer.version === 'number') {
    return answer;
  }
  throw new Error(`unexpected answer to ${Methods.workspaceSessions}: ${JSON.stringify(result)?.slice(0, 200)}`);
}

/** A `checkpoint/search` answer, checked enough to read its items. */
export function searchResponseOf(result: unknown): SearchResponse {
  if (result && typeof result === 'object' && Array.isArray((result as SearchResponse).items)) {
    return result as SearchResponse;
  }
  throw new Error(`unexpected answer to ${Methods.search}: ${JSON.stringify(result)?.slice(0, 200)}`);
}
