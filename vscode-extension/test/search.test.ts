import * as vscode from 'vscode';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { SEARCH_DEBOUNCE_MS, SEARCH_HINT, registerCommands, searchDecisions, searchPick, searchPicks, type CommandDeps } from '../src/commands';
import { Commands } from '../src/constants';
import { DaemonNotRunningError } from '../src/lifecycle';
import type { Item, SearchHit, SearchQuery, SearchResponse } from '../src/protocol';
import { FakeQuickPick, files, resetVscodeMock } from './__mocks__/vscode';
import { item } from './fixtures';

type Pick = vscode.QuickPickItem & { item?: Item };

beforeEach(() => {
  resetVscodeMock();
  vi.useFakeTimers();
});
afterEach(() => vi.useRealTimers());

const hit = (over: Partial<Item> = {}): SearchHit => ({ ...item(over), score: -1 });
const answer = (items: SearchHit[], over: Partial<SearchResponse> = {}): SearchResponse => ({ terms: ['x'], matched: 'all', items, ...over });

function fakeDeps(phase: 'running' | 'failed' = 'running') {
  const daemon = {
    currentPhase: phase,
    lastError: phase === 'failed' ? 'spawn checkpoint ENOENT' : undefined,
    executeCommand: vi.fn(async (): Promise<unknown> => ({})),
    items: vi.fn(async (): Promise<Item[]> => []),
    search: vi.fn(async (_q: SearchQuery): Promise<SearchResponse> => answer([hit()])),
    restart: vi.fn(async () => undefined),
  };
  const log = { info: vi.fn(), warn: vi.fn(), error: vi.fn(), show: vi.fn() };
  const deps = { daemon, log, tree: { refresh: vi.fn() }, secrets: {}, setBusy: vi.fn(), lastFailure: () => undefined };
  return { daemon, log, deps: deps as unknown as CommandDeps };
}

/** The quick pick the command opened. */
function openedPick(): FakeQuickPick<Pick> {
  const result = vi.mocked(vscode.window.createQuickPick).mock.results.at(-1);
  if (!result) {
    throw new Error('no quick pick was opened');
  }
  return result.value as unknown as FakeQuickPick<Pick>;
}

describe('Search Decisions: what it asks the daemon', () => {
  it('shows a hint and sends nothing until words are typed, nor for blank text', async () => {
    const { daemon, deps } = fakeDeps();
    void searchDecisions(deps);
    const pick = openedPick();
    expect(pick.show).toHaveBeenCalled();
    expect(pick.placeholder).toBe(SEARCH_HINT);
    pick.type('   ');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS * 2);
    expect(daemon.search).not.toHaveBeenCalled();
    expect(pick.items).toEqual([]);
  });

  it('waits for typing to pause, then sends the latest text once', async () => {
    const { daemon, deps } = fakeDeps();
    void searchDecisions(deps);
    const pick = openedPick();
    pick.type('sq');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS / 2);
    pick.type('sqlite store');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS - 1);
    expect(daemon.search).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(daemon.search).toHaveBeenCalledTimes(1);
    expect(daemon.search).toHaveBeenCalledWith({ query: 'sqlite store', limit: 50 });
    expect(pick.items.map((p) => p.item?.id)).toEqual(['item-1']);
    expect(pick.busy).toBe(false);
  });

  it('shows only the latest query’s answer when an older one arrives late', async () => {
    const { daemon, deps } = fakeDeps();
    let release: (r: SearchResponse) => void = () => undefined;
    daemon.search.mockImplementationOnce(() => new Promise((resolve) => (release = resolve)));
    daemon.search.mockResolvedValueOnce(answer([hit({ id: 'new-answer' })]));
    void searchDecisions(deps);
    const pick = openedPick();
    pick.type('old');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS);
    pick.type('new');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS);
    release(answer([hit({ id: 'old-answer' })]));
    await vi.advanceTimersByTimeAsync(0);
    expect(pick.items.map((p) => p.item?.id)).toEqual(['new-answer']);
  });

  it('clearing the box drops the list and any answer still on its way', async () => {
    const { daemon, deps } = fakeDeps();
    let release: (r: SearchResponse) => void = () => undefined;
    daemon.search.mockImplementationOnce(() => new Promise((resolve) => (release = resolve)));
    void searchDecisions(deps);
    const pick = openedPick();
    pick.type('sqlite');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS);
    pick.type('');
    release(answer([hit()]));
    await vi.advanceTimersByTimeAsync(0);
    expect(pick.items).toEqual([]);
  });

  it('shows a failed request in the list and the log, and the box stays usable', async () => {
    const { daemon, log, deps } = fakeDeps();
    daemon.search.mockRejectedValueOnce(new Error('checkpoint/search: `limit` must be a whole number'));
    void searchDecisions(deps);
    const pick = openedPick();
    pick.type('x');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS);
    expect(pick.items.map((p) => p.label)).toEqual(['Search failed: checkpoint/search: `limit` must be a whole number']);
    expect(log.error).toHaveBeenCalled();
    pick.type('xy');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS);
    expect(pick.items.map((p) => p.item?.id)).toEqual(['item-1']);
  });

  it('refuses to open while the daemon is not running, so the guard explains why', async () => {
    const { deps } = fakeDeps('failed');
    await expect(searchDecisions(deps)).rejects.toBeInstanceOf(DaemonNotRunningError);
    expect(vscode.window.createQuickPick).not.toHaveBeenCalled();
  });
});

