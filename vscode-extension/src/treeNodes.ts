/**
 * The side panel's nodes, as plain data: what the daemon's status, session list and items become in
 * the tree (which rows, in which order, under which parent), and each row's label, description,
 * tooltip, icon, context flags and click ({@link nodeView}). No `vscode` import: tests run it
 * directly, and `tree.ts` (the TreeDataProvider) only turns a {@link NodeView} into a `TreeItem`.
 *
 * Supersession chains: a superseded item is dimmed, with a distinct icon and "superseded by …" in
 * its description, and expands to the item that replaced it (and that one to its own replacement);
 * an item that replaced others expands to them.
 *
 * Team memory: the decisions shared in a repository (its decision records, read by the daemon: items
 * with origin 'shared') are listed in a "Team" node per repository, above the sessions, with the
 * records that cannot be read; the daemon keeps them in the repository's team session (agent
 * {@link TEAM_AGENT}), which the panel shows as that node, never as a session. A shared item said in a
 * session here is listed under its session too.
 *
 * Scope "all": the sessions are grouped by repository (the daemon's `repository` of each, else the
 * repository's Team folder or the workspace folder holding it, else its own folder), each repository a
 * node above its Team node and its sessions, as the GitHub Pull Requests tree groups by repository.
 *
 * Every row has an id of its own that stays the same across refreshes (VS Code keeps what was
 * expanded by id, across a reload of the window too). Times are relative, paths relative to the
 * workspace folder or the home folder ({@link Place}).
 *
 * Every label, description and tooltip is a plain string: transcript text is shown as text, never
 * rendered as Markdown or HTML.
 */

import * as path from 'node:path';

import { Commands, ContextValues, KIND_LABELS, KIND_TITLE, SettingIds, TEAM_AGENT } from './constants';
import type { Item, ItemKind, SessionStatus, Status } from './protocol';
import { ITEM_KINDS } from './protocol';
import {
  MAX_LABEL,
  NO_PLACE,
  absoluteFile,
  agentName,
  oneLine,
  plural,
  relativeTime,
  shownPath,
  type Place,
} from './rowText';
import { byNewest, repositoryNodes } from './repositories';
import type { ViewState } from './status';

export { oneLine, relativeTime } from './rowText';
export { repositoryChildren, repositoryNodes, repositoryOf } from './repositories';

export type Node =
  | { type: 'message'; id: string; label: string; detail?: string; icon: string; command?: string }
  | { type: 'session'; session: SessionStatus }
  | { type: 'cause'; sessionId: string; text: string; index: number }
  /** `review`: the items held for review, listed first whatever their kind. */
  | { type: 'group'; sessionId: string; kind: ItemKind | 'review'; items: Item[]; related?: Related }
  | { type: 'team'; session: SessionStatus; problems: RecordProblem[] }
  /** Scope "all": a repository (its top folder, or a folder in none), above its Team node and sessions. */
  | { type: 'repository'; folder: string; teams: TeamNode[]; sessions: SessionStatus[] }
  | { type: 'recordProblem'; sessionId: string; problem: RecordProblem }
  /** `team`: the team session's id when the item is listed under its repository's Team node. */
  | { type: 'item'; item: Item; related?: Related; chain?: ChainStep; team?: string };

export type TeamNode = Extract<Node, { type: 'team' }>;

/** A decision record the daemon could not read: its file (absolute), line and why. */
export type RecordProblem = Status['problems'][number];

export { TEAM_AGENT } from './constants';

/** Items by id, for following supersession links to items listed elsewhere (or not at all). */
export type Related = ReadonlyMap<string, Item>;

/** How an item node was reached along a chain: its parent node's id, and which way it points. */
export interface ChainStep {
  parentId: string;
  /** 'newer': the item that replaced the parent; 'older': one the parent replaced. */
  direction: 'newer' | 'older';
}

/** How deep chains are followed in the panel (a chain never loops; this bounds a long one). */
export const MAX_CHAIN = 20;

