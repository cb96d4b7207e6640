/**
 * Share with the Team: the daemon's checkpoint.share writes the item's decision record into its
 * repository (not committed). The notification names the file and opens it; a refusal (a secret found,
 * no repository) comes back as the daemon's message and reaches the user through the command's guard.
 */

import * as path from 'node:path';

import * as vscode from 'vscode';

import { ServerCommands } from '../constants';
import type { ShareResult } from '../protocol';
import { requireItem } from './args';
import type { CommandDeps } from './guard';
import { info } from '../toast';

export async function shareWithTeam(deps: CommandDeps, arg: unknown): Promise<void> {
  const item = requireItem(arg);
  const result = (await deps.daemon.executeCommand(ServerCommands.share, [item.id])) as ShareResult;
  deps.tree.refresh();
  const open = 'Open Record';
  const verb = result.created ? 'Wrote' : 'Updated';
  const choice = await info(
    `Checkpoint: ${verb.toLowerCase()} ${path.basename(result.record ?? result.path)}: commit and push it to share it with your team.`,
    open,
  );
  if (choice === open) {
    await vscode.window.showTextDocument(vscode.Uri.file(result.path));
  }
}
