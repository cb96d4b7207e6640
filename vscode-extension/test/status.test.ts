import * as vscode from 'vscode';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import { StatusItem, renderStatus, stuckCauses } from '../src/status';
import { resetVscodeMock, type FakeStatusBarItem } from './__mocks__/vscode';
import { failure, runSummary, session, status } from './fixtures';

beforeEach(() => resetVscodeMock());

describe('renderStatus', () => {
  it('says Checkpoint with its own icon and counts decisions and items to review first', () => {
    const p = renderStatus({
      phase: 'running',
      status: status({
        sessions: [session({ pending: 0, captured: 340, turns: 340 })],
        items: { by_kind: { decision: 9, constraint: 2, question: 1 }, by_state: { new: 12 }, held: 1 },
      }),
    });
    expect(p.text).toBe('$(milestone) Checkpoint: 9 decisions · 1 to review');
    expect(p.look).toBe('normal');
    expect(p.command).toBe('checkpoint.checkpointNow');
    expect(p.tooltip).toContain('Checkpoint: 9 decisions, 2 constraints, 1 open question; 1 held for your review');
    expect(p.tooltip).toContain('Turns: 340 captured, 0 pending, 0 failed, of 340 turns in 1 session of this workspace.');
    expect(p.label).toBe('Checkpoint: 9 decisions · 1 to review; turns: 0 pending · 340 captured · 0 failed');
  });

  it('names pending turns only when some wait', () => {
    const p = renderStatus({ phase: 'running', status: status({ sessions: [session({ pending: 12, captured: 340 })] }) });
    expect(p.text).toBe('$(milestone) Checkpoint: 0 decisions · 12 pending');
  });

  it('the tooltip counts the sessions the panel lists: the workspace’s, its Team node aside', () => {
    const team = session({ id: 'team:/w', agent: 'team' });
    const p = renderStatus({ phase: 'running', status: status({ sessions: [session(), session({ id: 's2' }), team], sessions_total: 4 }) });
    expect(p.tooltip).toContain('in 2 sessions of this workspace');
    const all = renderStatus({ phase: 'running', status: status({ scope: 'all', sessions_total: 4 }) });
    expect(all.tooltip).toContain('in 4 sessions in scope');
    // Scope "all": the repositories' team sessions are Team nodes in the panel, not sessions.
    const withTeams = renderStatus({ phase: 'running', status: status({ scope: 'all', sessions_total: 4, team_sessions: 1 }) });
    expect(withTeams.tooltip).toContain('in 3 sessions in scope');
  });

  it('spins while the daemon extracts, with the run progress in the tooltip', () => {
    const p = renderStatus({
      phase: 'running',
      status: status({ running: true, progress: { done: 3, total: 8 } }),
    });
    expect(p.text).toBe('$(sync~spin) Checkpoint: 0 decisions · 10 pending');
    expect(p.tooltip).toContain('Extracting: 3/8 chunks.');
  });

  it('spins while a Checkpoint Now from this window is in flight', () => {
    const p = renderStatus({ phase: 'running', status: status(), busy: true });
    expect(p.text.startsWith('$(sync~spin) ')).toBe(true);
  });

  it('warns with the failing causes when chunks fail', () => {
    const p = renderStatus({
      phase: 'running',
      status: status({
        sessions: [session({ failed: 4, pending: 6, causes: ['rate limited (429) after 4 attempts'] })],
      }),
    });
    expect(p.text).toBe('$(warning) Checkpoint: 0 decisions · 6 pending · 4 failed');
    expect(p.look).toBe('warning');
    expect(p.tooltip).toContain('Failing:');
    expect(p.tooltip).toContain('Refactor the parser: rate limited (429) after 4 attempts');
  });

  it('warns when a fallback was refused, even before any chunk counts as failed', () => {
    const cause = 'fallback claude-3-haiku refused: chunk needs 240000 tokens, window holds 200000';
    const p = renderStatus({ phase: 'running', status: status({ sessions: [session({ causes: [cause] })] }) });
    expect(p.look).toBe('warning');
    expect(p.text.startsWith('$(warning) ')).toBe(true);
    expect(p.tooltip).toContain(cause);
  });

  it('shows the last error and a paused budget in the tooltip, as a warning', () => {
    const p = renderStatus({
      phase: 'running',
      status: status({ last_error: 'database is locked', paused: 'request budget of 10 reached' }),
    });
    expect(p.look).toBe('warning');
    expect(p.tooltip).toContain('Last error: database is locked');
    expect(p.tooltip).toContain('Paused: request budget of 10 reached');
  });

  it('caps the causes listed in the tooltip and says how many more there are', () => {
    const causes = Array.from({ length: 8 }, (_, i) => `cause ${i}`);
    const p = renderStatus({ phase: 'running', status: status({ sessions: [session({ causes, failed: 8 })] }) });
    expect(p.tooltip).toContain('cause 4');
    expect(p.tooltip).not.toContain('cause 5');
    expect(p.tooltip).toContain('… and 3 more');
  });

  it('says the daemon is starting before it runs', () => {
    const p = renderStatus({ phase: 'starting' });
    expect(p.text).toBe('$(sync~spin) Checkpoint: starting');
    expect(p.look).toBe('normal');
  });

  it('waits for the first status once running', () => {
    const p = renderStatus({ phase: 'running' });
    expect(p.text).toBe('$(sync~spin) Checkpoint: starting');
    expect(p.tooltip).toContain('waiting for its first status');
  });

  it('shows an error look with the cause when the daemon failed', () => {
    const p = renderStatus({ phase: 'failed', error: '"checkpoint" was not found' });
    expect(p.text).toBe('$(error) Checkpoint: daemon not running');
    expect(p.look).toBe('error');
    expect(p.tooltip).toContain('"checkpoint" was not found');
  });

  it('shows a stopped daemon as a warning', () => {
    const p = renderStatus({ phase: 'stopped' });
    expect(p.text).toBe('$(circle-slash) Checkpoint: stopped');
    expect(p.look).toBe('warning');
  });
});

