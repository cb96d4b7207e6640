/** Accept and Dismiss: the daemon's checkpoint.accept / checkpoint.dismiss on the item picked. */

import { ServerCommands } from '../constants';
import { requireItem } from './args';
import type { CommandDeps } from './guard';

async function setItemState(deps: CommandDeps, arg: unknown, command: string): Promise<void> {
  const item = requireItem(arg);
  await deps.daemon.executeCommand(command, [item.id]);
  deps.tree.refresh();
}

export const acceptItem = (deps: CommandDeps, arg: unknown): Promise<void> => setItemState(deps, arg, ServerCommands.accept);
export const dismissItem = (deps: CommandDeps, arg: unknown): Promise<void> => setItemState(deps, arg, ServerCommands.dismiss);
