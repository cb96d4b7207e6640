/** What a command was invoked on: nothing (palette, status bar), a panel node, or an id. Pure. */

import type { Item } from '../protocol';
import type { Node } from '../treeNodes';
import { UserError, type Daemon } from './guard';

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

/** The item, or a {@link UserError} that says to pick one. */
export function requireItem(arg: unknown): Item {
  const item = itemFromArg(arg);
  if (!item) {
    throw new UserError('pick an item in the Checkpoint panel first');
  }
  return item;
}

/**
 * The item a command acts on, from the panel (a node or an item) or from a link (the daemon's hover
 * cards and Problems codes pass [item_id]): an id is looked up with the daemon.
 */
export async function resolveItem(daemon: Pick<Daemon, 'turn'>, arg: unknown): Promise<Item> {
  const id = Array.isArray(arg) ? arg[0] : arg;
  if (typeof id === 'string' && id.trim()) {
    return (await daemon.turn(id.trim())).item;
  }
  return requireItem(arg);
}
