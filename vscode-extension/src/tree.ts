/**
 * The side panel: sessions (title, agent, time, captured/pending/failed), and under each its items
 * grouped by kind. Fed by `checkpoint/status` (the workspace's sessions and counts), `checkpoint/sessions`
 * (the sessions a status leaves out, scope "all": fetched when the panel shows its list and again
 * only when a status's `others_version` changed, never on every status) and `checkpoint/items`
 * (fetched per session when it is expanded, again when its captured count changes).
 *
 * Supersession chains: a superseded item is dimmed, with a distinct icon and "superseded by …" in
 * its description, and expands to the item that replaced it (and that one to its own replacement);
 * an item that replaced others expands to them. Items of other sessions on a chain are looked up.
 *
 * Every label, description and tooltip is a plain string: transcript text is shown as text, never
 * rendered as Markdown or HTML.
 */

import * as path from 'node:path';

import * as vscode from 'vscode';

import { Commands, ContextValues, KIND_LABELS, KIND_TITLE, SettingIds } from './constants';
import type { Item, ItemKind, SessionStatus, Status } from './protocol';
import { ITEM_KINDS } from './protocol';
import type { ViewState } from './status';

export type Node =
  | { type: 'message'; id: string; label: string; detail?: string; icon: string; command?: string }
  | { type: 'session'; session: SessionStatus }
  | { type: 'cause'; sessionId: string; text: string; index: number }
  | { type: 'group'; sessionId: string; kind: ItemKind; items: Item[]; related?: Related }
  | { type: 'item'; item: Item; related?: Related; chain?: ChainStep };

/** Items by id, for following supersession links to items listed elsewhere (or not at all). */
export type Related = ReadonlyMap<string, Item>;

/** How an item node was reached along a chain: its parent node's id, and which way it points. */
export interface ChainStep {
  parentId: string;
  /** 'newer': the item that replaced the parent; 'older': one the parent replaced. */
  direction: 'newer' | 'older';
}

/** How deep chains are followed in the panel (a chain never loops; this bounds a long one). */
const MAX_CHAIN = 20;

const KIND_ICONS: Record<ItemKind, string> = { decision: 'milestone', constraint: 'lock', question: 'question' };

const MAX_LABEL = 160;

/** One line of at most `max` characters: transcript text can hold newlines and very long runs. */
export function oneLine(text: string, max = MAX_LABEL): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** "just now", "5 min ago", "3 h ago", "2 d ago", else the date. */
export function relativeTime(timestamp: string | number | null | undefined, now: Date = new Date()): string {
  if (timestamp === null || timestamp === undefined || timestamp === '') {
    return 'no time';
  }
  const when = typeof timestamp === 'number' ? new Date(timestamp * 1000) : new Date(timestamp);
  if (Number.isNaN(when.getTime())) {
    return String(timestamp);
  }
  const seconds = Math.round((now.getTime() - when.getTime()) / 1000);
  if (seconds < 60) {
    return 'just now';
  }
  if (seconds < 3600) {
    return `${Math.floor(seconds / 60)} min ago`;
  }
  if (seconds < 86400) {
    return `${Math.floor(seconds / 3600)} h ago`;
  }
  if (seconds < 30 * 86400) {
    return `${Math.floor(seconds / 86400)} d ago`;
  }
  return when.toISOString().slice(0, 10);
}

export function sessionLabel(session: Pick<SessionStatus, 'title' | 'cwd' | 'id'>): string {
  if (session.title && session.title.trim()) {
    return oneLine(session.title, 40);
  }
  if (session.cwd) {
    return path.basename(session.cwd) || session.cwd;
  }
  return session.id.slice(0, 12);
}

/** Whether a status leaves sessions out, which the panel then asks `checkpoint/sessions` for. */
export function leavesSessionsOut(status: Status): boolean {
  return status.sessions_total > status.sessions.length;
}

/**
 * The sessions to list: the status's own (the freshest counts) and, of the fetched full list, the
 * ones the status does not hold.
 */
export function mergeSessions(status: Status, listed: readonly SessionStatus[]): SessionStatus[] {
  const own = new Set(status.sessions.map((s) => s.id));
  return [...status.sessions, ...listed.filter((s) => !own.has(s.id))];
}

/**
 * The panel's top level for a state: explanations when there is nothing to list, else sessions.
 * `listed` is the `checkpoint/sessions` answer when the status leaves sessions out (or why it failed).
 */
