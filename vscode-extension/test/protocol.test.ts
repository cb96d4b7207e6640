/**
 * The contract between the daemon and the extension: the JSON the real daemon sent (written into
 * test/golden/ by tests/server/test_protocol_golden.py, rewritten on every pytest run) against the shapes
 * src/protocol.ts declares and the extension compiles with. Every key the daemon sends must be
 * declared, every required key must be there, every value of the declared type.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { DIAGNOSTIC_SOURCE, EditorCommands, Methods, SERVER_NAME, ServerCommands } from '../src/constants';
import {
  DiagnosticDataShape,
  ForgetResultShape,
  ItemsResultShape,
  NowResultShape,
  SearchResponseShape,
  SessionsResultShape,
  StatusMessageShape,
  SupersedeResultShape,
  TranscriptsResultShape,
  TriageResultShape,
  TurnResultShape,
  WorkspaceSessionsResultShape,
  type RunSummary,
} from '../src/protocol';
import { array, nullable, number, object, optional, string, type Shape } from '../src/shape';
import { runSummary } from './fixtures';

const GOLDEN = path.resolve(__dirname, 'golden');

/** Each golden file and the shape its payload must have. */
const CONTRACT: Record<string, Shape<unknown>> = {
  'status-before-run.json': StatusMessageShape,
  'status-after-run.json': StatusMessageShape,
  'now-result.json': NowResultShape,
  'now-result-failed.json': NowResultShape,
  'status-after-failed-run.json': StatusMessageShape,
  'items-result.json': ItemsResultShape,
  'triage-result.json': TriageResultShape,
  'diagnostic-data.json': array(DiagnosticDataShape),
  'diagnostic-data-superseded.json': array(DiagnosticDataShape),
  'search-result.json': SearchResponseShape,
  'sessions-result.json': SessionsResultShape,
  'workspace-sessions-result.json': WorkspaceSessionsResultShape,
  'supersede-result.json': SupersedeResultShape,
  'supersede-undo-result.json': SupersedeResultShape,
  'turn-result.json': TurnResultShape,
  'transcripts-result.json': TranscriptsResultShape,
  'forget-result.json': ForgetResultShape,
};

function golden(name: string): unknown {
  return JSON.parse(fs.readFileSync(path.join(GOLDEN, name), 'utf8'));
}

describe('the daemon’s payloads match protocol.ts', () => {
  it('has a declared shape for every golden file the daemon test writes, and a file for every shape', () => {
    const written = fs.readdirSync(GOLDEN).filter((f) => f.endsWith('.json') && f !== 'protocol-names.json');
    expect(written.sort()).toEqual(Object.keys(CONTRACT).sort());
  });

  for (const [name, shape] of Object.entries(CONTRACT)) {
    it(name, () => {
      expect(shape.check(golden(name), name.replace(/\.json$/, ''))).toEqual([]);
    });
  }

  it('the goldens are not trivially empty: sessions, items of every kind, a run, a failure and diagnostics', () => {
    type Delta = { version: number; since: number; changed: unknown[]; total: number };
    const before = golden('status-before-run.json') as { workspace_sessions: Delta };
    // the daemon's first delta: the whole list, from nothing
    expect(before.workspace_sessions.since).toBe(0);
    expect(before.workspace_sessions.changed.length).toBe(before.workspace_sessions.total);
    expect(before.workspace_sessions.total).toBeGreaterThan(0);
    const after = golden('status-after-run.json') as { last_run: unknown; problems: unknown[] };
    const listed = golden('sessions-result.json') as { sessions: unknown[]; total: number };
    expect(listed.sessions.length).toBeGreaterThan(before.workspace_sessions.total);
    expect(listed.total).toBe(listed.sessions.length);
    expect(after.last_run).not.toBeNull();
    expect(after.problems.length).toBeGreaterThan(0);
    const kinds = new Set((golden('items-result.json') as { items: { kind: string }[] }).items.map((i) => i.kind));
    expect([...kinds].sort()).toEqual(['constraint', 'decision', 'question']);
    expect((golden('diagnostic-data.json') as unknown[]).length).toBe(3);
    const failed = golden('status-after-failed-run.json') as { last_run: { failures: unknown[] } };
    expect(failed.last_run.failures.length).toBe(1);
    const workspace = golden('workspace-sessions-result.json') as { sessions: { causes: string[] }[]; total: number; version: number };
    expect(workspace.total).toBe(1);
    expect(workspace.sessions[0].causes.length).toBe(1);
    expect(workspace.version).toBeGreaterThan(0);
  });

  it('the supersession goldens hold a link: search finds both ends, the old item’s diagnostic names the newer', () => {
    const link = golden('supersede-result.json') as { old_id: string; new_id: string; superseded_by: string };
    expect(link.superseded_by).toBe(link.new_id);
    const hits = (golden('search-result.json') as { items: { id: string; superseded_by: string | null; supersedes: string[] }[] }).items;
    expect(hits.find((h) => h.id === link.old_id)?.superseded_by).toBe(link.new_id);
    expect(hits.find((h) => h.id === link.new_id)?.supersedes).toEqual([link.old_id]);
    const data = golden('diagnostic-data-superseded.json') as { item_id: string; superseded_by?: string }[];
    expect(data.find((d) => d.item_id === link.old_id)?.superseded_by).toBe(link.new_id);
    expect((golden('supersede-undo-result.json') as { removed: number; superseded_by: null }).superseded_by).toBeNull();
  });
});

