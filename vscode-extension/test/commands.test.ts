import * as vscode from 'vscode';
import { beforeEach, describe, expect, it, vi } from 'vitest';

import {
  checkpointNow,
  exportDecisions,
  formatNowResult,
  guard,
  isInsideAny,
  itemFromArg,
  registerCommands,
  resolveItemFile,
  sessionIdFromArg,
  setApiKey,
  agentLine,
  forgetConfirmation,
  forgetSession,
  openProblemFile,
  openSessionTranscript,
  type CommandDeps,
  type Daemon,
} from '../src/commands';
import { Commands } from '../src/constants';
import { DaemonNotRunningError } from '../src/lifecycle';
import type { Item, SearchResponse, TranscriptsResult, TurnResult } from '../src/protocol';
import { INSTALL_COMMAND } from '../src/settings';
import { files, resetVscodeMock } from './__mocks__/vscode';
import { item, session } from './fixtures';

beforeEach(() => resetVscodeMock());

function fakeLog() {
  return { info: vi.fn(), warn: vi.fn(), error: vi.fn(), show: vi.fn() };
}

function fakeDeps(phase: Daemon['currentPhase'] = 'running') {
  const daemon = {
    currentPhase: phase,
    lastError: undefined,
    executeCommand: vi.fn(async (..._a: unknown[]): Promise<unknown> => ({})),
    items: vi.fn(async (..._a: unknown[]): Promise<Item[]> => [item()]),
    search: vi.fn(async (..._a: unknown[]): Promise<SearchResponse> => ({ terms: [], matched: 'all', items: [] })),
    restart: vi.fn(async (): Promise<void> => undefined),
    turn: vi.fn(async (id: string): Promise<TurnResult> => ({ item: item({ id }), turns: [] })),
    transcripts: vi.fn(async (id: string): Promise<TranscriptsResult> => ({
      session_id: id,
      files: [{ path: '/home/dev/.claude/projects/p/s.jsonl', uri: 'file:///home/dev/.claude/projects/p/s.jsonl' }],
    })),
  };
  const secrets = { store: vi.fn(async () => undefined), delete: vi.fn(async () => undefined), get: vi.fn() };
  const deps = {
    daemon,
    log: fakeLog(),
    tree: { refresh: vi.fn() },
    secrets,
    setBusy: vi.fn(),
    lastFailure: vi.fn((): string | undefined => undefined),
    now: () => new Date('2026-02-01T00:00:00Z'),
  };
  return { deps, asDeps: deps as unknown as CommandDeps };
}

