/**
 * Palette and panel commands. Each one is wrapped by {@link guard}: a failure is logged and shown
 * to the user with a Show Log button, never swallowed.
 *
 * The VS Code command ids differ from the daemon's `workspace/executeCommand` ids (checkpoint.now,
 * checkpoint.accept, checkpoint.dismiss): vscode-languageclient registers the daemon's ids as VS Code
 * commands itself, and a second registration under the same id would fail.
 */

import * as os from 'node:os';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { exportFiles, itemMarkdown, type ExportFormat } from './export';
import { DaemonNotRunningError } from './lifecycle';
import { ServerCommands, type Item, type ItemsQuery, type NowResult } from './protocol';
import { API_KEY_SECRET, INSTALL_COMMAND } from './settings';
import type { DaemonPhase } from './status';
import type { Node } from './tree';

export const Commands = {
  checkpointNow: 'checkpoint.checkpointNow',
  showLog: 'checkpoint.showLog',
  restartDaemon: 'checkpoint.restartDaemon',
  refresh: 'checkpoint.refresh',
  exportDecisions: 'checkpoint.exportDecisions',
  setApiKey: 'checkpoint.setApiKey',
  goToCode: 'checkpoint.goToCode',
  openTranscript: 'checkpoint.openTranscript',
  acceptItem: 'checkpoint.acceptItem',
  dismissItem: 'checkpoint.dismissItem',
  copyItemMarkdown: 'checkpoint.copyItemMarkdown',
} as const;

/** What the commands need of the daemon client (a fake in unit tests). */
export interface Daemon {
  readonly currentPhase: DaemonPhase;
  readonly lastError: string | undefined;
  executeCommand(command: string, args?: unknown[]): Promise<unknown>;
  items(query: ItemsQuery): Promise<Item[]>;
  restart(): Promise<void>;
}

export interface CommandDeps {
  daemon: Daemon;
  log: vscode.LogOutputChannel;
  tree: { refresh(): void };
  secrets: vscode.SecretStorage;
  /** A Checkpoint Now from this window is in flight (spinner in the status bar). */
  setBusy(busy: boolean): void;
  /** The full message of the last start failure, with the install command. */
  lastFailure(): string | undefined;
  now?: () => Date;
}

// -- argument handling (pure) ---------------------------------------------------------------------

/** The session a Checkpoint Now is for: none from the palette or status bar, a session node from the panel. */
export function sessionIdFromArg(arg: unknown): string | undefined {
  if (typeof arg === 'string') {
    return arg.trim() || undefined;
  }
  if (arg && typeof arg === 'object') {
    const node = arg as Partial<Node> & { session?: unknown; id?: unknown };
    if (node.type === 'session' && node.session && typeof node.session === 'object') {
      const id = (node.session as { id?: unknown }).id;
      return typeof id === 'string' ? id : undefined;
    }
  }
  return undefined;
}

/** The item a panel command acts on: an item node, or an item itself. */
export function itemFromArg(arg: unknown): Item | undefined {
  if (!arg || typeof arg !== 'object') {
    return undefined;
  }
  const maybe = arg as { type?: unknown; item?: unknown };
  const candidate = maybe.type === 'item' ? maybe.item : arg;
  if (
    candidate &&
    typeof candidate === 'object' &&
    typeof (candidate as Item).id === 'string' &&
    typeof (candidate as Item).statement === 'string'
  ) {
    return candidate as Item;
  }
  return undefined;
}

/** The message after a Checkpoint Now, and whether everything it tried was captured. */
export function formatNowResult(result: unknown): { text: string; ok: boolean } {
  if (typeof result === 'string') {
    return { text: `Checkpoint: ${result}`, ok: true };
  }
  if (result === null || result === undefined) {
    return { text: 'Checkpoint: run finished.', ok: true };
  }
  const r = result as NowResult;
  if (typeof r === 'object' && r.run) {
    const run = r.run;
    const stillPending = r.totals?.pending ?? 0;
    let text: string;
    if (run.tried > 0) {
      const lost = run.lost ? `, ${run.lost} not captured (taken over by another worker)` : '';
      text = `Checkpoint: ${run.tried} chunks tried: ${run.captured} captured, ${run.failed} failed${lost}; ${run.items_added} new items.`;
    } else if (stillPending > 0) {
      // Nothing was sent although turns are pending: never let that read as success.
      text = 'Checkpoint: no chunk was extracted.';
    } else {
      text = 'Checkpoint: nothing pending to extract.';
    }
    if (r.totals) {
      text += ` Now ${r.totals.pending} turns pending, ${r.totals.captured} captured, ${r.totals.failed} failed.`;
    }
    if (run.stopped_by) {
      text += ` Stopped: ${run.stopped_by}; the rest stays pending.`;
    }
    if (run.failures?.length) {
      text += ` First failure: ${run.failures[0].cause}`;
    }
    const allCaptured = run.failed === 0 && !run.lost && !run.stopped_by;
    return { text, ok: allCaptured && (run.tried > 0 || stillPending === 0) };
  }
  return { text: `Checkpoint: ${JSON.stringify(result).slice(0, 300)}`, ok: true };
}

