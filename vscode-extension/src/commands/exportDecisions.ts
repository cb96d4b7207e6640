/**
 * Export Decisions: every item, as one Markdown file or one ADR per decision, into a folder the user
 * picks. Nothing is written into the workspace, nor over an existing file, without asking.
 */

import * as os from 'node:os';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { exportFiles, type ExportFormat } from '../export';
import { shownPath } from '../rowText';
import type { CommandDeps } from './guard';
import { info } from '../toast';

/** Whether `folder` is one of `roots` or inside one. */
export function isInsideAny(folder: string, roots: readonly string[]): boolean {
  const f = path.resolve(folder);
  return roots.some((root) => {
    const r = path.resolve(root);
    const rel = path.relative(r, f);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });
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
    // The workspace folder first (the confirmation below still asks before writing into it); else home.
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(os.homedir()),
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
    void info('Checkpoint: there are no decisions to export yet.');
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
  const where = shownPath(folder.fsPath, { roots, home: os.homedir() });
  const open = await info(
    `Checkpoint: exported ${files.length} file${files.length === 1 ? '' : 's'} to ${where}.`,
    'Open',
  );
  if (open === 'Open') {
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder, files[0].name));
  }
}