export function rootNodes(state: ViewState, listed?: readonly SessionStatus[] | Error): Node[] {
  if (state.phase === 'failed') {
    return [
      {
        type: 'message',
        id: 'msg:failed',
        label: 'The Checkpoint daemon is not running.',
        detail: state.error ?? 'unknown cause',
        icon: 'error',
        command: Commands.showLog,
      },
      { type: 'message', id: 'msg:log', label: 'Show the log', icon: 'output', command: Commands.showLog },
      { type: 'message', id: 'msg:restart', label: 'Restart the daemon', icon: 'debug-restart', command: Commands.restartDaemon },
    ];
  }
  if (state.phase === 'stopped') {
    return [
      { type: 'message', id: 'msg:stopped', label: 'The Checkpoint daemon is stopped.', icon: 'circle-slash' },
      { type: 'message', id: 'msg:restart', label: 'Start the daemon', icon: 'debug-start', command: Commands.restartDaemon },
    ];
  }
  if (state.phase === 'starting') {
    return [{ type: 'message', id: 'msg:starting', label: 'Starting the Checkpoint daemon…', icon: 'loading~spin' }];
  }
  const status = state.status;
  if (!status) {
    return [{ type: 'message', id: 'msg:waiting', label: 'Waiting for the daemon’s first status…', icon: 'loading~spin' }];
  }
  const nodes: Node[] = [];
  if (status.last_error) {
    nodes.push({
      type: 'message',
      id: 'msg:last-error',
      label: `Last error: ${oneLine(status.last_error)}`,
      icon: 'warning',
      command: Commands.showLog,
    });
  }
  let all: SessionStatus[] = status.sessions;
  if (listed instanceof Error) {
    nodes.push({
      type: 'message',
      id: 'msg:sessions-error',
      label: `Could not load the sessions outside this workspace: ${oneLine(listed.message)}`,
      icon: 'error',
      command: Commands.showLog,
    });
  } else if (listed) {
    all = mergeSessions(status, listed);
  }
  if (all.length === 0) {
    const inWorkspace = status.scope === 'workspace';
    nodes.push({
      type: 'message',
      id: 'msg:empty',
      label: inWorkspace ? 'No agent sessions for this workspace yet.' : 'No agent sessions found yet.',
      detail: inWorkspace
        ? `Sessions whose folder is outside this workspace are hidden (setting ${SettingIds.scope}).`
        : `Transcripts are read from ~/.claude/projects and ~/.codex/sessions (setting ${SettingIds.sources}).`,
      icon: 'info',
    });
    return nodes;
  }
  const sessions = [...all].sort((a, b) => (b.last_ts ?? '').localeCompare(a.last_ts ?? ''));
  for (const session of sessions) {
    nodes.push({ type: 'session', session });
  }
  return nodes;
}

/** Under a session: why it is stuck (if it is), then its items grouped by kind. */
export function sessionChildren(session: SessionStatus, items: Item[] | Error, related?: Related): Node[] {
  const nodes: Node[] = (session.causes ?? []).map((text, index) => ({
    type: 'cause' as const,
    sessionId: session.id,
    text,
    index,
  }));
  if (items instanceof Error) {
    nodes.push({
      type: 'message',
      id: `msg:items-error:${session.id}`,
      label: `Could not load items: ${oneLine(items.message)}`,
      icon: 'error',
      command: Commands.showLog,
    });
    return nodes;
  }
  const own = items.filter((i) => i.session_id === session.id && i.state !== 'dismissed');
  for (const kind of ITEM_KINDS) {
    const ofKind = own.filter((i) => i.kind === kind);
    if (ofKind.length) {
      nodes.push({ type: 'group', sessionId: session.id, kind, items: ofKind, related });
    }
  }
  if (own.length === 0) {
    let label: string;
    if (session.turns > 0 && session.captured === 0) {
      label = `Nothing captured yet: ${session.pending} turns pending.`;
    } else if (session.pending > 0) {
      label = `No items yet; ${session.pending} turns still pending.`;
    } else {
      label = 'No decisions, constraints or open questions in this session.';
    }
    nodes.push({ type: 'message', id: `msg:no-items:${session.id}`, label, icon: 'info' });
  }
  return nodes;
}

export function groupChildren(group: Extract<Node, { type: 'group' }>): Node[] {
  return group.items.map((item) => ({ type: 'item' as const, item, related: group.related }));
}

/** The ids an item's links name: the item that replaced it and the ones it replaced. */
export function linkedIds(item: Item): string[] {
  return [...(item.superseded_by ? [item.superseded_by] : []), ...(item.supersedes ?? [])];
}

type ItemNode = Extract<Node, { type: 'item' }>;