/** An item's file as an absolute path: as given, or relative to the session's folder. */
export function resolveItemFile(file: string, cwd: string | null): string {
  if (path.isAbsolute(file)) {
    return file;
  }
  return path.resolve(cwd ?? os.homedir(), file);
}

/** Whether `folder` is one of `roots` or inside one. */
export function isInsideAny(folder: string, roots: readonly string[]): boolean {
  const f = path.resolve(folder);
  return roots.some((root) => {
    const r = path.resolve(root);
    const rel = path.relative(r, f);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });
}

// -- error reporting ------------------------------------------------------------------------------

/** The daemon is not running: say why and how to fix it, with buttons. */
export async function showDaemonError(message: string, deps: Pick<CommandDeps, 'log' | 'daemon'>): Promise<void> {
  const choice = await vscode.window.showErrorMessage(
    message,
    'Show Log',
    'Restart Daemon',
    'Copy Install Command',
    'Open Settings',
  );
  if (choice === 'Show Log') {
    deps.log.show(true);
  } else if (choice === 'Restart Daemon') {
    await deps.daemon.restart();
  } else if (choice === 'Copy Install Command') {
    await vscode.env.clipboard.writeText(INSTALL_COMMAND);
  } else if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'checkpoint.command');
  }
}

/** Wrap a command so any failure reaches the user (and the log) instead of vanishing. */
export function guard(
  deps: Pick<CommandDeps, 'log' | 'daemon' | 'lastFailure'>,
  title: string,
  fn: (...args: unknown[]) => Promise<unknown>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof DaemonNotRunningError) {
        deps.log.error(`${title}: ${err.message}`);
        await showDaemonError(
          deps.lastFailure() ?? `Checkpoint: ${title} needs the daemon, and ${err.message}.`,
          deps,
        );
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      deps.log.error(`${title} failed: ${message}`);
      const choice = await vscode.window.showErrorMessage(`Checkpoint: ${title} failed: ${message}`, 'Show Log');
      if (choice === 'Show Log') {
        deps.log.show(true);
      }
    }
  };
}

class UserError extends Error {}

function requireItem(arg: unknown): Item {
  const item = itemFromArg(arg);
  if (!item) {
    throw new UserError('pick an item in the Checkpoint panel first');
  }
  return item;
}

// -- the commands ---------------------------------------------------------------------------------

export async function checkpointNow(deps: CommandDeps, arg?: unknown): Promise<void> {
  const phase = deps.daemon.currentPhase;
  if (phase === 'stopped') {
    await deps.daemon.restart();
  }
  if (deps.daemon.currentPhase === 'starting') {
    void vscode.window.showInformationMessage('Checkpoint: the daemon is still starting; try again in a moment.');
    return;
  }
  const session = sessionIdFromArg(arg);
  deps.setBusy(true);
  let result: unknown;
  try {
    result = await deps.daemon.executeCommand(ServerCommands.now, session ? [session] : []);
  } finally {
    deps.setBusy(false);
  }
  deps.tree.refresh();
  const { text, ok } = formatNowResult(result);
  deps.log.info(text);
  if (ok) {
    void vscode.window.showInformationMessage(text);
  } else {
    const choice = await vscode.window.showWarningMessage(text, 'Show Log');
    if (choice === 'Show Log') {
      deps.log.show(true);
    }
  }
}

async function setItemState(deps: CommandDeps, arg: unknown, command: string): Promise<void> {
  const item = requireItem(arg);
  await deps.daemon.executeCommand(command, [item.id]);
  deps.tree.refresh();
}

async function goToCode(arg: unknown): Promise<void> {
  const item = requireItem(arg);
  if (!item.files.length) {
    throw new UserError('this item names no files');
  }
  let file = resolveItemFile(item.files[0], item.cwd);
  if (item.files.length > 1) {
    const picked = await vscode.window.showQuickPick(
      item.files.map((f) => ({ label: path.basename(f), description: resolveItemFile(f, item.cwd) })),
      { placeHolder: 'Which file?' },
    );
    if (!picked) {
      return;
    }
    file = picked.description;
  }
  const uri = vscode.Uri.file(file);
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    throw new UserError(`${file} no longer exists`);
  }
  // Where the daemon placed this item's diagnostic, if it did; else the top of the file.
  const diagnostic = vscode.languages
    .getDiagnostics(uri)
    .find((d) => d.source === 'checkpoint' && (d.code === item.id || (d.code as { value?: unknown })?.value === item.id));
  await vscode.window.showTextDocument(uri, diagnostic ? { selection: diagnostic.range } : {});
}

async function openTranscript(arg: unknown): Promise<void> {
  const item = requireItem(arg);
  const src = item.sources[0];
  if (!src) {
    throw new UserError('this item has no transcript source');
  }
  const uri = src.uri ? vscode.Uri.parse(src.uri) : vscode.Uri.file(src.path);
  const line = Math.max(0, src.line - 1);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0), preview: true });
}

