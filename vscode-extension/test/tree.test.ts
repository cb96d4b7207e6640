import * as vscode from 'vscode';
import { beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';

import { Expansion, MAX_REMEMBERED, type Memory } from '../src/expansion';
import { CheckpointTree, ITEMS_TIMEOUT_MS, SESSIONS_REFETCH_MS, toTreeItem } from '../src/tree';
import { repositoryChildren, type Node } from '../src/treeNodes';
import { resetVscodeMock } from './__mocks__/vscode';
import { item, session, status } from './fixtures';

beforeEach(() => resetVscodeMock());

const NOW = new Date('2026-01-05T13:00:00.000Z');

describe('toTreeItem', () => {
  it('renders a session with title, agent, time and captured/pending/failed counts', () => {
    const t = toTreeItem({ type: 'session', session: session({ failed: 2, causes: ['x'] }) }, NOW);
    expect(t.label).toBe('Refactor the parser');
    expect(t.description).toBe('Claude Code · 3 h ago · 30 captured · 10 pending · 2 failed');
    expect(t.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Collapsed);
    expect(t.contextValue).toBe('checkpoint.session');
    expect((t.iconPath as vscode.ThemeIcon).id).toBe('warning');
    expect(t.tooltip).toContain('Failing: x');
  });

  it('renders a kind group with its count, expanded', () => {
    const t = toTreeItem({ type: 'group', sessionId: 's', kind: 'question', items: [item(), item()] });
    expect(t.label).toBe('Open questions');
    expect(t.description).toBe('2');
    expect(t.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Expanded);
  });

  it('renders an item with its statement as plain text and clicks through to its code', () => {
    const it_ = item({ statement: '<script>alert(1)</script>\n**bold** [x](command:evil)', files: ['/a/b.py', '/a/c.py'] });
    const node: Node = { type: 'item', item: it_ };
    const t = toTreeItem(node);
    expect(t.label).toBe('<script>alert(1)</script> **bold** [x](command:evil)');
    expect(typeof t.tooltip).toBe('string');
    expect(t.description).toBe('b.py +1');
    expect(t.command).toEqual({ command: 'checkpoint.goToCode', title: 'Go to Code', arguments: [node] });
    expect(t.contextValue).toBe('checkpoint.item state-new files source accept dismiss');
  });

  it('opens the turn on click when the item names no files, and shows its state', () => {
    const node: Node = { type: 'item', item: item({ files: [], state: 'accepted' }) };
    const t = toTreeItem(node);
    expect(t.command?.command).toBe('checkpoint.openTurn');
    expect(t.description).toBe('accepted');
    expect(t.contextValue).toBe('checkpoint.item state-accepted source dismiss');
  });

  it('gives message nodes their command', () => {
    const t = toTreeItem({ type: 'message', id: 'm', label: 'Show the log', icon: 'output', command: 'checkpoint.showLog' });
    expect(t.command).toEqual({ command: 'checkpoint.showLog', title: 'Show the log' });
  });

  it('leaves what a node does not have unset on its TreeItem', () => {
    const t = toTreeItem({ type: 'message', id: 'm', label: 'Starting…', icon: 'loading~spin' });
    expect([t.description, t.tooltip, t.command]).toEqual([undefined, undefined, undefined]);
    expect(t.iconPath).toEqual(new vscode.ThemeIcon('loading~spin'));
  });
});

describe('CheckpointTree', () => {
  it('lists nothing when there is no session, so that the welcome view shows (and says which scope)', async () => {
    const tree = new CheckpointTree(vi.fn(async () => []));
    tree.setState({ phase: 'running', status: status({ sessions: [], scope: 'workspace' }) });
    expect(await tree.getChildren()).toEqual([]);
    expect(vscode.commands.executeCommand).toHaveBeenLastCalledWith('setContext', 'checkpoint.empty', 'workspace');
    tree.setState({ phase: 'running', status: status() });
    expect((await tree.getChildren()).map((n) => n.type)).toEqual(['session']);
    expect(vscode.commands.executeCommand).toHaveBeenLastCalledWith('setContext', 'checkpoint.empty', '');
  });

  it('fetches a session’s items when expanded and reuses them until its captured count changes', async () => {
    const fetch = vi.fn(async (_id: string) => [item()]);
    const tree = new CheckpointTree(fetch);
    const fired = vi.fn();
    tree.onDidChangeTreeData(fired);
    tree.setState({ phase: 'running', status: status() });
    expect(fired).toHaveBeenCalledTimes(1);

    const [sessionNode] = await tree.getChildren();
    const groups = await tree.getChildren(sessionNode);
    expect(groups.map((g) => g.type === 'group' && g.kind)).toEqual(['decision']);
    expect(await tree.getChildren(groups[0])).toEqual([{ type: 'item', item: item(), related: new Map([['item-1', item()]]) }]);
    await tree.getChildren(sessionNode);
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(fetch).toHaveBeenCalledWith('sess-aaaa-1111');

    tree.setState({ phase: 'running', status: status({ sessions: [session({ captured: 35, pending: 5 })] }) });
    const [again] = await tree.getChildren();
    await tree.getChildren(again);
    expect(fetch).toHaveBeenCalledTimes(2);

    tree.refresh();
    await tree.getChildren(again);
    expect(fetch).toHaveBeenCalledTimes(3);
  });

  it('shows a failed fetch and asks again next time', async () => {
    const fetch = vi.fn().mockRejectedValueOnce(new Error('boom')).mockResolvedValue([item()]);
    const tree = new CheckpointTree(fetch);
    tree.setState({ phase: 'running', status: status() });
    const [sessionNode] = await tree.getChildren();
    expect(await tree.getChildren(sessionNode)).toMatchObject([{ type: 'message', label: 'Could not load items: boom' }]);
    expect((await tree.getChildren(sessionNode))[0].type).toBe('group');
  });

  it('says so when the daemon does not answer, instead of an empty session, and asks again next time', async () => {
    vi.useFakeTimers();
    try {
      const fetch = vi.fn().mockReturnValueOnce(new Promise<never>(() => {})).mockResolvedValue([item()]);
      const tree = new CheckpointTree(fetch);
      tree.setState({ phase: 'running', status: status() });
      const [sessionNode] = await tree.getChildren();
      const pending = tree.getChildren(sessionNode);
      await vi.advanceTimersByTimeAsync(ITEMS_TIMEOUT_MS);
      expect(await pending).toMatchObject([
        { type: 'message', label: 'Could not load items: the daemon did not answer within 20s' },
      ]);
      expect((await tree.getChildren(sessionNode))[0].type).toBe('group');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the sessions a status leaves out (checkpoint/sessions)', () => {
  const mine = session({ id: 'mine', last_ts: '2026-01-05T12:00:00Z', pending: 4 });
  const other = session({ id: 'other', cwd: '/elsewhere', workspace: null, last_ts: '2026-01-05T11:00:00Z' });
  const lean = (over: Parameters<typeof status>[0] = {}): ReturnType<typeof status> =>
    status({ scope: 'all', sessions: [mine], sessions_total: 2, others_version: 'v1', ...over });
  // Scope "all" groups the sessions by repository: the sessions, in order, under their repositories.
  const flat = (nodes: Node[]): Node[] => nodes.flatMap((n) => (n.type === 'repository' ? repositoryChildren(n) : [n]));
  const ids = (nodes: Node[]): string[] => flat(nodes).map((n) => (n.type === 'session' ? n.session.id : n.type));

  it('asks for the full list when the panel shows it, and again only when others_version changes', async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const fetchSessions = vi.fn(async () => [session({ ...mine, pending: 9 }), other]);
    const tree = new CheckpointTree(vi.fn(async () => []), undefined, fetchSessions);
    tree.setState({ phase: 'running', status: lean() });
    expect(fetchSessions).not.toHaveBeenCalled(); // a status alone asks nothing: the panel asks when it draws

    const nodes = await tree.getChildren();
    expect(flat(nodes)).toEqual([
      { type: 'session', session: mine }, // the status's counts, fresher than the list's
      { type: 'session', session: other },
    ]);
    expect(fetchSessions).toHaveBeenCalledTimes(1);

    // Statuses about the workspace's session only: redrawn from the status, nothing asked.
    for (const pending of [3, 2, 1]) {
      tree.setState({ phase: 'running', status: lean({ sessions: [session({ ...mine, pending })] }) });
      const [first] = flat(await tree.getChildren());
      expect(first).toEqual({ type: 'session', session: session({ ...mine, pending }) });
    }
    expect(fetchSessions).toHaveBeenCalledTimes(1);

    await vi.advanceTimersByTimeAsync(SESSIONS_REFETCH_MS);
    tree.setState({ phase: 'running', status: lean({ others_version: 'v2' }) });
    await tree.getChildren();
    await tree.getChildren();
    expect(fetchSessions).toHaveBeenCalledTimes(2);

    tree.refresh();
    await tree.getChildren();
    expect(fetchSessions).toHaveBeenCalledTimes(3);
  });

  it('asks again at most every SESSIONS_REFETCH_MS while sessions outside keep changing', async () => {
    vi.useFakeTimers();
    try {
      const fetchSessions = vi.fn(async () => [mine, other]);
      const tree = new CheckpointTree(vi.fn(async () => []), undefined, fetchSessions);
      const fired = vi.fn();
      tree.onDidChangeTreeData(fired);
      tree.setState({ phase: 'running', status: lean({ others_version: 'v0' }) });
      await tree.getChildren();
      for (let n = 1; n <= 5; n++) {
        await vi.advanceTimersByTimeAsync(1000);
        tree.setState({ phase: 'running', status: lean({ others_version: `v${n}` }) });
        expect(ids(await tree.getChildren())).toEqual(['mine', 'other']); // the last list meanwhile
      }
      expect(fetchSessions).toHaveBeenCalledTimes(1);
      const redraws = fired.mock.calls.length;
      await vi.advanceTimersByTimeAsync(SESSIONS_REFETCH_MS);
      expect(fired.mock.calls.length).toBe(redraws + 1); // the panel redraws once the wait is over...
      await tree.getChildren();
      expect(fetchSessions).toHaveBeenCalledTimes(2); // ...and then asks for the list that changed
      tree.dispose();
    } finally {
      vi.useRealTimers();
    }
  });

  it('asks for nothing when the status holds every session', async () => {
    const fetchSessions = vi.fn(async () => [mine]);
    const tree = new CheckpointTree(vi.fn(async () => []), undefined, fetchSessions);
    tree.setState({ phase: 'running', status: status({ sessions: [mine] }) });
    expect(ids(await tree.getChildren())).toEqual(['mine']);
    expect(fetchSessions).not.toHaveBeenCalled();
  });

  it('shows a failed list above the workspace sessions and asks again next time', async () => {
    const fetchSessions = vi.fn().mockRejectedValueOnce(new Error('boom')).mockResolvedValue([mine, other]);
    const tree = new CheckpointTree(vi.fn(async () => []), undefined, fetchSessions);
    tree.setState({ phase: 'running', status: lean() });
    const failed = await tree.getChildren();
    expect(failed[0]).toMatchObject({ type: 'message', label: 'Could not load the sessions outside this workspace: boom' });
    expect(ids(failed.slice(1))).toEqual(['mine']);
    expect(ids(await tree.getChildren())).toEqual(['mine', 'other']);
    expect(fetchSessions).toHaveBeenCalledTimes(2);
  });
});

describe('supersession chains in the panel', () => {
  const old = item({ id: 'old', statement: 'We use vLLM for serving.', superseded_by: 'new' });
  const newer = item({ id: 'new', statement: 'We moved to SGLang.', supersedes: ['old'], session_id: 'sess-other' });
  const related = new Map([
    ['old', old],
    ['new', newer],
  ]);

  it('renders a superseded item dimmed, with its own icon, naming the newer item, and a context flag', () => {
    const t = toTreeItem({ type: 'item', item: old, related }, NOW);
    expect(t.label).toBe('We use vLLM for serving.');
    expect(t.description).toContain('superseded by “We moved to SGLang.”');
    expect(t.iconPath).toMatchObject({ id: 'history', color: { id: 'disabledForeground' } });
    expect(t.contextValue).toBe('checkpoint.item state-new files source superseded accept dismiss');
    expect(t.tooltip).toContain('Superseded by: “We moved to SGLang.” (new)');
    expect(t.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Collapsed);
  });

  it('the tree looks up only the linked items the session’s list lacks, and shows what it found', async () => {
    const fetch = vi.fn(async (_id: string) => [old]);
    const lookup = vi.fn(async (_ids: string[]) => [newer]);
    const tree = new CheckpointTree(fetch, lookup);
    tree.setState({ phase: 'running', status: status() });
    const [sessionNode] = await tree.getChildren();
    const [group] = await tree.getChildren(sessionNode);
    const [oldNode] = await tree.getChildren(group);
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(lookup).toHaveBeenCalledWith(['new']);
    expect(tree.getTreeItem(oldNode).description).toContain('superseded by “We moved to SGLang.”');
    const [newNode] = await tree.getChildren(oldNode);
    expect(newNode).toMatchObject({ item: { id: 'new' } });
    await tree.getChildren(sessionNode);
    expect(lookup).toHaveBeenCalledTimes(1);
  });

  it('a failed lookup still lists the session’s items, the superseded one naming the id', async () => {
    const tree = new CheckpointTree(async () => [old], async () => Promise.reject(new Error('boom')));
    tree.setState({ phase: 'running', status: status() });
    const [sessionNode] = await tree.getChildren();
    const [group] = await tree.getChildren(sessionNode);
    const [oldNode] = await tree.getChildren(group);
    expect(tree.getTreeItem(oldNode).description).toContain('superseded by item new');
  });
});

describe('the Team node (decisions shared in the repository)', () => {
  const team = session({ id: 'team:/home/dev/proj/.git', agent: 'team', cwd: '/home/dev/proj', turns: 0, captured: 0, pending: 0 });
  const shared = item({ session_id: team.id, origin: 'shared', record: 'docs/decisions/a.md' });
  const local = item({ id: 'item-2', origin: 'local' });

  it('lists the shared items of the team session’s workspace, fetched again when the item counts change', async () => {
    const fetchItems = vi.fn(async () => [local]);
    const fetchTeamItems = vi.fn(async () => [shared, local]);
    const tree = new CheckpointTree(fetchItems, undefined, undefined, fetchTeamItems);
    tree.setState({ phase: 'running', status: status({ sessions: [session(), team] }) });
    const [teamNode, sessionNode] = await tree.getChildren();
    expect([teamNode.type, sessionNode.type]).toEqual(['team', 'session']);
    expect(tree.getTreeItem(teamNode).label).toBe('Team');

    const [only] = await tree.getChildren(teamNode);
    expect(only).toEqual<Node>({ type: 'item', item: shared, related: new Map([[shared.id, shared], [local.id, local]]), team: team.id });
    expect(fetchTeamItems).toHaveBeenCalledWith(team);
    expect(fetchItems).not.toHaveBeenCalled();
    await tree.getChildren(teamNode);
    expect(fetchTeamItems).toHaveBeenCalledTimes(1); // reused while nothing changed

    tree.setState({ phase: 'running', status: status({ sessions: [session(), team], items: { by_kind: { decision: 1 }, by_state: { new: 1 } } }) });
    const [again] = await tree.getChildren();
    await tree.getChildren(again);
    expect(fetchTeamItems).toHaveBeenCalledTimes(2);
  });
});

describe('expansion kept across a reload of the window', () => {
  /** workspaceState as VS Code keeps it: what one window stored, the next one reads. */
  function memory(): Memory & { saved: Map<string, unknown> } {
    const saved = new Map<string, unknown>();
    return {
      saved,
      get: <T>(key: string) => saved.get(key) as T | undefined,
      update: async (key: string, value: unknown) => void saved.set(key, JSON.parse(JSON.stringify(value))),
    };
  }

  it('a row the user opened starts open in the next window, one closed starts closed; a leaf stays a leaf', async () => {
    const kept = memory();
    const first = new CheckpointTree(vi.fn(async () => [item()]), undefined, undefined, undefined, kept);
    first.setState({ phase: 'running', status: status() });
    const [sessionNode] = await first.getChildren();
    const [group] = await first.getChildren(sessionNode);
    expect(first.getTreeItem(sessionNode).collapsibleState).toBe(vscode.TreeItemCollapsibleState.Collapsed);
    first.expanded(sessionNode, true);
    first.expanded(group, false);

    // A reload: a new tree over the same workspace state, the same rows (same ids) from a new status.
    const next = new CheckpointTree(vi.fn(async () => [item()]), undefined, undefined, undefined, kept);
    next.setState({ phase: 'running', status: status({ sessions: [session({ captured: 31, pending: 9 })] }) });
    const [again] = await next.getChildren();
    const [groupAgain] = await next.getChildren(again);
    expect(next.getTreeItem(again).collapsibleState).toBe(vscode.TreeItemCollapsibleState.Expanded);
    expect(next.getTreeItem(groupAgain).collapsibleState).toBe(vscode.TreeItemCollapsibleState.Collapsed);
    const [leaf] = await next.getChildren(groupAgain);
    next.expanded(leaf, true);
    expect(next.getTreeItem(leaf).collapsibleState).toBe(vscode.TreeItemCollapsibleState.None);
  });

  it('remembers a bounded number of rows, the latest toggled', () => {
    const kept = memory();
    const expansion = new Expansion(kept, 'k');
    for (let n = 0; n < MAX_REMEMBERED + 10; n++) {
      expansion.record(`session:${n}`, true);
    }
    expansion.record('session:3', false); // toggled again: the newest
    const saved = kept.saved.get('k') as [string, boolean][];
    expect(saved.length).toBe(MAX_REMEMBERED);
    expect(saved.at(-1)).toEqual(['session:3', false]);
    expect(new Expansion(kept, 'k').apply('session:0', 'collapsed')).toBe('collapsed'); // forgotten: the default
    expect(new Expansion(kept, 'k').apply('session:20', 'collapsed')).toBe('expanded');
  });

  it('reads a damaged saved value as nothing remembered', () => {
    const kept = memory();
    kept.saved.set('k', 'not a list');
    expect(new Expansion(kept, 'k').apply('session:1', 'collapsed')).toBe('collapsed');
  });
});
