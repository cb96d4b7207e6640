import * as vscode from 'vscode';

import { TOAST_MAX } from '../src/toast';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import { markSuperseded, registerCommands, removeSupersession, type CommandDeps } from '../src/commands';
import { Commands, ServerCommands } from '../src/constants';
import type { Item, SupersedeResult } from '../src/protocol';
import { resetVscodeMock } from './__mocks__/vscode';
import { item } from './fixtures';

beforeEach(() => resetVscodeMock());

const OLD = item({ id: 'old', statement: 'We use vLLM for serving.', created_at: 100 });
const NEW = item({ id: 'new', statement: 'We moved to SGLang.', created_at: 300 });
const OTHER = item({ id: 'other', statement: 'Keep the queue durable.', created_at: 200 });

const linked = (over: Partial<SupersedeResult> = {}): SupersedeResult => ({
  old_id: 'old',
  new_id: 'new',
  changed: true,
  removed: 0,
  superseded_by: 'new',
  ...over,
});

function fakeDeps() {
  const daemon = {
    currentPhase: 'running',
    lastError: undefined,
    executeCommand: vi.fn(async (_c: string, _a?: unknown[]): Promise<unknown> => linked()),
    items: vi.fn(async (): Promise<Item[]> => [OLD, OTHER, NEW]),
    search: vi.fn(),
    restart: vi.fn(async () => undefined),
  };
  const log = { info: vi.fn(), warn: vi.fn(), error: vi.fn(), show: vi.fn() };
  const tree = { refresh: vi.fn() };
  const deps = { daemon, log, tree, secrets: {}, setBusy: vi.fn(), lastFailure: () => undefined };
  return { daemon, tree, deps: deps as unknown as CommandDeps };
}

type Picked = vscode.QuickPickItem & { item: Item };

/** The quick pick answers in turn: each a function of the offered lines. */
function pickInTurn(...choose: ((offered: Picked[]) => Picked | undefined)[]): void {
  for (const fn of choose) {
    vi.mocked(vscode.window.showQuickPick).mockImplementationOnce(async (offered: unknown) => fn(offered as Picked[]));
  }
}
const byId = (id: string) => (offered: Picked[]) => offered.find((p) => p.item.id === id);

describe('Mark as Superseded by…', () => {
  it('from the panel: offers the other items newest first, links the picked one, and refreshes the panel', async () => {
    const { daemon, tree, deps } = fakeDeps();
    let offered: string[] = [];
    pickInTurn((lines) => {
      offered = lines.map((p) => p.item.id);
      return byId('new')(lines);
    });
    await markSuperseded(deps, { type: 'item', item: OLD });
    expect(offered).toEqual(['new', 'other']);
    expect(daemon.executeCommand).toHaveBeenCalledTimes(1);
    expect(daemon.executeCommand).toHaveBeenCalledWith(ServerCommands.supersede, [{ old: 'old', new: 'new' }]);
    expect(tree.refresh).toHaveBeenCalled();
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith(
      'Checkpoint: “We use vLLM for serving.” is now superseded by “We moved to SGLang.”.',
      'Undo',
    );
  });

  it('Undo on the notification sends the same link with undo', async () => {
    const { daemon, tree, deps } = fakeDeps();
    pickInTurn(byId('new'));
    vi.mocked(vscode.window.showInformationMessage).mockResolvedValueOnce('Undo' as never);
    daemon.executeCommand.mockResolvedValueOnce(linked()).mockResolvedValueOnce(linked({ removed: 1, superseded_by: null }));
    await markSuperseded(deps, OLD);
    expect(daemon.executeCommand.mock.calls.map((c) => c[1])).toEqual([
      [{ old: 'old', new: 'new' }],
      [{ old: 'old', new: 'new', undo: true }],
    ]);
    expect(tree.refresh).toHaveBeenCalledTimes(2);
    expect(vscode.window.showInformationMessage).toHaveBeenLastCalledWith('Checkpoint: “We use vLLM for serving.” is current again.');
  });

  it('from the palette: picks the old item first, then the newer one (the old one not offered again)', async () => {
    const { daemon, deps } = fakeDeps();
    const second: string[] = [];
    pickInTurn(byId('old'), (lines) => {
      second.push(...lines.map((p) => p.item.id));
      return byId('other')(lines);
    });
    await markSuperseded(deps, undefined);
    expect(second).not.toContain('old');
    expect(daemon.executeCommand).toHaveBeenCalledWith(ServerCommands.supersede, [{ old: 'old', new: 'other' }]);
  });

  it('sends nothing when a pick is closed', async () => {
    const { daemon, deps } = fakeDeps();
    pickInTurn(() => undefined);
    await markSuperseded(deps, OLD);
    expect(daemon.executeCommand).not.toHaveBeenCalled();
  });

  it('a link that already existed: says so, with no Undo that would remove it', async () => {
    const { daemon, deps } = fakeDeps();
    pickInTurn(byId('new'));
    daemon.executeCommand.mockResolvedValueOnce(linked({ changed: false }));
    await markSuperseded(deps, OLD);
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith(
      'Checkpoint: “We use vLLM for serving.” was already superseded by “We moved to SGLang.”.',
    );
  });

  it('a refusal (a loop, an unknown id) reaches the user as the daemon’s message', async () => {
    const { daemon, deps } = fakeDeps();
    const refusal = 'checkpoint.supersede: item old is already superseded (directly or along a chain) by item new: new superseded by old would make a loop';
    daemon.executeCommand.mockRejectedValueOnce(new Error(refusal));
    pickInTurn(byId('new'));
    registerCommands(deps);
    const call = vi.mocked(vscode.commands.registerCommand).mock.calls.find((c) => c[0] === Commands.markSuperseded);
    await (call?.[1] as (arg: unknown) => Promise<void>)({ type: 'item', item: OLD });
    // Two lines at most: the gist, with Show Log; the whole refusal is in the log.
    const [shown, ...buttons] = vi.mocked(vscode.window.showErrorMessage).mock.calls[0] as string[];
    expect(buttons).toEqual(['Show Log']);
    expect(shown).toMatch(/^Checkpoint: Mark as Superseded failed: item old is already superseded by item new/);
    expect(shown.length).toBeLessThanOrEqual(TOAST_MAX);
    expect(deps.log.error).toHaveBeenCalledWith(`Mark as Superseded failed: ${refusal}`);
  });
});

describe('Remove Supersession', () => {
  it('sends undo for every link from the superseded item', async () => {
    const { daemon, tree, deps } = fakeDeps();
    daemon.executeCommand.mockResolvedValueOnce(linked({ new_id: null, removed: 1, superseded_by: null }));
    await removeSupersession(deps, { type: 'item', item: { ...OLD, superseded_by: 'new' } });
    expect(daemon.executeCommand).toHaveBeenCalledWith(ServerCommands.supersede, [{ old: 'old', undo: true }]);
    expect(tree.refresh).toHaveBeenCalled();
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith('Checkpoint: “We use vLLM for serving.” is current again.');
  });

  it('refuses an item that is not superseded, sending nothing', async () => {
    const { daemon, deps } = fakeDeps();
    await expect(removeSupersession(deps, OLD)).rejects.toThrow('this item is not superseded');
    expect(daemon.executeCommand).not.toHaveBeenCalled();
  });
});