async function copyItemMarkdown(arg: unknown): Promise<void> {
  const item = requireItem(arg);
  await vscode.env.clipboard.writeText(itemMarkdown(item));
  void vscode.window.showInformationMessage('Checkpoint: copied as Markdown.');
}

export async function exportDecisions(deps: CommandDeps): Promise<void> {
  const items = await deps.daemon.items({ scope: 'all' });
  const format = await vscode.window.showQuickPick(
    [
      { label: 'Markdown', description: 'one file: decisions, constraints and open questions', format: 'markdown' as ExportFormat },
      { label: 'ADR files', description: 'one Architecture Decision Record per decision', format: 'adr' as ExportFormat },
    ],
    { placeHolder: `Export ${items.length} items as` },
  );
  if (!format) {
    return;
  }
  const roots = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const folders = await vscode.window.showOpenDialog({
    canSelectFiles: false,
    canSelectFolders: true,
    canSelectMany: false,
    openLabel: 'Export Here',
    title: 'Export decisions into this folder',
    defaultUri: vscode.Uri.file(os.homedir()),
  });
  if (!folders?.length) {
    return;
  }
  const folder = folders[0];
  if (isInsideAny(folder.fsPath, roots)) {
    const ok = await vscode.window.showWarningMessage(
      `Write the export into the workspace at ${folder.fsPath}?`,
      { modal: true, detail: 'Nothing is written into your repository unless you say so.' },
      'Write Into Workspace',
    );
    if (ok !== 'Write Into Workspace') {
      return;
    }
  }
  const files = exportFiles(items, format.format, deps.now?.() ?? new Date());
  if (!files.length) {
    void vscode.window.showInformationMessage('Checkpoint: there are no decisions to export yet.');
    return;
  }
  const existing: string[] = [];
  for (const file of files) {
    try {
      await vscode.workspace.fs.stat(vscode.Uri.joinPath(folder, file.name));
      existing.push(file.name);
    } catch {
      // not there: nothing to overwrite
    }
  }
  if (existing.length) {
    const ok = await vscode.window.showWarningMessage(
      `Overwrite ${existing.length} existing file${existing.length === 1 ? '' : 's'} in ${folder.fsPath}?`,
      { modal: true, detail: existing.slice(0, 10).join('\n') },
      'Overwrite',
    );
    if (ok !== 'Overwrite') {
      return;
    }
  }
  for (const file of files) {
    await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(folder, file.name), new TextEncoder().encode(file.content));
  }
  deps.log.info(`Exported ${files.length} files to ${folder.fsPath}.`);
  const open = await vscode.window.showInformationMessage(
    `Checkpoint: exported ${files.length} file${files.length === 1 ? '' : 's'} to ${folder.fsPath}.`,
    'Open',
  );
  if (open === 'Open') {
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder, files[0].name));
  }
}

export async function setApiKey(deps: CommandDeps): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: 'Checkpoint: Anthropic API key',
    prompt: 'Stored in VS Code’s secret storage and given to the daemon as ANTHROPIC_API_KEY. Leave empty to remove it.',
    password: true,
    ignoreFocusOut: true,
    placeHolder: 'sk-ant-…',
  });
  if (key === undefined) {
    return;
  }
  if (key.trim() === '') {
    await deps.secrets.delete(API_KEY_SECRET);
    deps.log.info('The stored API key was removed.');
    void vscode.window.showInformationMessage('Checkpoint: stored API key removed; the daemon restarts without it.');
  } else {
    await deps.secrets.store(API_KEY_SECRET, key.trim());
    deps.log.info('An API key was stored in secret storage.');
    void vscode.window.showInformationMessage('Checkpoint: API key stored; the daemon restarts to use it.');
  }
  // The secret-storage change listener restarts the daemon.
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const reg = (id: string, title: string, fn: (...args: unknown[]) => Promise<unknown>): vscode.Disposable =>
    vscode.commands.registerCommand(id, guard(deps, title, fn));
  return [
    reg(Commands.checkpointNow, 'Checkpoint Now', (arg) => checkpointNow(deps, arg)),
    reg(Commands.showLog, 'Show Log', async () => deps.log.show(true)),
    reg(Commands.restartDaemon, 'Restart Daemon', () => deps.daemon.restart()),
    reg(Commands.refresh, 'Refresh', async () => deps.tree.refresh()),
    reg(Commands.exportDecisions, 'Export Decisions', () => exportDecisions(deps)),
    reg(Commands.setApiKey, 'Set API Key', () => setApiKey(deps)),
    reg(Commands.goToCode, 'Go to Code', (arg) => goToCode(arg)),
    reg(Commands.openTranscript, 'Open Transcript', (arg) => openTranscript(arg)),
    reg(Commands.acceptItem, 'Accept', (arg) => setItemState(deps, arg, ServerCommands.accept)),
    reg(Commands.dismissItem, 'Dismiss', (arg) => setItemState(deps, arg, ServerCommands.dismiss)),
    reg(Commands.copyItemMarkdown, 'Copy as Markdown', (arg) => copyItemMarkdown(arg)),
  ];
}
