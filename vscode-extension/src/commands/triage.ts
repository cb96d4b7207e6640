/**
 * Accept and Dismiss: the daemon's checkpoint.accept / checkpoint.dismiss on the item picked (in the
 * panel, or by id from a hover card's link). Accepting an item held for review releases it to agents,
 * so it is an explicit act: a modal shows the exact line an agent will be given and asks first.
 * Either can be undone (checkpoint.reopen puts the item back to new).
 */

import * as vscode from 'vscode';

import { KIND_TITLE, ServerCommands } from '../constants';
import type { Item } from '../protocol';
import { isHeld } from '../treeNodes';
import { resolveItem } from './args';
import type { CommandDeps } from './guard';
import { info } from '../toast';

/** How an agent is shown an accepted item (agent/render.py item_line), for the confirmation. Pure. */
export function agentLine(item: Item): string {
  const said = item.sources.find((s) => s.timestamp)?.timestamp?.slice(0, 10);
  const when = said ? `said ${said}` : `recorded ${new Date(item.created_at * 1000).toISOString().slice(0, 10)}`;
  const agent = (item.agent ?? "an agent's").replace(/[^A-Za-z0-9\-_']/g, '');
  const statement = item.statement.split(/\s+/).join(' ').trim();
  const kind = item.kind.charAt(0).toUpperCase() + item.kind.slice(1);
  return `- ${kind} ${item.id}, ${when} in a ${agent} session (${item.session_id.slice(0, 8)}), accepted by the developer: ${JSON.stringify(statement)}`;
}

/** The modal's words for accepting a held item. Pure. */
export function heldConfirmation(item: Item): { message: string; detail: string } {
  return {
    message: `Accept this held ${(KIND_TITLE[item.kind] ?? item.kind).toLowerCase()}? Agents will be shown it.`,
    detail:
      'It was held because it reads as an instruction to an agent. Once accepted, agents working in this ' +
      `workspace receive this line:\n\n${agentLine(item)}`,
  };
}

function short(text: string, width = 60): string {
  const one = text.split(/\s+/).join(' ');
  return one.length <= width ? one : `${one.slice(0, width - 1)}…`;
}

async function setItemState(deps: CommandDeps, arg: unknown, verb: 'Accepted' | 'Dismissed'): Promise<void> {
  const item = await resolveItem(deps.daemon, arg);
  // Held and not accepted by you: a teammate's record may say "accepted", which releases nothing.
  if (verb === 'Accepted' && isHeld(item)) {
    const { message, detail } = heldConfirmation(item);
    const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Accept');
    if (choice !== 'Accept') {
      return;
    }
  }
  const command = verb === 'Accepted' ? ServerCommands.accept : ServerCommands.dismiss;
  await deps.daemon.executeCommand(command, [item.id]);
  deps.tree.refresh();
  const previous = item.state;
  void info(`Checkpoint: ${verb.toLowerCase()} “${short(item.statement)}”.`, 'Undo').then(
    async (choice) => {
      if (choice !== 'Undo') {
        return;
      }
      const back = previous === 'accepted' ? ServerCommands.accept : previous === 'dismissed' ? ServerCommands.dismiss : ServerCommands.reopen;
      await deps.daemon.executeCommand(back, [item.id]);
      deps.tree.refresh();
    },
  );
}

export const acceptItem = (deps: CommandDeps, arg: unknown): Promise<void> => setItemState(deps, arg, 'Accepted');
export const dismissItem = (deps: CommandDeps, arg: unknown): Promise<void> => setItemState(deps, arg, 'Dismissed');
