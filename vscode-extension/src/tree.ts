/**
 * The side panel's TreeDataProvider: sessions (title, agent, time, captured/pending/failed), and
 * under each its items grouped by kind. Fed by `checkpoint/status` (the workspace's sessions and
 * counts), `checkpoint/sessions` (the sessions a status leaves out, scope "all": fetched when the
 * panel shows its list and again only when a status's `others_version` changed, never on every
 * status) and `checkpoint/items` (fetched per session when it is expanded, again when its captured
 * count changes). Items of other sessions on a supersession chain are looked up. A repository's Team
 * node lists the shared items of its workspace folder (fetched when it is expanded, again when the
 * status's item counts change).
 *
 * Which nodes there are and how each is shown is `treeNodes.ts` (plain data); this module fetches,
 * caches and turns a node's view into a `TreeItem`.
 */

import * as os from 'node:os';

import * as vscode from 'vscode';

import { ContextKeys, PANEL_EXPANSION_KEY } from './constants';
import { Expansion, type Memory } from './expansion';
import type { Item, SessionStatus, Status } from './protocol';
import { pathOfUri, type Place } from './rowText';
import type { ViewState } from './status';
import type { Collapsible, Node, Related } from './treeNodes';
import {
  MAX_CHAIN,
  chainChildren,
  groupChildren,
  leavesSessionsOut,
  linkedIds,
  nodeView,
  repositoryChildren,
  rootNodes,
  sessionChildren,
  teamChildren,
} from './treeNodes';

const COLLAPSIBLE: Record<Collapsible, vscode.TreeItemCollapsibleState> = {
  none: vscode.TreeItemCollapsibleState.None,
  collapsed: vscode.TreeItemCollapsibleState.Collapsed,
  expanded: vscode.TreeItemCollapsibleState.Expanded,
};

/** What the rows' paths are shown relative to: the status's workspace folders and the home folder. */
export function placeOf(status: Status | undefined, home = os.homedir()): Place {
  return { roots: (status?.workspace_folders ?? []).map(pathOfUri), home };
}

/** A node's row as VS Code's TreeItem: what its view leaves out stays unset; open or closed as the user left it. */
export function toTreeItem(node: Node, now: Date = new Date(), place?: Place, expansion?: Expansion): vscode.TreeItem {
  const view = nodeView(node, now, place);
  const collapsible = expansion ? expansion.apply(view.id, view.collapsible) : view.collapsible;
  const t = new vscode.TreeItem(view.label, COLLAPSIBLE[collapsible]);
  t.id = view.id;
  if (view.description !== undefined) {
    t.description = view.description;
  }
  if (view.tooltip !== undefined) {
    t.tooltip = view.tooltip;
  }
  t.iconPath = view.icon.color
    ? new vscode.ThemeIcon(view.icon.id, new vscode.ThemeColor(view.icon.color))
    : new vscode.ThemeIcon(view.icon.id);
  t.contextValue = view.contextValue;
  if (view.command) {
    t.command = view.command;
  }
  return t;
}

export type ItemsFetcher = (sessionId: string) => Promise<Item[]>;
/** The items of a repository's team session's workspace folder, of which the Team node lists the shared. */
export type TeamItemsFetcher = (team: SessionStatus) => Promise<Item[]>;
/** Every session in scope (`checkpoint/sessions`). */
export type SessionsFetcher = () => Promise<SessionStatus[]>;
/** The items with these ids, wherever they are (a chain can lead into another session). */
export type ItemsLookup = (ids: string[]) => Promise<Item[]>;

/**
 * The soonest the full session list is asked for again after a session outside the workspace
 * changed: one that keeps growing (an agent at work in another project) would otherwise cost the
 * whole list on every status. Meanwhile the panel shows the last list with the workspace's sessions
 * up to date; Refresh asks at once.
 */
export const SESSIONS_REFETCH_MS = 10_000;

/** How long a session's items may take before the panel says so instead of staying empty. */
export const ITEMS_TIMEOUT_MS = 20_000;

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000}s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** A `checkpoint/sessions` answer: the status `others_version` it was asked for at, and when. */
interface SessionList {
  version: string;
  at: number;
  sessions: Promise<SessionStatus[] | Error>;
}