const KIND_ICONS: Record<ItemKind, string> = { decision: 'milestone', constraint: 'lock', question: 'question' };

/** Items held for review: their group, icon and why. */
export const NEEDS_REVIEW = 'Needs review';
const HELD_ICON = { id: 'shield', color: 'list.warningForeground' };
const HELD_TOOLTIP =
  'Held for review: these read as instructions to an agent, and no agent is shown them until you accept them. ' +
  'Accept shows the exact line agents will receive and asks first.';

/** How much of a session's title its row shows (the tooltip shows it whole). */
export const SESSION_LABEL = 60;

export function sessionLabel(session: Pick<SessionStatus, 'title' | 'cwd' | 'id'>): string {
  if (session.title && session.title.trim()) {
    const flat = oneLine(session.title, 1000);
    if (flat.length <= SESSION_LABEL) {
      return flat;
    }
    const cut = flat.slice(0, SESSION_LABEL - 1);
    const word = cut.lastIndexOf(' ');
    return `${word > SESSION_LABEL / 2 ? cut.slice(0, word) : cut}…`;
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
  const fetched = new Map(listed.map((s) => [s.id, s]));
  // The status's copy has the freshest counts; the repository only the fetched copy names.
  const own = status.sessions.map((s) => {
    const repository = s.repository ?? fetched.get(s.id)?.repository;
    return repository === undefined ? s : { ...s, repository };
  });
  const ids = new Set(own.map((s) => s.id));
  return [...own, ...listed.filter((s) => !ids.has(s.id))];
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
  const teams: TeamNode[] = all
    .filter((s) => s.agent === TEAM_AGENT)
    .sort((a, b) => (a.cwd ?? a.id).localeCompare(b.cwd ?? b.id))
    .map((team) => ({ type: 'team', session: team, problems: status.problems.filter((p) => p.session_id === team.id) }));
  const sessions = all.filter((s) => s.agent !== TEAM_AGENT).sort(byNewest);
  if (status.scope === 'all') {
    return [...nodes, ...repositoryNodes(teams, sessions)];
  }
  nodes.push(...teams);
  for (const session of sessions) {
    nodes.push({ type: 'session', session });
  }
  return nodes;
}

/**
 * Under a repository's Team node: the records that cannot be read, then the items shared in it
 * (`items`: the workspace's, of which those with origin 'shared' are listed).
 */
export function teamChildren(team: Extract<Node, { type: 'team' }>, items: Item[] | Error, related?: Related): Node[] {
  const nodes: Node[] = team.problems.map((problem) => ({ type: 'recordProblem' as const, sessionId: team.session.id, problem }));
  if (items instanceof Error) {
    nodes.push({
      type: 'message',
      id: `msg:items-error:${team.session.id}`,
      label: `Could not load the shared decisions: ${oneLine(items.message)}`,
      icon: 'error',
      command: Commands.showLog,
    });
    return nodes;
  }
  const shared = items.filter((i) => i.origin === 'shared' && i.state !== 'dismissed');
  // Those held for review first, as in a session's "Needs review" group.
  for (const item of [...shared.filter(isHeld), ...shared.filter((i) => !isHeld(i))]) {
    nodes.push({ type: 'item', item, related, team: team.session.id });
  }
  if (shared.length === 0 && team.problems.length === 0) {
    nodes.push({
      type: 'message',
      id: `msg:no-shared:${team.session.id}`,
      label: 'No decision is shared in this repository.',
      detail: 'Share with the Team writes one; commit and push it.',
      icon: 'info',
    });
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
  const held = own.filter(isHeld);
  if (held.length) {
    nodes.push({ type: 'group', sessionId: session.id, kind: 'review', items: held, related });
  }
  for (const kind of ITEM_KINDS) {
    const ofKind = own.filter((i) => i.kind === kind && !isHeld(i));
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
  if (node.chain) {
    return `${node.chain.parentId}>${node.chain.direction}:${node.item.id}`;
  }
  // Under a Team node the same item may be listed under its session too: ids must differ.
  return node.team ? `team:${node.team}>item:${node.item.id}` : `item:${node.item.id}`;
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
  // Agent and time first: what a narrow row still shows of its description.
  const parts = [agentName(s.agent), relativeTime(s.last_ts, now), `${s.captured} captured`, `${s.pending} pending`];
  if (s.failed > 0) {
    parts.push(`${s.failed} failed`);
  }
  return parts.join(' · ');
}

function sessionTooltip(s: SessionStatus, now: Date, place: Place): string {
  const lines = [s.title ? oneLine(s.title, 400) : sessionLabel(s)];
  lines.push(`${agentName(s.agent)} session, last turn ${s.last_ts ? relativeTime(s.last_ts, now) : 'unknown'}`);
  if (s.cwd) {
    lines.push(`Folder: ${shownPath(s.cwd, place)}`);
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
  lines.push(`Session ${s.id}`);
  return lines.join('\n');
}

/**
 * Context flags for an item's menus: `checkpoint.item state-<state> [files] [source] [superseded]
 * [shared] [held] [record] [accept] [dismiss]`. `accept` and `dismiss` say whether the act would
 * change anything (Accept is not offered on an accepted item, unless it is a record's that you have
 * not accepted yourself and is held for review).
 */
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
  if (item.origin === 'shared') {
    flags.push('shared'); // its record is in the repository already: no "Share with the Team"
  }
  if (isHeld(item)) {
    flags.push('held'); // needs review: its Accept asks first
  }
  if (item.record) {
    flags.push('record');
  }
  if (item.state !== 'accepted' || isHeld(item)) {
    flags.push('accept');
  }
  if (item.state !== 'dismissed') {
    flags.push('dismiss');
  }
  return flags.join(' ');
}

/** "“statement”", or the bare id when the item could not be looked up. */
function linkedLabel(id: string, related: Related | undefined, max = 60): string {
  const other = related?.get(id);
  return other ? `“${oneLine(other.statement, max)}”` : `item ${id}`;
}

/** Who said an item, and when: "said by you in a Claude Code session, 3 h ago", "shared by Alice, 2 d ago". */
export function provenance(item: Item, now: Date = new Date()): string {
  if (item.origin === 'shared') {
    const who = item.shared_by ? `shared by ${item.shared_by}` : 'shared';
    return `${who}, ${relativeTime(item.created_at, now)}`;
  }
  const said = item.sources.find((s) => s.timestamp)?.timestamp ?? item.created_at;
  const roles = new Set(item.sources.map((s) => s.role).filter((r): r is string => Boolean(r)));
  const who = roles.size === 1 && roles.has('user') ? ' by you' : roles.size === 1 && roles.has('assistant') ? ' by the agent' : '';
  const session = item.agent ? `a ${agentName(item.agent)} session` : 'a session';
  return `said${who} in ${session}, ${relativeTime(said, now)}`;
}

export function itemTooltip(item: Item, related?: Related, now: Date = new Date(), place: Place = NO_PLACE): string {
  const lines = [`${KIND_TITLE[item.kind] ?? item.kind}: ${item.statement}`];
  if (item.rationale) {
    lines.push(`Why: ${item.rationale}`);
  }
  if (item.files.length) {
    lines.push(`Files: ${item.files.map((f) => shownPath(absoluteFile(f, item.cwd), place)).join(', ')}`);
  }
  const p = provenance(item, now);
  const session = item.origin !== 'shared' && item.session_title ? ` (“${oneLine(item.session_title, 60)}”)` : '';
  lines.push(`${p.charAt(0).toUpperCase()}${p.slice(1)}${session}`);
  if (item.superseded_by) {
    lines.push(`Superseded by: ${linkedLabel(item.superseded_by, related, MAX_LABEL)} (${item.superseded_by})`);
  }
  for (const id of item.supersedes ?? []) {
    lines.push(`Supersedes: ${linkedLabel(id, related, MAX_LABEL)} (${id})`);
  }
  if (isHeld(item)) {
    lines.push('Held for review: it reads as an instruction planted for an agent; no agent is shown it until you accept it.');
  }
  if (item.record) {
    lines.push(`Decision record: ${item.record}`);
  }
  const accepted =
    item.state === 'accepted' && item.record && item.accepted_here === false ? 'accepted in the record, not by you' : item.state;
  lines.push(`State: ${accepted} · extractor ${item.extractor} · confidence ${item.confidence}`);
  return lines.join('\n');
}

/** Held for review and not accepted by you yet (nor dismissed): no agent is shown it. */
export function isHeld(item: Item): boolean {
  if (item.held !== true || item.state === 'dismissed') {
    return false;
  }
  // A record's "accepted" is its author's claim: only your acceptance releases it (older daemons: its state).
  return !(item.accepted_here ?? item.state === 'accepted');
}

/** Whether a row can be opened, and whether it starts open. */
export type Collapsible = 'none' | 'collapsed' | 'expanded';

/** A row as shown: everything `tree.ts` puts on its `TreeItem`, in plain data. */
export interface NodeView {
  id: string;
  label: string;
  collapsible: Collapsible;
  /** Absent: no description at all (an item's may be the empty string). */
  description?: string;
  tooltip?: string;
  /** A codicon id, and a theme color id when the icon is tinted. */
  icon: { id: string; color?: string };
  contextValue: string;
  /** What a click runs; an item's command receives its node. */
  command?: { command: string; title: string; arguments?: Node[] };
}

function itemDescription(node: ItemNode, now: Date): string {
  const item = node.item;
  const desc: string[] = [];
  if (isHeld(item)) {
    desc.push(`needs review: ${KIND_TITLE[item.kind].toLowerCase()}`); // first: what a narrow row still shows
  }
  if (node.team) {
    // Under the Team node: who shared it and when (the record's date).
    desc.push(item.shared_by ? `${item.shared_by} · ${relativeTime(item.created_at, now)}` : relativeTime(item.created_at, now));
  }
  if (node.chain) {
    desc.push(node.chain.direction === 'newer' ? '→ replaced it' : '← replaced by it');
  }
  if (item.superseded_by) {
    desc.push(`superseded by ${linkedLabel(item.superseded_by, node.related)}`);
  } else if (item.supersedes?.length && !node.chain) {
    desc.push(`supersedes ${item.supersedes.length}`);
  }
  if (item.state !== 'new') {
    desc.push(item.state === 'accepted' && item.record && item.accepted_here === false ? 'accepted in the record' : item.state);
  }
  if (item.origin === 'shared' && !node.team) {
    desc.push('shared');
  }
  if (item.files.length) {
    desc.push(path.basename(item.files[0]) + (item.files.length > 1 ? ` +${item.files.length - 1}` : ''));
  }
  return desc.join(' · ');
}

/** How a node is shown: its row in the panel (`place`: what paths are shown relative to). */
export function nodeView(node: Node, now: Date = new Date(), place: Place = NO_PLACE): NodeView {
  switch (node.type) {
    case 'message': {
      const view: NodeView = {
        id: node.id,
        label: node.label,
        collapsible: 'none',
        icon: { id: node.icon },
        contextValue: ContextValues.message,
      };
      if (node.detail) {
        view.description = node.detail;
        view.tooltip = `${node.label}\n${node.detail}`;
      }
      if (node.command) {
        view.command = { command: node.command, title: node.label };
      }
      return view;
    }
    case 'session': {
      const s = node.session;
      return {
        id: `session:${s.id}`,
        label: sessionLabel(s),
        collapsible: 'collapsed',
        description: sessionDescription(s, now),
        tooltip: sessionTooltip(s, now, place),
        icon: { id: s.failed > 0 || (s.causes ?? []).length ? 'warning' : s.pending > 0 ? 'clock' : 'pass' },
        contextValue: ContextValues.session,
      };
    }
    case 'cause':
      return {
        id: `cause:${node.sessionId}:${node.index}`,
        label: `Failing: ${oneLine(node.text)}`,
        collapsible: 'none',
        tooltip: node.text,
        icon: { id: 'warning' },
        contextValue: ContextValues.cause,
      };
    case 'group':
      return {
        id: `group:${node.sessionId}:${node.kind}`,
        label: node.kind === 'review' ? NEEDS_REVIEW : KIND_LABELS[node.kind],
        collapsible: 'expanded',
        description: String(node.items.length),
        tooltip: node.kind === 'review' ? HELD_TOOLTIP : undefined,
        icon: node.kind === 'review' ? HELD_ICON : { id: KIND_ICONS[node.kind] },
        contextValue: `${ContextValues.group} ${node.kind}`,
      };
    case 'repository': {
      const shown = node.folder ? shownPath(node.folder, place) : 'No folder';
      const parts = [plural(node.sessions.length, 'session')];
      if (node.teams.length) {
        parts.push('shared decisions');
      }
      const newest = node.sessions[0]?.last_ts;
      return {
        id: `repo:${node.folder}`,
        label: node.folder ? path.basename(node.folder) || node.folder : 'No folder',
        collapsible: 'expanded',
        description: parts.join(' · '),
        tooltip: [
          node.folder ? `Repository ${shown}` : 'Sessions run in no folder',
          `${plural(node.sessions.length, 'agent session')}${newest ? `, the latest ${relativeTime(newest, now)}` : ''}`,
          ...(node.teams.length ? ['Its team’s shared decisions are under Team.'] : []),
        ].join('\n'),
        icon: { id: 'repo' },
        contextValue: ContextValues.repository,
      };
    }
    case 'team': {
      const s = node.session;
      const where = s.cwd ? shownPath(s.cwd, place) : s.id;
      const tooltip = [
        `Decisions shared with the team in the repository ${where}: its decision records.`,
        'Share with the Team writes a record; commit and push it. A pull brings your team’s.',
      ];
      if (node.problems.length) {
        tooltip.push(`${node.problems.length === 1 ? '1 record' : `${node.problems.length} records`} cannot be read.`);
      }
      return {
        id: `team:${s.id}`,
        label: 'Team',
        collapsible: 'collapsed',
        description: s.cwd ? path.basename(s.cwd) || where : where,
        tooltip: tooltip.join('\n'),
        icon: { id: node.problems.length ? 'warning' : 'organization' },
        contextValue: ContextValues.team,
      };
    }
    case 'recordProblem': {
      const p = node.problem;
      return {
        id: `record-problem:${node.sessionId}:${p.path}:${p.line}`,
        label: `Cannot be read: ${path.basename(p.path)}:${p.line}`,
        collapsible: 'none',
        description: oneLine(p.message),
        tooltip: `${shownPath(p.path, place)}:${p.line}: ${p.message}\nClick to open the record at that line.`,
        icon: { id: 'warning' },
        contextValue: ContextValues.recordProblem,
        command: { command: Commands.openProblemFile, title: 'Open the Record', arguments: [node] },
      };
    }
    case 'item': {
      const item = node.item;
      const view: NodeView = {
        id: itemNodeId(node),
        label: oneLine(item.statement),
        collapsible: chainChildren(node).length > 0 ? 'collapsed' : 'none',
        description: itemDescription(node, now),
        tooltip: itemTooltip(item, node.related, now, place),
        // No strike-through in a tree: a superseded item gets its own icon, dimmed.
        // An accepted item keeps its kind's icon (its description says accepted); a held one has its own.
        icon: item.superseded_by
          ? { id: 'history', color: 'disabledForeground' }
          : isHeld(item)
            ? HELD_ICON
            : { id: KIND_ICONS[item.kind] ?? 'circle-small' },
        contextValue: itemContext(item),
      };
      if (item.files.length) {
        view.command = { command: Commands.goToCode, title: 'Go to Code', arguments: [node] };
      } else if (item.sources.length) {
        view.command = { command: Commands.openTurn, title: 'Open Turn', arguments: [node] };
      }
      return view;
    }
  }
}
