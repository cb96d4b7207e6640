/**
 * The side panel: sessions (title, agent, time, captured/pending/failed), and under each its items
 * grouped by kind. Fed by `checkpoint/status` (sessions and counts) and `checkpoint/items` (fetched
 * per session when it is expanded, again when its captured count changes).
 *
 * Every label, description and tooltip is a plain string: transcript text is shown as text, never
 * rendered as Markdown or HTML.
 */

import * as path from 'node:path';

import * as vscode from 'vscode';

import { Commands, ContextValues, KIND_LABELS, KIND_TITLE, SettingIds } from './constants';
import type { Item, ItemKind, SessionStatus } from './protocol';
import { ITEM_KINDS } from './protocol';
import type { ViewState } from './status';

export type Node =
  | { type: 'message'; id: string; label: string; detail?: string; icon: string; command?: string }
  | { type: 'session'; session: SessionStatus }
  | { type: 'cause'; sessionId: string; text: string; index: number }
  | { type: 'group'; sessionId: string; kind: ItemKind; items: Item[] }
  | { type: 'item'; item: Item };

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

/** The panel's top level for a state: explanations when there is nothing to list, else sessions. */
export function rootNodes(state: ViewState): Node[] {
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
  if (status.sessions.length === 0) {
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
  const sessions = [...status.sessions].sort((a, b) => (b.last_ts ?? '').localeCompare(a.last_ts ?? ''));
  for (const session of sessions) {
    nodes.push({ type: 'session', session });
  }
  return nodes;
}

/** Under a session: why it is stuck (if it is), then its items grouped by kind. */
export function sessionChildren(session: SessionStatus, items: Item[] | Error): Node[] {
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
      nodes.push({ type: 'group', sessionId: session.id, kind, items: ofKind });
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
  return group.items.map((item) => ({ type: 'item' as const, item }));
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

/** Context flags for an item's menus: `checkpoint.item state-<state> [files] [source]`. */
export function itemContext(item: Item): string {
  const flags: string[] = [ContextValues.item, `state-${item.state}`];
  if (item.files.length) {
    flags.push('files');
  }
  if (item.sources.length) {
    flags.push('source');
  }
  return flags.join(' ');
}

export function itemTooltip(item: Item): string {
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
      const t = new vscode.TreeItem(oneLine(item.statement), vscode.TreeItemCollapsibleState.None);
      t.id = `item:${item.id}`;
      const desc: string[] = [];
      if (item.state !== 'new') {
        desc.push(item.state);
      }
      if (item.files.length) {
        desc.push(path.basename(item.files[0]) + (item.files.length > 1 ? ` +${item.files.length - 1}` : ''));
      }
      t.description = desc.join(' · ');
      t.tooltip = itemTooltip(item);
      t.iconPath = new vscode.ThemeIcon(item.state === 'accepted' ? 'verified' : KIND_ICONS[item.kind] ?? 'circle-small');
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

/** How long a session's items may take before the panel says so instead of staying empty. */
export const ITEMS_TIMEOUT_MS = 20_000;

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000}s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The TreeDataProvider: a view of the latest {@link ViewState}, items fetched per session. */
export class CheckpointTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  private state: ViewState = { phase: 'starting' };
  private readonly cache = new Map<string, { key: string; items: Promise<Item[] | Error> }>();

  constructor(private readonly fetchItems: ItemsFetcher) {}

  /** A new daemon state or status: redraw, refetching items of sessions whose counts changed. */
  setState(state: ViewState): void {
    this.state = state;
    if (state.phase !== 'running') {
      this.cache.clear();
    }
    this.changed.fire();
  }

  /** Forget every fetched item list and redraw (Refresh, accept, dismiss). */
  refresh(): void {
    this.cache.clear();
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
      return rootNodes(this.state);
    }
    if (node.type === 'session') {
      return sessionChildren(node.session, await this.itemsOf(node.session));
    }
    if (node.type === 'group') {
      return groupChildren(node);
    }
    return [];
  }

  private itemsOf(session: SessionStatus): Promise<Item[] | Error> {
    const key = `${session.captured}/${session.turns}`;
    const hit = this.cache.get(session.id);
    if (hit && hit.key === key) {
      return hit.items;
    }
    const items = withTimeout(this.fetchItems(session.id), ITEMS_TIMEOUT_MS, 'the daemon').catch((err: unknown) => {
      // Shown under the session; not kept, so the next expand or refresh asks again.
      this.cache.delete(session.id);
      return err instanceof Error ? err : new Error(String(err));
    });
    this.cache.set(session.id, { key, items });
    return items;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