/** The TreeDataProvider: a view of the latest {@link ViewState}, items fetched per session. */
export class CheckpointTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  private state: ViewState = { phase: 'starting' };
  private readonly cache = new Map<string, { key: string; items: Promise<Item[] | Error>; related: Promise<Related> }>();
  /** The last `checkpoint/sessions` answer, and the status `others_version` it was asked for at. */
  private sessionList: SessionList | undefined;
  private sessionTimer: ReturnType<typeof setTimeout> | undefined;

  private readonly expansion: Expansion;

  constructor(
    private readonly fetchItems: ItemsFetcher,
    private readonly lookupItems?: ItemsLookup,
    private readonly fetchSessions?: SessionsFetcher,
    private readonly fetchTeamItems?: TeamItemsFetcher,
    memory?: Memory,
  ) {
    this.expansion = new Expansion(memory, PANEL_EXPANSION_KEY);
  }

  /** The user opened or closed a row (the TreeView's onDidExpandElement / onDidCollapseElement). */
  expanded(node: Node, open: boolean): void {
    this.expansion.record(nodeView(node).id, open);
  }

  /**
   * A new daemon state or status: redraw, refetching items of sessions whose counts changed (and
   * the full session list when the sessions the status leaves out changed, once it is shown).
   */
  setState(state: ViewState): void {
    this.state = state;
    if (state.phase !== 'running') {
      this.cache.clear();
      this.sessionList = undefined;
    }
    this.changed.fire();
  }

  /** Forget every fetched list and redraw (Refresh, accept, dismiss). */
  refresh(): void {
    this.cache.clear();
    this.sessionList = undefined;
    this.changed.fire();
  }

  getTreeItem(node: Node): vscode.TreeItem {
    return toTreeItem(node, new Date(), placeOf(this.state.status), this.expansion);
  }

  getParent(): undefined {
    return undefined;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      const status = this.state.status;
      const nodes =
        this.state.phase === 'running' && status && this.fetchSessions && leavesSessionsOut(status)
          ? rootNodes(this.state, await this.sessionsFor(status))
          : rootNodes(this.state);
      // Nothing to list: the welcome view (package.json viewsWelcome) says why and what to do.
      const empty = nodes.length === 1 && nodes[0].type === 'message' && nodes[0].id === 'msg:empty' ? (status?.scope ?? '') : '';
      void vscode.commands.executeCommand('setContext', ContextKeys.empty, empty);
      return empty ? [] : nodes;
    }
    if (node.type === 'session') {
      const { items, related } = this.itemsOf(node.session);
      return sessionChildren(node.session, await items, await related);
    }
    if (node.type === 'team') {
      const { items, related } = this.teamItemsOf(node.session);
      return teamChildren(node, await items, await related);
    }
    if (node.type === 'group') {
      return groupChildren(node);
    }
    if (node.type === 'repository') {
      return repositoryChildren(node);
    }
    if (node.type === 'item') {
      return chainChildren(node);
    }
    return [];
  }

  /** The full list, asked for again only when the status says a session it leaves out changed. */
  private sessionsFor(status: Status): Promise<SessionStatus[] | Error> {
    const last = this.sessionList;
    if (last?.version === status.others_version) {
      return last.sessions;
    }
    const wait = last ? last.at + SESSIONS_REFETCH_MS - Date.now() : 0;
    if (last && wait > 0) {
      // Redrawn (and so asked again) once the wait is over, unless a refresh comes first.
      this.sessionTimer ??= setTimeout(() => {
        this.sessionTimer = undefined;
        this.changed.fire();
      }, wait);
      return last.sessions;
    }
    const fetch = this.fetchSessions as SessionsFetcher;
    const entry: SessionList = {
      version: status.others_version,
      at: Date.now(),
      sessions: Promise.resolve([]),
    };
    entry.sessions = withTimeout(fetch(), ITEMS_TIMEOUT_MS, 'the daemon').catch((err: unknown) => {
      // Shown above the sessions; not kept, so the next redraw or refresh asks again.
      if (this.sessionList === entry) {
        this.sessionList = undefined;
      }
      return err instanceof Error ? err : new Error(String(err));
    });
    this.sessionList = entry;
    return entry.sessions;
  }

  private itemsOf(session: SessionStatus): { items: Promise<Item[] | Error>; related: Promise<Related> } {
    return this.cached(session.id, `${session.captured}/${session.turns}`, () => this.fetchItems(session.id));
  }

  /** A team session counts no turns: its items are fetched again when the status's item counts change. */
  private teamItemsOf(team: SessionStatus): { items: Promise<Item[] | Error>; related: Promise<Related> } {
    const key = JSON.stringify(this.state.status?.items ?? null);
    const fetch = this.fetchTeamItems;
    return this.cached(`team:${team.id}`, key, () => (fetch ? fetch(team) : this.fetchItems(team.id)));
  }

  private cached(
    id: string,
    key: string,
    fetch: () => Promise<Item[]>,
  ): { items: Promise<Item[] | Error>; related: Promise<Related> } {
    const hit = this.cache.get(id);
    if (hit && hit.key === key) {
      return hit;
    }
    const items = withTimeout(fetch(), ITEMS_TIMEOUT_MS, 'the daemon').catch((err: unknown) => {
      // Shown under the session; not kept, so the next expand or refresh asks again.
      this.cache.delete(id);
      return err instanceof Error ? err : new Error(String(err));
    });
    const related = items.then((listed) => this.relatedTo(listed));
    const entry = { key, items, related };
    this.cache.set(id, entry);
    return entry;
  }

  /** The items listed, and the ones their chains lead to, followed to the chain's ends. */
  private async relatedTo(listed: Item[] | Error): Promise<Related> {
    const known = new Map<string, Item>();
    if (listed instanceof Error) {
      return known;
    }
    for (const item of listed) {
      known.set(item.id, item);
    }
    const asked = new Set<string>();
    for (let round = 0; round < MAX_CHAIN && this.lookupItems; round++) {
      const missing = [...known.values()].flatMap(linkedIds).filter((id) => !known.has(id) && !asked.has(id));
      if (!missing.length) {
        break;
      }
      missing.forEach((id) => asked.add(id));
      try {
        for (const item of await withTimeout(this.lookupItems([...new Set(missing)]), ITEMS_TIMEOUT_MS, 'the daemon')) {
          known.set(item.id, item);
        }
      } catch {
        break; // the chain shows what is known; a superseded item still names its newer item's id
      }
    }
    return known;
  }

  dispose(): void {
    clearTimeout(this.sessionTimer);
    this.changed.dispose();
  }
}