function itemNodeId(node: ItemNode): string {
  return node.chain ? `${node.chain.parentId}>${node.chain.direction}:${node.item.id}` : `item:${node.item.id}`;
}

function chainDepth(node: ItemNode): number {
  return node.chain ? node.chain.parentId.split('>').length : 0;
}

/**
 * Along the chain from an item: the item that replaced it and those it replaced (only onward, in
 * the direction the node was reached, so expanding never walks back and forth). Links to items the
 * panel could not look up are left out; the description still names the id.
 */
export function chainChildren(node: ItemNode): Node[] {
  if (chainDepth(node) >= MAX_CHAIN) {
    return [];
  }
  const parentId = itemNodeId(node);
  const children: Node[] = [];
  const newer = node.item.superseded_by ? node.related?.get(node.item.superseded_by) : undefined;
  if (newer && node.chain?.direction !== 'older') {
    children.push({ type: 'item', item: newer, related: node.related, chain: { parentId, direction: 'newer' } });
  }
  if (node.chain?.direction !== 'newer') {
    for (const id of node.item.supersedes ?? []) {
      const older = node.related?.get(id);
      if (older) {
        children.push({ type: 'item', item: older, related: node.related, chain: { parentId, direction: 'older' } });
      }
    }
  }
  return children;
}

function sessionDescription(s: SessionStatus, now: Date): string {
  const parts = [s.agent, relativeTime(s.last_ts, now), `${s.captured} captured`, `${s.pending} pending`];
  if (s.failed > 0) {
    parts.push(`${s.failed} failed`);
  }
  return parts.join(' · ');
}

function sessionTooltip(s: SessionStatus): string {
  const lines = [sessionLabel(s)];
  if (s.cwd) {
    lines.push(`Folder: ${s.cwd}`);
  }
  lines.push(`Session: ${s.id} (${s.agent})`);
  if (s.last_ts) {
    lines.push(`Last turn: ${s.last_ts}`);
  }
  lines.push(`${s.turns} turns: ${s.captured} captured, ${s.pending} pending, ${s.failed} failed.`);
  for (const cause of s.causes ?? []) {
    lines.push(`Failing: ${cause}`);
  }
  const dropped = Object.entries(s.dropped ?? {});
  if (dropped.length) {
    lines.push(`Not sent, by policy: ${dropped.map(([p, c]) => `${p} ${c.records} records`).join(', ')}`);
  }
  if (s.problems) {
    lines.push(`${s.problems} transcript lines could not be read.`);
  }
  return lines.join('\n');
}

/** Context flags for an item's menus: `checkpoint.item state-<state> [files] [source] [superseded]`. */
export function itemContext(item: Item): string {
  const flags: string[] = [ContextValues.item, `state-${item.state}`];
  if (item.files.length) {
    flags.push('files');
  }
  if (item.sources.length) {
    flags.push('source');
  }
  if (item.superseded_by) {
    flags.push('superseded');
  }
  return flags.join(' ');
}

/** "“statement”", or the bare id when the item could not be looked up. */
function linkedLabel(id: string, related: Related | undefined, max = 60): string {
  const other = related?.get(id);
  return other ? `“${oneLine(other.statement, max)}”` : `item ${id}`;
}

export function itemTooltip(item: Item, related?: Related): string {
  const lines = [`${KIND_TITLE[item.kind] ?? item.kind}: ${item.statement}`];
  if (item.rationale) {
    lines.push(`Why: ${item.rationale}`);
  }
  if (item.files.length) {
    lines.push(`Files: ${item.files.join(', ')}`);
  }
  const src = item.sources[0];
  if (src) {
    lines.push(`From: ${src.path}:${src.line}${src.timestamp ? ` (${src.timestamp})` : ''}`);
  }
  if (item.superseded_by) {
    lines.push(`Superseded by: ${linkedLabel(item.superseded_by, related, MAX_LABEL)} (${item.superseded_by})`);
  }
  for (const id of item.supersedes ?? []) {
    lines.push(`Supersedes: ${linkedLabel(id, related, MAX_LABEL)} (${id})`);
  }
  lines.push(`State: ${item.state} · extractor ${item.extractor} · confidence ${item.confidence}`);
  return lines.join('\n');
}