describe('stuckCauses', () => {
  it('lists each session cause once and adds last-run failures not already listed', () => {
    const s = status({
      sessions: [session({ causes: ['timeout'] }), session({ id: 'b', title: null, cwd: '/x/y', causes: ['timeout'] })],
      last_run: runSummary({ tried: 2, failed: 2, failures: [failure('timeout'), failure('bad json', 'b')] }),
    });
    expect(stuckCauses(s)).toEqual(['Refactor the parser: timeout', '/x/y: timeout', 'b: bad json']);
  });

  it('names the causes of sessions outside the workspace, which the status does not list', () => {
    const s = status({
      scope: 'all',
      sessions_total: 2,
      other_causes: [{ session_id: 'far', title: null, cwd: '/far/away', cause: 'refused' }],
    });
    expect(stuckCauses(s)).toEqual(['/far/away: refused']);
    expect(renderStatus({ phase: 'running', status: s }).tooltip).toContain('in 2 sessions');
  });
});

describe('StatusItem', () => {
  function created(): FakeStatusBarItem {
    return vi.mocked(vscode.window.createStatusBarItem).mock.results[0].value as unknown as FakeStatusBarItem;
  }

  it('creates one left-aligned item that runs Checkpoint Now and shows at once', () => {
    new StatusItem();
    const item = created();
    expect(item.id).toBe('checkpoint.status');
    expect(item.alignment).toBe(vscode.StatusBarAlignment.Left);
    expect(item.show).toHaveBeenCalled();
    expect(item.command).toBe('checkpoint.checkpointNow');
    expect(item.text).toBe('$(sync~spin) Checkpoint: starting');
  });

  it('applies the warning background when chunks fail and clears it when they recover', () => {
    const s = new StatusItem();
    const item = created();
    s.update({ phase: 'running', status: status({ sessions: [session({ failed: 1, causes: ['x'] })] }) });
    expect(item.backgroundColor).toEqual(new vscode.ThemeColor('statusBarItem.warningBackground'));
    s.update({ phase: 'running', status: status() });
    expect(item.backgroundColor).toBeUndefined();
    s.update({ phase: 'failed', error: 'gone' });
    expect(item.backgroundColor).toEqual(new vscode.ThemeColor('statusBarItem.errorBackground'));
  });

  it('keeps the tooltip a plain string, so transcript text is never rendered as Markdown', () => {
    const s = new StatusItem();
    s.update({
      phase: 'running',
      status: status({ sessions: [session({ failed: 1, causes: ['<img src=x onerror=alert(1)> [link](command:x)'] })] }),
    });
    expect(typeof created().tooltip).toBe('string');
    expect(created().tooltip).toContain('<img src=x onerror=alert(1)> [link](command:x)');
  });
});
