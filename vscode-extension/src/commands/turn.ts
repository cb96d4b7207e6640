/** Open Turn (the item's turn as it was said, turnView.ts) and Open Decision Record (a team item's file). */

import * as path from 'node:path';

import * as vscode from 'vscode';

import { showTurn } from '../turnView';
import { resolveItem } from './args';
import { UserError, type CommandDeps } from './guard';

export async function openTurn(deps: CommandDeps, arg: unknown): Promise<void> {
  const item = await resolveItem(deps.daemon, arg);
  await showTurn(item.id, (id) => deps.daemon.turn(id));
}

export async function openRecord(deps: CommandDeps, arg: unknown): Promise<void> {
  const item = await resolveItem(deps.daemon, arg);
  if (!item.record) {
    throw new UserError('this item has no decision record: share it with the team first');
  }
  const folder = item.workspace ? vscode.Uri.parse(item.workspace) : vscode.workspace.workspaceFolders?.[0]?.uri;
  if (!folder) {
    throw new UserError('open the repository that holds the decision record');
  }
  // The record's path is relative to the repository's top folder, which holds the workspace folder.
  for (let dir = folder.fsPath; ; dir = path.dirname(dir)) {
    const candidate = vscode.Uri.file(path.join(dir, item.record));
    try {
      await vscode.workspace.fs.stat(candidate);
      await vscode.window.showTextDocument(candidate, { preview: true });
      return;
    } catch {
      if (path.dirname(dir) === dir) {
        throw new UserError(`the decision record ${item.record} is not in this repository`);
      }
    }
  }
}
