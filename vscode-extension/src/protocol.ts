/**
 * Every name the daemon and this extension agree on, mirroring the Python constants module
 * `daemon/checkpoint/server/protocol.py`. Rename nothing here without renaming it there.
 *
 * Payloads use the snake_case keys of `checkpoint status --json` and `checkpoint items --json`.
 * Fields the daemon may not send yet are optional, and every reader tolerates their absence.
 */

export const SERVER_NAME = 'checkpoint';

/** Custom LSP methods. */
export const Methods = {
  /** Server -> client notification whenever a count or the run state changes. Params: {@link Status}. */
  status: 'checkpoint/status',
  /** Client -> server request. Params: {@link ItemsQuery}. Result: {@link ItemsResult} (or a bare list). */
  items: 'checkpoint/items',
} as const;

/** `workspace/executeCommand` ids the daemon handles. */
export const ServerCommands = {
  /** Arguments: none, or [session_id]. Result: {@link NowResult}. */
  now: 'checkpoint.now',
  /** Arguments: [item_id]. Result: {@link TriageResult}. */
  dismiss: 'checkpoint.dismiss',
  /** Arguments: [item_id]. Result: {@link TriageResult}. */
  accept: 'checkpoint.accept',
} as const;

/** `source` of every diagnostic the daemon publishes. */
export const DIAGNOSTIC_SOURCE = 'checkpoint';

export type ItemKind = 'decision' | 'constraint' | 'question';
export type ItemState = 'new' | 'accepted' | 'dismissed';
export const ITEM_KINDS: readonly ItemKind[] = ['decision', 'constraint', 'question'];

export interface Totals {
  turns: number;
  captured: number;
  pending: number;
  failed: number;
}

export interface SessionStatus {
  id: string;
  agent: string;
  title: string | null;
  cwd: string | null;
  turns: number;
  captured: number;
  pending: number;
  failed: number;
  watermark?: number;
  last_ts: string | null;
  /** Why chunks of this session failed, one entry per distinct cause. */
  causes?: string[];
  /** Policy -> {records, chars}: content left out on purpose, counted. */
  dropped?: Record<string, { records: number; chars: number }>;
  /** Transcript lines that could not be read. */
  problems?: number;
  /** URI of the workspace folder holding the session's cwd, if any. */
  workspace?: string | null;
}

export interface RunProgress {
  done: number;
  total: number;
}

export interface RunSummary {
  explicit?: boolean;
  extractor?: string;
  tried: number;
  captured: number;
  failed: number;
  /** Chunks whose answer was refused because another worker took them over: still due, not captured. */
  lost?: number;
  /** Items dropped because they cited no turn of their chunk. */
  items_rejected?: number;
  items_added: number;
  /** A budget that ended the run early; the rest stays pending. */
  stopped_by?: string | null;
  failures?: { chunk_id?: number | string; session_id?: string; cause: string }[];
  finished_at?: number;
}

export interface Status {
  totals: Totals;
  sessions: SessionStatus[];
  running: boolean;
  last_error?: string | null;
  scope?: 'workspace' | 'all';
  workspace_folders?: string[];
  problems?: { path: string; line: number; message: string; session_id?: string | null }[];
  items?: { by_kind?: Partial<Record<ItemKind, number>>; by_state?: Partial<Record<ItemState, number>> };
  progress?: RunProgress | null;
  extraction?: 'auto' | 'manual';
  /** Why background extraction waits (a budget was reached), else null. */
  paused?: string | null;
  last_run?: RunSummary | null;
}

export interface ItemsQuery {
  scope?: 'workspace' | 'all';
  workspace?: string;
  session?: string;
  kind?: ItemKind;
  state?: ItemState | 'any';
  file?: string;
}

export interface Source {
  turn_id: string;
  /** Transcript file. */
  path: string;
  /** 1-based line in it. */
  line: number;
  timestamp: string | null;
  uri?: string;
}

export interface Item {
  id: string;
  session_id: string;
  kind: ItemKind;
  statement: string;
  rationale: string | null;
  confidence: number;
  turn_ids: string[];
  files: string[];
  state: ItemState;
  extractor: string;
  created_at: number | string;
  session_title: string | null;
  cwd: string | null;
  sources: Source[];
  workspace?: string | null;
}

export interface ItemsResult {
  items: Item[];
}

export interface NowResult {
  scanned?: { files_seen?: number; files_read?: number; turns_added?: number; chunks_created?: number };
  run?: RunSummary;
  totals?: Totals;
}

export interface TriageResult {
  id: string;
  state: ItemState;
  changed: boolean;
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
