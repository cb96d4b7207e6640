/**
 * Mark as Superseded by… and Remove Supersession: the daemon's checkpoint.supersede, made by hand.
 * The old item is kept, marked; a notification offers Undo. A refusal (a loop, an unknown id) comes
 * back as the daemon's message and reaches the user through the command's guard.
 */

import * as vscode from 'vscode';

import { KIND_TITLE, ServerCommands } from '../constants';
import type { Item, SupersedeArgs, SupersedeResult } from '../protocol';
import { oneLine } from '../treeNodes';
import { itemFromArg, requireItem } from './args';
import { UserError, type CommandDeps } from './guard';
import { whereSaid } from './search';
import { info } from '../toast';

type ItemPick = vscode.QuickPickItem & { item: Item };

function itemPick(item: Item): ItemPick {
  const description = [KIND_TITLE[item.kind] ?? item.kind];
  if (item.superseded_by) {
    description.push('superseded');
  }
  return { label: oneLine(item.statement), description: description.join(' · '), detail: whereSaid(item), item };
}

/** The workspace's items, newest first, for the user to pick one (undefined: the pick was closed). */
async function pickItem(deps: CommandDeps, placeHolder: string, leaveOut?: Item): Promise<Item | undefined> {
  const items = (await deps.daemon.items({}))
    .filter((i) => i.id !== leaveOut?.id)
    .sort((a, b) => b.created_at - a.created_at);
  if (!items.length) {
    throw new UserError(leaveOut ? 'there is no other item to choose' : 'there are no items yet');
  }
  const picked = await vscode.window.showQuickPick(items.map(itemPick), {
    placeHolder,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return picked?.item;
}

async function supersede(deps: CommandDeps, args: SupersedeArgs): Promise<SupersedeResult> {
  const result = (await deps.daemon.executeCommand(ServerCommands.supersede, [args])) as SupersedeResult;
  deps.tree.refresh();
  return result;
}

// Two of them fit a two-line notification.
const quoted = (item: Item): string => `“${oneLine(item.statement, 34)}”`;

/** `old` superseded by an item the user picks; Undo on the notification takes the link back. */
export async function markSuperseded(deps: CommandDeps, arg?: unknown): Promise<void> {
  const old = itemFromArg(arg) ?? (await pickItem(deps, 'Which item is no longer true (the older one)?'));
  if (!old) {
    return;
  }
  const newer = await pickItem(deps, `Superseded by which item? (${oneLine(old.statement, 60)})`, old);
  if (!newer) {
    return;
  }
  const result = await supersede(deps, { old: old.id, new: newer.id });
  if (!result.changed) {
    void info(`Checkpoint: ${quoted(old)} was already superseded by ${quoted(newer)}.`);
    return;
  }
  deps.log.info(`Item ${old.id} superseded by ${newer.id}.`);
  const choice = await info(
    `Checkpoint: ${quoted(old)} is now superseded by ${quoted(newer)}.`,
    'Undo',
  );
  if (choice === 'Undo') {
    await supersede(deps, { old: old.id, new: newer.id, undo: true });
    deps.log.info(`Item ${old.id} no longer superseded by ${newer.id}.`);
    void info(`Checkpoint: ${quoted(old)} is current again.`);
  }
}

/** Every link from a superseded item removed: it is current again. */
export async function removeSupersession(deps: CommandDeps, arg: unknown): Promise<void> {
  const item = requireItem(arg);
  if (!item.superseded_by) {
    throw new UserError('this item is not superseded');
  }
  const result = await supersede(deps, { old: item.id, undo: true });
  deps.log.info(`Item ${item.id}: ${result.removed} supersession link(s) removed.`);
  void info(
    result.changed
      ? `Checkpoint: ${quoted(item)} is current again.`
      : `Checkpoint: ${quoted(item)} was not superseded (nothing to remove).`,
  );
}