describe('the custom LSP names equal the daemon’s (server/protocol.py)', () => {
  it('methods, command ids, server name and diagnostic source', () => {
    expect(golden('protocol-names.json')).toEqual({
      server_name: SERVER_NAME,
      methods: { ...Methods },
      commands: { ...ServerCommands },
      editor_commands: { ...EditorCommands },
      diagnostic_source: DIAGNOSTIC_SOURCE,
    });
  });
});

describe('a shape check fails on what the contract must catch', () => {
  const now = golden('now-result.json') as { run: Record<string, unknown> };

  it('a key the daemon sends that protocol.ts does not declare', () => {
    const sent = { ...now, run: { ...now.run, retries: 2 } };
    expect(NowResultShape.check(sent, 'now')).toEqual(['now.run.retries: sent but not declared (2)']);
  });

  it('a required key the daemon stops sending', () => {
    const run = { ...now.run };
    delete run.tried;
    expect(NowResultShape.check({ ...now, run }, 'now')).toEqual(['now.run.tried: required (number) but missing']);
  });

  it('a value of another type, and null where null is not declared', () => {
    expect(NowResultShape.check({ ...now, run: { ...now.run, tried: '7' } }, 'now')).toEqual([
      'now.run.tried: expected number, got string',
    ]);
    expect(NowResultShape.check({ ...now, run: { ...now.run, extractor: null } }, 'now')).toEqual([
      'now.run.extractor: expected string, got null',
    ]);
  });

  it('a key must have its declared type (run.sentence)', () => {
    const ok: RunSummary = runSummary({ sentence: 'Extracted 1 chunk with the heuristic extractor: 1 captured.' });
    expect(NowResultShape.fields.run.check(ok, 'run')).toEqual([]);
    expect(NowResultShape.fields.run.check({ ...ok, sentence: 3 }, 'run')).toEqual(['run.sentence: expected string, got number']);
  });

  it('the shape helpers: nullable, optional, arrays and unknown enum values', () => {
    const shape = object({ a: nullable(number), b: optional(string), c: array(number) });
    expect(shape.check({ a: null, c: [1] }, 'x')).toEqual([]);
    expect(shape.check({ a: 1, b: 'y', c: [1, 'z'] }, 'x')).toEqual(['x.c[1]: expected number, got string']);
    expect(TriageResultShape.check({ id: 'i', state: 'archived', changed: true }, 't')).toEqual([
      't.state: expected new | accepted | dismissed, got "archived"',
    ]);
  });
});
