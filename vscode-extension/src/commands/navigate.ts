/** From an item to where it lives: its code, its transcript turn, or the clipboard as Markdown. */

import * as os from 'node:os';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { DIAGNOSTIC_SOURCE } from '../constants';
import { itemMarkdown } from '../export';
import { requireItem } from './args';
import { UserError } from './guard';
import { info } from '../toast';

/** An item's file as an absolute path: as given, or relative to the session's folder. */
export function resolveItemFile(file: string, cwd: string | null): string {
  if (path.isAbsolute(file)) {
    return file;
  }
  return path.resolve(cwd ?? os.homedir(), file);
}

/** Whether `file` is inside one of the open workspace folders (a window with none has nothing to leave). */
export function insideWorkspace(file: string): boolean {
  const folders = vscode.workspace.workspaceFolders;
  if (!folders?.length) {
    return true;
  }
  return folders.some((f) => {
    const rel = path.relative(f.uri.fsPath, file);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });
}

export async function goToCode(arg: unknown): Promise<void> {
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
  // A transcript names what the agent touched, anywhere on the disk: a file outside the open
  // folders is opened only when the user says so.
  if (!insideWorkspace(file)) {
    const open = await vscode.window.showWarningMessage(
      `${file} is outside the workspace folders. Open it?`,
      { modal: true },
      'Open',
    );
    if (open !== 'Open') {
      return;
    }
  }
  // Where the daemon placed this item's diagnostic, if it did; else the top of the file.
  const diagnostic = vscode.languages
    .getDiagnostics(uri)
    // The item is named in the diagnostic's data (its code is the kind); the language client keeps it.
    .find((d) => d.source === DIAGNOSTIC_SOURCE && (d as { data?: { item_id?: unknown } }).data?.item_id === item.id);
  await vscode.window.showTextDocument(uri, diagnostic ? { selection: diagnostic.range } : {});
}

export async function openTranscript(arg: unknown): Promise<void> {
  const item = requireItem(arg);
  const src = item.sources[0];
  if (!src) {
    throw new UserError('this item has no transcript source');
  }
  const uri = src.uri ? vscode.Uri.parse(src.uri) : vscode.Uri.file(src.path);
  const line = Math.max(0, src.line - 1);
  await vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0), preview: true });
}

/** Where clicking an item leads: its code (first file) when it names one, else its transcript turn. */
export async function openItem(arg: unknown): Promise<void> {
  const item = requireItem(arg);
  if (item.files.length) {
    await goToCode(item);
  } else if (item.sources.length) {
    await openTranscript(item);
  } else {
    throw new UserError('this item names no file and has no transcript source');
  }
}

export async function copyItemMarkdown(arg: unknown): Promise<void> {
  const item = requireItem(arg);
  await vscode.env.clipboard.writeText(itemMarkdown(item));
  void info('Checkpoint: copied as Markdown.');
}
