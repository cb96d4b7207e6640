/** Payloads shaped like the daemon's `checkpoint/status` and `checkpoint/items`. */
import type { Item, RunSummary, SessionStatus, Status } from '../src/protocol';

export function session(over: Partial<SessionStatus> = {}): SessionStatus {
  return {
    id: 'sess-aaaa-1111',
    agent: 'claude',
    title: 'Refactor the parser',
    cwd: '/home/dev/proj',
    turns: 40,
    captured: 30,
    pending: 10,
    failed: 0,
    watermark: 3,
    last_ts: '2026-01-05T10:00:00.000Z',
    causes: [],
    dropped: {},
    problems: 0,
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, requests: 0, cost_usd: 0 },
    redacted: {},
    at_risk: false,
    deletes_in_days: null,
    workspace: 'file:///home/dev/proj',
    held: [],
    ...over,
  };
}

export function runSummary(over: Partial<RunSummary> = {}): RunSummary {
  return {
    explicit: true,
    extractor: 'heuristic',
    tried: 0,
    captured: 0,
    failed: 0,
    lost: 0,
    items_added: 0,
    items_attributed: 0,
    held: [],
    stopped_by: null,
    failures: [],
    finished_at: 1767607200,
    resplit: 0,
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, requests: 0, cost_usd: 0 },
    models: {},
    redacted: {},
    left: { chunks: 0, tokens: 0, estimate: null },
    sentence: 'Extracted 0 chunks with the heuristic extractor: 0 captured, 0 failed; 0 new items.',
    ...over,
  };
}

export function failure(cause: string, session_id = 'sess-aaaa-1111'): RunSummary['failures'][number] {
  return { chunk_id: 1, session_id, cause, lost: false };
}

export function status(over: Partial<Status> = {}): Status {
  const sessions = over.sessions ?? [session()];
  const sum = (k: 'turns' | 'captured' | 'pending' | 'failed'): number => sessions.reduce((n, s) => n + s[k], 0);
  return {
    totals: { turns: sum('turns'), captured: sum('captured'), pending: sum('pending'), failed: sum('failed') },
    sessions,
    sessions_total: sessions.length,
    others_version: '',
    other_causes: [],
    running: false,
    last_error: null,
    scope: 'workspace',
    workspace_folders: ['file:///home/dev/proj'],
    problems: [],
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, requests: 0, cost_usd: 0 },
    redacted: {},
    forgotten: [],
    items: { by_kind: {}, by_state: {} },
    progress: null,
    extraction: 'auto',
    paused: null,
    last_run: null,
    ...over,
  };
}

export function item(over: Partial<Item> = {}): Item {
  return {
    id: 'item-1',
    session_id: 'sess-aaaa-1111',
    kind: 'decision',
    statement: "We'll use SQLite for the store.",
    rationale: 'One file, transactions.',
    confidence: 0.8,
    turn_ids: ['t1'],
    files: ['/home/dev/proj/src/store.py'],
    state: 'new',
    extractor: 'heuristic',
    created_at: 1767607200,
    session_title: 'Refactor the parser',
    cwd: '/home/dev/proj',
    sources: [
      {
        turn_id: 't1',
        path: '/home/dev/.claude/projects/p/s.jsonl',
        line: 12,
        timestamp: '2026-01-05T10:00:00Z',
        uri: 'file:///home/dev/.claude/projects/p/s.jsonl',
      },
    ],
    cited: 'turns',
    superseded_by: null,
    supersedes: [],
    workspace: 'file:///home/dev/proj',
    ...over,
  };
}