export function toTreeItem(node: Node, now: Date = new Date()): vscode.TreeItem {
  switch (node.type) {
    case 'message': {
      const t = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
      t.id = node.id;
      t.iconPath = new vscode.ThemeIcon(node.icon);
      if (node.detail) {
        t.description = node.detail;
        t.tooltip = `${node.label}\n${node.detail}`;
      }
      if (node.command) {
        t.command = { command: node.command, title: node.label };
      }
      t.contextValue = ContextValues.message;
      return t;
    }
    case 'session': {
      const s = node.session;
      const t = new vscode.TreeItem(sessionLabel(s), vscode.TreeItemCollapsibleState.Collapsed);
      t.id = `session:${s.id}`;
      t.description = sessionDescription(s, now);
      t.tooltip = sessionTooltip(s);
      t.iconPath = new vscode.ThemeIcon(
        s.failed > 0 || (s.causes ?? []).length ? 'warning' : s.pending > 0 ? 'clock' : 'pass',
      );
      t.contextValue = ContextValues.session;
      return t;
    }
    case 'cause': {
      const t = new vscode.TreeItem(`Failing: ${oneLine(node.text)}`, vscode.TreeItemCollapsibleState.None);
      t.id = `cause:${node.sessionId}:${node.index}`;
      t.tooltip = node.text;
      t.iconPath = new vscode.ThemeIcon('warning');
      t.contextValue = ContextValues.cause;
      return t;
    }
    case 'group': {
      const t = new vscode.TreeItem(KIND_LABELS[node.kind], vscode.TreeItemCollapsibleState.Expanded);
      t.id = `group:${node.sessionId}:${node.kind}`;
      t.description = String(node.items.length);
      t.iconPath = new vscode.ThemeIcon(KIND_ICONS[node.kind]);
      t.contextValue = `${ContextValues.group} ${node.kind}`;
      return t;
    }
    case 'item': {
      const item = node.item;
      const expandable = chainChildren(node).length > 0;
      const t = new vscode.TreeItem(
        oneLine(item.statement),
        expandable ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
      );
      t.id = itemNodeId(node);
      const desc: string[] = [];
      if (node.chain) {
        desc.push(node.chain.direction === 'newer' ? '→ replaced it' : '← replaced by it');
      }
      if (item.superseded_by) {
        desc.push(`superseded by ${linkedLabel(item.superseded_by, node.related)}`);
      } else if (item.supersedes?.length && !node.chain) {
        desc.push(`supersedes ${item.supersedes.length}`);
      }
      if (item.state !== 'new') {
        desc.push(item.state);
      }
      if (item.files.length) {
        desc.push(path.basename(item.files[0]) + (item.files.length > 1 ? ` +${item.files.length - 1}` : ''));
      }
      t.description = desc.join(' · ');
      t.tooltip = itemTooltip(item, node.related);
      // No strike-through in a tree: a superseded item gets its own icon, dimmed.
      t.iconPath = item.superseded_by
        ? new vscode.ThemeIcon('history', new vscode.ThemeColor('disabledForeground'))
        : new vscode.ThemeIcon(item.state === 'accepted' ? 'verified' : KIND_ICONS[item.kind] ?? 'circle-small');
      t.contextValue = itemContext(item);
      if (item.files.length) {
        t.command = { command: Commands.goToCode, title: 'Go to Code', arguments: [node] };
      } else if (item.sources.length) {
        t.command = { command: Commands.openTranscript, title: 'Open Transcript at Turn', arguments: [node] };
      }
      return t;
    }
  }
}

export type ItemsFetcher = (sessionId: string) => Promise<Item[]>;
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

  constructor(
    private readonly fetchItems: ItemsFetcher,
    private readonly lookupItems?: ItemsLookup,
    private readonly fetchSessions?: SessionsFetcher,
  ) {}

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
    return toTreeItem(node);
  }

  getParent(): undefined {
    return undefined;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      const status = this.state.status;
      if (this.state.phase === 'running' && status && this.fetchSessions && leavesSessionsOut(status)) {
        return rootNodes(this.state, await this.sessionsFor(status));
      }
      return rootNodes(this.state);
    }
    if (node.type === 'session') {
      const { items, related } = this.itemsOf(node.session);
      return sessionChildren(node.session, await items, await related);
    }
    if (node.type === 'group') {
      return groupChildren(node);
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
    const key = `${session.captured}/${session.turns}`;
    const hit = this.cache.get(session.id);
    if (hit && hit.key === key) {
      return hit;
    }
    const items = withTimeout(this.fetchItems(session.id), ITEMS_TIMEOUT_MS, 'the daemon').catch((err: unknown) => {
      // Shown under the session; not kept, so the next expand or refresh asks again.
      this.cache.delete(session.id);
      return err instanceof Error ? err : new Error(String(err));
    });
    const related = items.then((listed) => this.relatedTo(listed));
    const entry = { key, items, related };
    this.cache.set(session.id, entry);
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
