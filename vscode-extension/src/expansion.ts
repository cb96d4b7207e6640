/**
 * Which panel rows the user opened or closed, kept in the workspace's state so that a reload of the
 * window shows them as they were: VS Code keeps a custom tree's expansion across refreshes (by the
 * rows' ids, which stay the same) but not across a reload. Rows are named by their ids; the newest
 * {@link MAX_REMEMBERED} are kept.
 */

/** What VS Code's `workspaceState` offers (a fake in tests). */
export interface Memory {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

/** Rows remembered, open or closed: enough for every session a user opens in a long while. */
export const MAX_REMEMBERED = 500;

type Collapsible = 'none' | 'collapsed' | 'expanded';

export class Expansion {
  /** Row id -> open; in the order they were last toggled (oldest first). */
  private readonly rows: Map<string, boolean>;

  constructor(
    private readonly memory: Memory | undefined,
    private readonly key: string,
  ) {
    const saved = memory?.get<[string, boolean][]>(key);
    this.rows = new Map(Array.isArray(saved) ? saved.filter((e) => Array.isArray(e) && typeof e[0] === 'string') : []);
  }

  /** The user opened (or closed) the row with this id. */
  record(id: string, open: boolean): void {
    this.rows.delete(id);
    this.rows.set(id, open);
    while (this.rows.size > MAX_REMEMBERED) {
      this.rows.delete(this.rows.keys().next().value as string);
    }
    void this.memory?.update(this.key, [...this.rows.entries()]);
  }

  /** How a row starts: as the user left it, else as the panel shows it by default. */
  apply(id: string, collapsible: Collapsible): Collapsible {
    if (collapsible === 'none') {
      return collapsible;
    }
    const open = this.rows.get(id);
    return open === undefined ? collapsible : open ? 'expanded' : 'collapsed';
  }
}