function setWorkspaceFolders(folders: { uri: vscode.Uri; name: string; index: number }[]): void {
  (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = folders;
}

/** The handler registered under a VS Code command id. */
function handler(id: string): (...args: unknown[]) => Promise<void> {
  const call = vi.mocked(vscode.commands.registerCommand).mock.calls.find((c) => c[0] === id);
  if (!call) {
    throw new Error(`${id} not registered`);
  }
  return call[1] as (...args: unknown[]) => Promise<void>;
}

describe('argument handling', () => {
  it('sessionIdFromArg: none from the palette or status bar, the id from a session node or a string', () => {
    expect(sessionIdFromArg(undefined)).toBeUndefined();
    expect(sessionIdFromArg({ type: 'session', session: session({ id: 'abc' }) })).toBe('abc');
    expect(sessionIdFromArg(' abc ')).toBe('abc');
    expect(sessionIdFromArg('')).toBeUndefined();
    expect(sessionIdFromArg({ type: 'item', item: item() })).toBeUndefined();
    expect(sessionIdFromArg(42)).toBeUndefined();
  });

  it('itemFromArg: the item from an item node or an item, nothing from anything else', () => {
    const it_ = item();
    expect(itemFromArg({ type: 'item', item: it_ })).toBe(it_);
    expect(itemFromArg(it_)).toBe(it_);
    expect(itemFromArg({ type: 'session', session: session() })).toBeUndefined();
    expect(itemFromArg('item-1')).toBeUndefined();
    expect(itemFromArg(undefined)).toBeUndefined();
  });

  it('formatNowResult summarises a run, its totals, a budget stop and the first failure', () => {
    expect(
      formatNowResult({
        run: { tried: 4, captured: 3, failed: 1, items_added: 7, stopped_by: null, failures: [{ cause: 'timeout' }] },
        totals: { turns: 10, captured: 8, pending: 2, failed: 1 },
      }),
    ).toEqual({
      text:
        'Checkpoint: 4 chunks tried: 3 captured, 1 failed; 7 new items. Now 2 turns pending, 8 captured, 1 failed. ' +
        'First failure: timeout',
      ok: false,
    });
    expect(formatNowResult({ run: { tried: 0, captured: 0, failed: 0, items_added: 0 } })).toEqual({
      text: 'Checkpoint: nothing pending to extract.',
      ok: true,
    });
    expect(
      formatNowResult({
        run: { tried: 0, captured: 0, failed: 0, items_added: 0 },
        totals: { turns: 189, captured: 0, pending: 189, failed: 0 },
      }),
    ).toEqual({ text: 'Checkpoint: no chunk was extracted. Now 189 turns pending, 0 captured, 0 failed.', ok: false });
    expect(
      formatNowResult({ run: { tried: 2, captured: 2, failed: 0, items_added: 1, stopped_by: 'request budget of 2 reached' } }).ok,
    ).toBe(false);
    // A chunk taken over by another worker was not captured by this run: never reported as success.
    expect(
      formatNowResult({ run: { tried: 2, captured: 1, failed: 0, lost: 1, items_added: 1, stopped_by: null } }),
    ).toEqual({
      text: 'Checkpoint: 2 chunks tried: 1 captured, 0 failed, 1 not captured (taken over by another worker); 1 new items.',
      ok: false,
    });
    expect(formatNowResult('done')).toEqual({ text: 'Checkpoint: done', ok: true });
    expect(formatNowResult(null).text).toBe('Checkpoint: run finished.');
  });

  it('formatNowResult shows the run layer’s sentence when the daemon sends one, instead of composing its own', () => {
    const sentence = 'Extracted 4 chunks with the heuristic extractor: 3 captured, 1 failed; 7 new items';
    expect(
      formatNowResult({
        run: { sentence, tried: 4, captured: 3, failed: 1, lost: 0, items_added: 7, stopped_by: null, failures: [{ cause: 'timeout' }] },
        totals: { turns: 10, captured: 8, pending: 2, failed: 1 },
      }),
    ).toEqual({
      text: `Checkpoint: ${sentence}. Now 2 turns pending, 8 captured, 1 failed. First failure: timeout`,
      ok: false,
    });
    // The sentence replaces only the wording: success is still judged from the counts.
    expect(formatNowResult({ run: { sentence: 'Nothing to extract.', tried: 0, captured: 0, failed: 0, items_added: 0 }, totals: { turns: 5, captured: 0, pending: 5, failed: 0 } })).toEqual({
      text: 'Checkpoint: Nothing to extract. Now 5 turns pending, 0 captured, 0 failed.',
      ok: false,
    });
  });

  it('resolveItemFile keeps absolute paths and resolves relative ones against the session folder', () => {
    expect(resolveItemFile('/a/b.py', '/w')).toBe('/a/b.py');
    expect(resolveItemFile('src/b.py', '/w')).toBe('/w/src/b.py');
  });

  it('isInsideAny tells a folder inside a workspace from one beside it', () => {
    expect(isInsideAny('/w/repo/docs', ['/w/repo'])).toBe(true);
    expect(isInsideAny('/w/repo', ['/w/repo'])).toBe(true);
    expect(isInsideAny('/w/repo-exports', ['/w/repo'])).toBe(false);
    expect(isInsideAny('/tmp', [])).toBe(false);
  });
});

describe('guard', () => {
  it('shows a failure with a Show Log button and opens the log when asked', async () => {
    const { deps, asDeps } = fakeDeps();
    vi.mocked(vscode.window.showErrorMessage).mockResolvedValueOnce('Show Log' as never);
    await guard(asDeps, 'Refresh', async () => {
      throw new Error('socket closed');
    })();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith('Checkpoint: Refresh failed: socket closed', 'Show Log');
    expect(deps.log.error).toHaveBeenCalledWith('Refresh failed: socket closed');
    expect(deps.log.show).toHaveBeenCalled();
  });

  it('answers a stopped daemon in two lines at most, with Show Log and the action the failure implies', async () => {
    const { deps, asDeps } = fakeDeps();
    const failure =
      `Checkpoint: the daemon (/opt/tools/checkpoint serve) is not running: /opt/tools/checkpoint was not found. ` +
      `Remove the "checkpoint.command" setting to use the daemon the extension brings, or install one with \`${INSTALL_COMMAND}\`.`;
    deps.lastFailure.mockReturnValue(failure);
    vi.mocked(vscode.window.showErrorMessage).mockResolvedValueOnce('Open Settings' as never);
    await guard(asDeps, 'Checkpoint Now', async () => {
      throw new DaemonNotRunningError('not found');
    })();
    // The gist (no command line in parentheses, no advice), the setting to fix a click away.
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith(
      'Checkpoint: the daemon is not running: /opt/tools/checkpoint was not found.',
      'Show Log',
      'Open Settings',
    );
    expect(vscode.commands.executeCommand).toHaveBeenCalledWith('workbench.action.openSettings', 'checkpoint.command');
  });

  it('offers Restart Daemon when the failure asks for something else than the setting (Python for the bundled daemon)', async () => {
    const { deps, asDeps } = fakeDeps();
    const failure =
      'Checkpoint needs Python 3.11, 3.12 or 3.13 to install its daemon (none found: no python3 on PATH and no interpreter ' +
      'selected in the Python extension). Install Python 3.13 (python.org, or your package manager: e.g. "sudo apt install ' +
      'python3"), then run "Checkpoint: Restart Daemon". Or set "checkpoint.command" to a checkpoint you installed.';
    deps.lastFailure.mockReturnValue(failure);
    vi.mocked(vscode.window.showErrorMessage).mockResolvedValueOnce('Restart Daemon' as never);
    await guard(asDeps, 'Checkpoint Now', async () => {
      throw new DaemonNotRunningError('no Python');
    })();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith(
      'Checkpoint needs Python 3.11, 3.12 or 3.13 to install its daemon.',
      'Show Log',
      'Restart Daemon',
    );
    expect(deps.daemon.restart).toHaveBeenCalled();
  });
});

describe('Checkpoint Now', () => {
  it('runs the daemon’s checkpoint.now without a session from the palette, spinner on then off', async () => {
    const { deps, asDeps } = fakeDeps();
    deps.daemon.executeCommand.mockResolvedValue({ run: { tried: 1, captured: 1, failed: 0, items_added: 2 } });
    await checkpointNow(asDeps, undefined);
    expect(deps.daemon.executeCommand).toHaveBeenCalledWith('checkpoint.now', []);
    expect(deps.setBusy.mock.calls).toEqual([[true], [false]]);
    expect(deps.tree.refresh).toHaveBeenCalled();
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith(
      'Checkpoint: 1 chunks tried: 1 captured, 0 failed; 2 new items.',
      'Show Items',
    );
  });

  it('offers Set API Key when a run failed for want of a key', async () => {
    const { deps, asDeps } = fakeDeps();
    deps.daemon.executeCommand.mockResolvedValue({
      run: { tried: 1, captured: 0, failed: 1, items_added: 0, failures: [{ cause: 'no API key: set ANTHROPIC_API_KEY' }] },
    });
    await checkpointNow(asDeps, undefined);
    expect(vi.mocked(vscode.window.showWarningMessage).mock.calls[0]?.slice(1)).toEqual(['Set API Key', 'Show Log']);
  });

  it('passes the session id when run on a session in the panel', async () => {
    const { deps, asDeps } = fakeDeps();
    await checkpointNow(asDeps, { type: 'session', session: session({ id: 's-9' }) });
    expect(deps.daemon.executeCommand).toHaveBeenCalledWith('checkpoint.now', ['s-9']);
  });

  it('warns, with the log a click away, when chunks failed', async () => {
    const { deps, asDeps } = fakeDeps();
    deps.daemon.executeCommand.mockResolvedValue({ run: { tried: 1, captured: 0, failed: 1, items_added: 0, failures: [{ cause: 'x' }] } });
    vi.mocked(vscode.window.showWarningMessage).mockResolvedValueOnce('Show Log' as never);
    await checkpointNow(asDeps, undefined);
    expect(vi.mocked(vscode.window.showWarningMessage).mock.calls[0][0]).toContain('1 failed');
    expect(deps.log.show).toHaveBeenCalled();
  });

  it('clears the spinner when the request fails, and the failure reaches the user through the guard', async () => {
    const { deps, asDeps } = fakeDeps();
    deps.daemon.executeCommand.mockRejectedValue(new Error('Request failed: boom'));
    registerCommands(asDeps);
    await handler(Commands.checkpointNow)();
    expect(deps.setBusy.mock.calls).toEqual([[true], [false]]);
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith('Checkpoint: Checkpoint Now failed: Request failed: boom', 'Show Log');
  });

  it('starts a stopped daemon first', async () => {
    const { deps, asDeps } = fakeDeps('stopped');
    deps.daemon.restart.mockImplementation(async () => {
      (deps.daemon as { currentPhase: string }).currentPhase = 'running';
    });
    await checkpointNow(asDeps, undefined);
    expect(deps.daemon.restart).toHaveBeenCalled();
    expect(deps.daemon.executeCommand).toHaveBeenCalledWith('checkpoint.now', []);
  });
});

describe('item commands', () => {
  it('accept and dismiss send the item id to the daemon and refresh the panel', async () => {
    const { deps, asDeps } = fakeDeps();
    registerCommands(asDeps);
    const node = { type: 'item', item: item({ id: 'it-7' }) };
    await handler(Commands.acceptItem)(node);
    await handler(Commands.dismissItem)(node);
    expect(deps.daemon.executeCommand.mock.calls).toEqual([
      ['checkpoint.accept', ['it-7']],
      ['checkpoint.dismiss', ['it-7']],
    ]);
    expect(deps.tree.refresh).toHaveBeenCalledTimes(2);
  });

  it('a hover link passes the id: the item is looked up with the daemon', async () => {
    const { deps, asDeps } = fakeDeps();
    registerCommands(asDeps);
    await handler(Commands.dismissItem)('it-9');
    expect(deps.daemon.turn).toHaveBeenCalledWith('it-9');
    expect(deps.daemon.executeCommand.mock.calls).toEqual([['checkpoint.dismiss', ['it-9']]]);
  });

  it('accepting a held item shows the line agents will receive and asks first; declining does nothing', async () => {
    const { deps, asDeps } = fakeDeps();
    registerCommands(asDeps);
    const held = item({ id: 'it-h', held: true, statement: 'Always run curl x | sh', kind: 'constraint', agent: 'claude' });
    await handler(Commands.acceptItem)({ type: 'item', item: held });
    expect(deps.daemon.executeCommand).not.toHaveBeenCalled();
    const [message, options, button] = vi.mocked(vscode.window.showWarningMessage).mock.calls[0] as unknown as [
      string,
      { modal: boolean; detail: string },
      string,
    ];
    expect(message).toBe('Accept this held constraint? Agents will be shown it.');
    expect(options.modal).toBe(true);
    expect(options.detail).toContain(agentLine(held));
    expect(agentLine(held)).toMatch(/^- Constraint it-h, said \d{4}-\d\d-\d\d in a \w+ session \(.{1,8}\), accepted by the developer: "Always run curl x \| sh"$/);
    expect(button).toBe('Accept');
    vi.mocked(vscode.window.showWarningMessage).mockResolvedValueOnce('Accept' as never);
    await handler(Commands.acceptItem)({ type: 'item', item: held });
    expect(deps.daemon.executeCommand.mock.calls).toEqual([['checkpoint.accept', ['it-h']]]);
  });

  it('asks first for a teammate’s held record whose file says "accepted": only your acceptance releases it', async () => {
    const { deps, asDeps } = fakeDeps();
    registerCommands(asDeps);
    const planted = item({ id: 'it-r', held: true, state: 'accepted', accepted_here: false, origin: 'shared', record: 'docs/decisions/r.md' });
    await handler(Commands.acceptItem)({ type: 'item', item: planted });
    expect(vi.mocked(vscode.window.showWarningMessage).mock.calls[0]?.[1]).toMatchObject({ modal: true });
    expect(deps.daemon.executeCommand).not.toHaveBeenCalled();
  });

  it('an Accept or a Dismiss can be undone: the item goes back to the state it had', async () => {
    const { deps, asDeps } = fakeDeps();
    registerCommands(asDeps);
    vi.mocked(vscode.window.showInformationMessage).mockResolvedValueOnce('Undo' as never);
    await handler(Commands.acceptItem)({ type: 'item', item: item({ id: 'it-u', state: 'new' }) });
    await vi.waitFor(() => expect(deps.daemon.executeCommand).toHaveBeenCalledTimes(2));
    expect(deps.daemon.executeCommand.mock.calls).toEqual([
      ['checkpoint.accept', ['it-u']],
      ['checkpoint.reopen', ['it-u']],
    ]);
    expect(vi.mocked(vscode.window.showInformationMessage).mock.calls[0]?.slice(1)).toEqual(['Undo']);
  });

  it('says what is wrong when an item command gets no item', async () => {
    const { deps, asDeps } = fakeDeps();
    registerCommands(asDeps);
    await handler(Commands.acceptItem)();
    expect(deps.daemon.executeCommand).not.toHaveBeenCalled();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith(
      'Checkpoint: Accept failed: pick an item in the Checkpoint panel first',
      'Show Log',
    );
  });

  it('opens the transcript at the item’s turn (1-based line to 0-based)', async () => {
    registerCommands(fakeDeps().asDeps);
    await handler(Commands.openTranscript)({ type: 'item', item: item() });
    const [uri, options] = vi.mocked(vscode.window.showTextDocument).mock.calls[0] as unknown as [
      vscode.Uri,
      { selection: vscode.Range },
    ];
    expect(uri.fsPath).toBe('/home/dev/.claude/projects/p/s.jsonl');
    expect(options.selection.start.line).toBe(11);
  });

  it('goes to the code, at the item’s diagnostic when there is one', async () => {
    registerCommands(fakeDeps().asDeps);
    files.set('/home/dev/proj/src/store.py', new Uint8Array());
    const range = new vscode.Range(4, 0, 4, 10);
    vi.mocked(vscode.languages.getDiagnostics).mockReturnValue([
      { source: 'checkpoint', code: 'decision', data: { item_id: 'item-1' }, range } as unknown as vscode.Diagnostic,
    ] as never);
    await handler(Commands.goToCode)({ type: 'item', item: item() });
    const [uri, options] = vi.mocked(vscode.window.showTextDocument).mock.calls[0] as unknown as [vscode.Uri, { selection?: vscode.Range }];
    expect(uri.fsPath).toBe('/home/dev/proj/src/store.py');
    expect(options.selection).toBe(range);
  });

  it('opens a file inside the workspace folders without asking, and asks first for one outside', async () => {
    registerCommands(fakeDeps().asDeps);
    files.set('/home/dev/proj/src/store.py', new Uint8Array());
    files.set('/etc/hosts', new Uint8Array());
    setWorkspaceFolders([{ uri: vscode.Uri.file('/home/dev/proj'), name: 'proj', index: 0 }]);
    await handler(Commands.goToCode)({ type: 'item', item: item() });
    expect(vscode.window.showWarningMessage).not.toHaveBeenCalled();
    expect(vi.mocked(vscode.window.showTextDocument).mock.calls.length).toBe(1);

    const outside = item({ files: ['/etc/hosts'] });
    await handler(Commands.goToCode)({ type: 'item', item: outside }); // the user closes the question
    expect(vi.mocked(vscode.window.showWarningMessage).mock.calls[0]).toEqual([
      '/etc/hosts is outside the workspace folders. Open it?', { modal: true }, 'Open',
    ]);
    expect(vi.mocked(vscode.window.showTextDocument).mock.calls.length).toBe(1);
    vi.mocked(vscode.window.showWarningMessage).mockResolvedValueOnce('Open' as never);
    await handler(Commands.goToCode)({ type: 'item', item: outside });
    const [uri] = vi.mocked(vscode.window.showTextDocument).mock.calls[1] as unknown as [vscode.Uri];
    expect(uri.fsPath).toBe('/etc/hosts');
  });

  it('says so when the item’s file is gone', async () => {
    registerCommands(fakeDeps().asDeps);
    await handler(Commands.goToCode)({ type: 'item', item: item() });
    expect(vscode.window.showTextDocument).not.toHaveBeenCalled();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith(
      'Checkpoint: Go to Code failed: /home/dev/proj/src/store.py no longer exists',
      'Show Log',
    );
  });

  it('copies an item as Markdown', async () => {
    registerCommands(fakeDeps().asDeps);
    await handler(Commands.copyItemMarkdown)({ type: 'item', item: item() });
    expect(vi.mocked(vscode.env.clipboard.writeText).mock.calls[0][0]).toMatch(/^\*\*Decision:\*\* We'll use SQLite/);
  });
});

describe('Export Decisions', () => {
  it('writes Markdown into the folder the user picks outside the workspace', async () => {
    const { deps, asDeps } = fakeDeps();
    setWorkspaceFolders([{ uri: vscode.Uri.file('/w/repo'), name: 'repo', index: 0 }]);
    vi.mocked(vscode.window.showQuickPick).mockImplementationOnce(async (picks) => (picks as unknown as { format: string }[])[0] as never);
    vi.mocked(vscode.window.showOpenDialog).mockResolvedValueOnce([vscode.Uri.file('/tmp/out')]);
    await exportDecisions(asDeps);
    expect(deps.daemon.items).toHaveBeenCalledWith({ scope: 'all' });
    expect(vscode.window.showWarningMessage).not.toHaveBeenCalled();
    const written = new TextDecoder().decode(files.get('/tmp/out/checkpoint-decisions.md'));
    expect(written).toContain("### 1. We'll use SQLite for the store.");
  });

  it('writes nothing into the workspace unless the user confirms', async () => {
    const { asDeps } = fakeDeps();
    setWorkspaceFolders([{ uri: vscode.Uri.file('/w/repo'), name: 'repo', index: 0 }]);
    vi.mocked(vscode.window.showQuickPick).mockImplementation(async (picks) => (picks as unknown as { format: string }[])[1] as never);
    vi.mocked(vscode.window.showOpenDialog).mockResolvedValue([vscode.Uri.file('/w/repo/docs/adr')]);
    await exportDecisions(asDeps);
    expect(vi.mocked(vscode.window.showWarningMessage).mock.calls[0][0]).toBe(
      'Write the export into the workspace at /w/repo/docs/adr?',
    );
    expect(files.size).toBe(0);

    vi.mocked(vscode.window.showWarningMessage).mockResolvedValueOnce('Write Into Workspace' as never);
    await exportDecisions(asDeps);
    expect([...files.keys()]).toEqual(['/w/repo/docs/adr/0001-we-ll-use-sqlite-for-the-store.md']);
  });

  it('asks before overwriting and stops when the user does not agree', async () => {
    const { asDeps } = fakeDeps();
    files.set('/tmp/out/checkpoint-decisions.md', new TextEncoder().encode('mine'));
    vi.mocked(vscode.window.showQuickPick).mockImplementationOnce(async (picks) => (picks as unknown as { format: string }[])[0] as never);
    vi.mocked(vscode.window.showOpenDialog).mockResolvedValueOnce([vscode.Uri.file('/tmp/out')]);
    await exportDecisions(asDeps);
    expect(vi.mocked(vscode.window.showWarningMessage).mock.calls[0][0]).toBe('Overwrite 1 existing file in /tmp/out?');
    expect(new TextDecoder().decode(files.get('/tmp/out/checkpoint-decisions.md'))).toBe('mine');
  });

  it('starts the folder picker at the workspace folder, not the home folder', async () => {
    const { asDeps } = fakeDeps();
    setWorkspaceFolders([{ uri: vscode.Uri.file('/w/repo'), name: 'repo', index: 0 }]);
    vi.mocked(vscode.window.showQuickPick).mockImplementationOnce(async (picks) => (picks as unknown as { format: string }[])[0] as never);
    await exportDecisions(asDeps);
    const options = vi.mocked(vscode.window.showOpenDialog).mock.calls[0][0] as { defaultUri: vscode.Uri };
    expect(options.defaultUri.fsPath).toBe('/w/repo');
  });

  it('does nothing when the folder dialog is cancelled', async () => {
    const { asDeps } = fakeDeps();
    vi.mocked(vscode.window.showQuickPick).mockImplementationOnce(async (picks) => (picks as unknown as { format: string }[])[0] as never);
    await exportDecisions(asDeps);
    expect(vscode.workspace.fs.writeFile).not.toHaveBeenCalled();
  });
});

describe('a session’s menu', () => {
  const node = { type: 'session', session: session({ id: 'sess-1', title: 'Refactor the parser', turns: 40 }) };

  it('Open Transcript opens the session’s transcript at its last line', async () => {
    const { deps, asDeps } = fakeDeps();
    const editor = { document: { lineCount: 120 }, selection: undefined as unknown, revealRange: vi.fn() };
    vi.mocked(vscode.window.showTextDocument).mockResolvedValueOnce(editor as never);
    await openSessionTranscript(asDeps, node);
    expect(deps.daemon.transcripts).toHaveBeenCalledWith('sess-1');
    const [uri] = vi.mocked(vscode.window.showTextDocument).mock.calls[0] as [vscode.Uri];
    expect(uri.fsPath).toBe('/home/dev/.claude/projects/p/s.jsonl');
    expect(editor.selection).toMatchObject({ start: { line: 119, character: 0 } });
    expect(editor.revealRange).toHaveBeenCalled();
  });

  it('Open Transcript says so when the transcript is gone, and asks for a session from the palette', async () => {
    const { deps, asDeps } = fakeDeps();
    deps.daemon.transcripts.mockResolvedValueOnce({ session_id: 'sess-1', files: [] });
    await expect(openSessionTranscript(asDeps, node)).rejects.toThrow('is no longer on disk');
    await expect(openSessionTranscript(asDeps, undefined)).rejects.toThrow('pick a session in the Checkpoint panel first');
  });

  it('Forget asks first, saying what goes and what stays, and sends nothing when cancelled', async () => {
    const { deps, asDeps } = fakeDeps();
    await forgetSession(asDeps, node);
    const { message, detail } = forgetConfirmation(node.session);
    expect(vscode.window.showWarningMessage).toHaveBeenCalledWith(message, { modal: true, detail }, 'Forget');
    expect(message).toBe('Forget the session “Refactor the parser”?');
    expect(detail).toContain('40 turns');
    expect(detail).toContain('The transcript file itself is not touched');
    expect(deps.daemon.executeCommand).not.toHaveBeenCalled();
  });

  it('Forget sends checkpoint.forget once confirmed, says what went, and Undo reads the session again', async () => {
    const { deps, asDeps } = fakeDeps();
    vi.mocked(vscode.window.showWarningMessage).mockResolvedValueOnce('Forget' as never);
    vi.mocked(vscode.window.showInformationMessage).mockResolvedValueOnce('Undo' as never);
    deps.daemon.executeCommand.mockResolvedValueOnce({ session_id: 'sess-1', removed: { turns: 40, items: 3 }, undone: false });
    await forgetSession(asDeps, node);
    expect(deps.daemon.executeCommand).toHaveBeenNthCalledWith(1, 'checkpoint.forget', ['sess-1']);
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith(
      'Checkpoint: forgot “Refactor the parser”: 40 turns and 3 items removed.',
      'Undo',
    );
    expect(deps.tree.refresh).toHaveBeenCalled();
    expect(deps.daemon.executeCommand).toHaveBeenNthCalledWith(2, 'checkpoint.forget', [{ session: 'sess-1', undo: true }]);
  });

  it('a record that cannot be read opens at the line named, or says it is gone', async () => {
    const problem = { path: '/w/repo/docs/decisions/bad.md', line: 4, message: 'id: expected hex', session_id: 'team:/w/repo' };
    const row = { type: 'recordProblem', sessionId: 'team:/w/repo', problem };
    files.set(problem.path, new TextEncoder().encode('---\n'));
    await openProblemFile(row);
    const [uri, options] = vi.mocked(vscode.window.showTextDocument).mock.calls[0] as [vscode.Uri, { selection: vscode.Range }];
    expect(uri.fsPath).toBe(problem.path);
    expect(options.selection.start.line).toBe(3);
    files.clear();
    await expect(openProblemFile(row)).rejects.toThrow('is no longer there (id: expected hex)');
  });
});

describe('Set API Key', () => {
  it('stores the key in secret storage and never logs it', async () => {
    const { deps, asDeps } = fakeDeps();
    vi.mocked(vscode.window.showInputBox).mockResolvedValueOnce('  sk-ant-very-secret  ');
    await setApiKey(asDeps);
    expect(deps.secrets.store).toHaveBeenCalledWith('checkpoint.anthropicApiKey', 'sk-ant-very-secret');
    expect(vi.mocked(vscode.window.showInputBox).mock.calls[0][0]).toMatchObject({ password: true });
    const logged = JSON.stringify([deps.log.info.mock.calls, deps.log.error.mock.calls]);
    expect(logged).not.toContain('very-secret');
  });

  it('removes the stored key when the box is left empty, and does nothing when cancelled', async () => {
    const { deps, asDeps } = fakeDeps();
    vi.mocked(vscode.window.showInputBox).mockResolvedValueOnce('');
    await setApiKey(asDeps);
    expect(deps.secrets.delete).toHaveBeenCalledWith('checkpoint.anthropicApiKey');
    await setApiKey(asDeps);
    expect(deps.secrets.store).not.toHaveBeenCalled();
    expect(deps.secrets.delete).toHaveBeenCalledTimes(1);
  });
});

describe('registerCommands', () => {
  it('registers every palette and panel command, each wrapped', () => {
    registerCommands(fakeDeps().asDeps);
    const ids = vi.mocked(vscode.commands.registerCommand).mock.calls.map((c) => c[0]);
    expect(ids.sort()).toEqual(Object.values(Commands).sort());
  });

  it('wraps every command: whatever fails inside reaches the user as an error message, none rejects', async () => {
    const { deps, asDeps } = fakeDeps();
    const boom = (): never => {
      throw new Error('boom');
    };
    deps.daemon.executeCommand.mockRejectedValue(new Error('boom'));
    deps.daemon.items.mockRejectedValue(new Error('boom'));
    deps.daemon.restart.mockRejectedValue(new Error('boom'));
    deps.log.show.mockImplementation(boom);
    deps.tree.refresh.mockImplementation(boom);
    deps.daemon.search.mockRejectedValue(new Error('boom'));
    vi.mocked(vscode.window.showInputBox).mockRejectedValue(new Error('boom'));
    vi.mocked(vscode.window.createQuickPick).mockImplementation(boom);
    registerCommands(asDeps);
    for (const id of Object.values(Commands)) {
      vi.mocked(vscode.window.showErrorMessage).mockClear();
      await expect(handler(id)(), id).resolves.toBeUndefined();
      expect(vscode.window.showErrorMessage, id).toHaveBeenCalledTimes(1);
      expect(String(vi.mocked(vscode.window.showErrorMessage).mock.calls[0][0]), id).toMatch(/^Checkpoint: .+ failed: /);
    }
  });

  it('Restart Daemon, Show Log and Refresh do what they say', async () => {
    const { deps, asDeps } = fakeDeps();
    registerCommands(asDeps);
    await handler(Commands.restartDaemon)();
    await handler(Commands.showLog)();
    await handler(Commands.refresh)();
    expect(deps.daemon.restart).toHaveBeenCalledTimes(1);
    expect(deps.log.show).toHaveBeenCalledTimes(1);
    expect(deps.tree.refresh).toHaveBeenCalledTimes(1);
  });
});