describe('Search Decisions: what it shows', () => {
  it('one line per item: statement, kind, superseded marker, session and workspace; never hidden by VS Code’s filter', () => {
    const p = searchPick(hit({ kind: 'constraint', statement: 'Never  drop\na job.', superseded_by: 'item-9', state: 'accepted' }));
    expect(p.label).toBe('Never drop a job.');
    expect(p.description).toBe('Constraint · superseded · accepted');
    expect(p.detail).toBe('Refactor the parser · proj');
    expect(p.alwaysShow).toBe(true);
    expect((p.iconPath as vscode.ThemeIcon).id).toBe('history');
    const current = searchPick(hit({ session_title: null, workspace: null, cwd: '/srv/api' }));
    expect(current.description).toBe('Decision');
    expect(current.detail).toBe('session sess-aaa · api');
    expect((current.iconPath as vscode.ThemeIcon).id).toBe('milestone');
  });

  it('says when nothing matched, nothing for an empty query, and marks a partial match', () => {
    expect(searchPicks(answer([], { terms: [] }))).toEqual([]);
    expect(searchPicks(answer([]))).toEqual([{ label: 'No item matches these words', alwaysShow: true }]);
    const some = searchPicks(answer([hit()], { matched: 'any' }));
    expect(some[0]).toMatchObject({ kind: vscode.QuickPickItemKind.Separator });
    expect(some[1].item?.id).toBe('item-1');
  });
});

describe('Search Decisions: choosing an item', () => {
  async function choose(found: Item): Promise<void> {
    const { daemon, deps } = fakeDeps();
    daemon.search.mockResolvedValue(answer([{ ...found, score: -1 }]));
    const done = searchDecisions(deps);
    const pick = openedPick();
    pick.type('store');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS);
    pick.selectedItems = [pick.items[0]];
    pick.accept.fire();
    await done;
    expect(pick.hide).toHaveBeenCalled();
    expect(pick.dispose).toHaveBeenCalled();
  }

  it('opens its code (first file) when it names one', async () => {
    files.set('/home/dev/proj/src/store.py', new Uint8Array());
    await choose(item());
    const [uri] = vi.mocked(vscode.window.showTextDocument).mock.calls[0] as unknown as [vscode.Uri];
    expect(uri.fsPath).toBe('/home/dev/proj/src/store.py');
  });

  it('opens its transcript at the turn when it names no file', async () => {
    await choose(item({ files: [] }));
    const [uri, options] = vi.mocked(vscode.window.showTextDocument).mock.calls[0] as unknown as [
      vscode.Uri,
      { selection: vscode.Range },
    ];
    expect(uri.fsPath).toBe('/home/dev/.claude/projects/p/s.jsonl');
    expect(options.selection.start.line).toBe(11);
  });

  it('ignores Enter on a line that is no item, and opens nothing when the box is closed', async () => {
    const { daemon, deps } = fakeDeps();
    daemon.search.mockResolvedValue(answer([]));
    const done = searchDecisions(deps);
    const pick = openedPick();
    pick.type('nothing');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS);
    pick.selectedItems = [pick.items[0]];
    pick.accept.fire();
    expect(pick.hide).not.toHaveBeenCalled();
    pick.hide();
    await done;
    expect(vscode.window.showTextDocument).not.toHaveBeenCalled();
  });

  it('a chosen item whose file is gone is reported through the command’s guard', async () => {
    const { daemon, deps } = fakeDeps();
    daemon.search.mockResolvedValue(answer([hit()]));
    registerCommands(deps);
    const call = vi.mocked(vscode.commands.registerCommand).mock.calls.find((c) => c[0] === Commands.searchDecisions);
    const done = (call?.[1] as () => Promise<void>)();
    const pick = openedPick();
    pick.type('store');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS);
    pick.selectedItems = [pick.items[0]];
    pick.accept.fire();
    await done;
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith(
      'Checkpoint: Search Decisions failed: /home/dev/proj/src/store.py no longer exists',
      'Show Log',
    );
  });
});
