/**
 * Share with the Team: the daemon's checkpoint.share writes the item's decision record into its
 * repository (not committed). The notification names the file and opens it; a refusal (a secret found,
 * no repository) comes back as the daemon's message and reaches the user through the command's guard.
 */

import * as vscode from 'vscode';

import { ServerCommands } from '../constants';
import type { ShareResult } from '../protocol';
import { requireItem } from './args';
import type { CommandDeps } from './guard';

export async function shareWithTeam(deps: CommandDeps, arg: unknown): Promise<void> {
  const item = requireItem(arg);
  const result = (await deps.daemon.executeCommand(ServerCommands.share, [item.id])) as ShareResult;
  deps.tree.refresh();
  const open = 'Open Record';
  const verb = result.created ? 'Wrote' : 'Updated';
  const choice = await vscode.window.showInformationMessage(
    `${verb} ${result.record ?? result.path}: commit and push it to share the decision with your team.`,
    open,
  );
  if (choice === open) {
    await vscode.window.showTextDocument(vscode.Uri.file(result.path));
  }
}
