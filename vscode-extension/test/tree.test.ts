import * as vscode from 'vscode';
import { beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';

import {
  CheckpointTree,
  chainChildren,
  ITEMS_TIMEOUT_MS,
  SESSIONS_REFETCH_MS,
  groupChildren,
  itemContext,
  oneLine,
  relativeTime,
  rootNodes,
  sessionChildren,
  toTreeItem,
  type Node,
} from '../src/tree';
import { resetVscodeMock } from './__mocks__/vscode';
import { item, session, status } from './fixtures';

beforeEach(() => resetVscodeMock());

const NOW = new Date('2026-01-05T13:00:00.000Z');

describe('rootNodes', () => {
  it('lists the sessions of a status notification, most recent first', () => {
    const nodes = rootNodes({
      phase: 'running',
      status: status({
        sessions: [
          session({ id: 'old', last_ts: '2026-01-01T00:00:00Z' }),
          session({ id: 'new', last_ts: '2026-01-05T12:00:00Z' }),
          session({ id: 'none', last_ts: null }),
        ],
      }),
    });
    expect(nodes.map((n) => (n.type === 'session' ? n.session.id : n.type))).toEqual(['new', 'old', 'none']);
  });

  it('explains an empty workspace scope and how to widen it', () => {
    const [node] = rootNodes({ phase: 'running', status: status({ sessions: [], scope: 'workspace' }) });
    expect(node).toMatchObject({ type: 'message', label: 'No agent sessions for this workspace yet.' });
    expect(node.type === 'message' && node.detail).toContain('checkpoint.scope');
  });

  it('explains where transcripts are looked for when nothing was found at all', () => {
    const [node] = rootNodes({ phase: 'running', status: status({ sessions: [], scope: 'all' }) });
    expect(node).toMatchObject({ type: 'message', label: 'No agent sessions found yet.' });
    expect(node.type === 'message' && node.detail).toContain('checkpoint.sources');
  });

  it('explains a failed daemon, with its cause, a log link and a restart', () => {
    const nodes = rootNodes({ phase: 'failed', error: 'spawn checkpoint ENOENT' });
    expect(nodes[0]).toMatchObject({ label: 'The Checkpoint daemon is not running.', detail: 'spawn checkpoint ENOENT' });
    expect(nodes.map((n) => n.type === 'message' && n.command)).toEqual([
      'checkpoint.showLog',
      'checkpoint.showLog',
      'checkpoint.restartDaemon',
    ]);
  });

  it('says the daemon is starting, and that it waits for the first status', () => {
    expect(rootNodes({ phase: 'starting' })[0]).toMatchObject({ label: 'Starting the Checkpoint daemon…' });
    expect(rootNodes({ phase: 'running' })[0]).toMatchObject({ label: 'Waiting for the daemon’s first status…' });
  });

  it('puts the last error above the sessions', () => {
    const nodes = rootNodes({ phase: 'running', status: status({ last_error: 'disk full' }) });
    expect(nodes[0]).toMatchObject({ type: 'message', label: 'Last error: disk full' });
    expect(nodes[1].type).toBe('session');
  });
});

describe('sessionChildren', () => {
  const s = session();

  it('groups the session’s items by kind in a fixed order, leaving out dismissed and other sessions’ items', () => {
    const items = [
      item({ id: 'q', kind: 'question', statement: 'Should we shard?' }),
      item({ id: 'd1', kind: 'decision' }),
      item({ id: 'c', kind: 'constraint', statement: 'Must run offline.' }),
      item({ id: 'd2', kind: 'decision', state: 'dismissed' }),
      item({ id: 'other', session_id: 'someone-else' }),
    ];
    const nodes = sessionChildren(s, items);
    expect(nodes.map((n) => n.type === 'group' && [n.kind, n.items.map((i) => i.id)])).toEqual([
      ['decision', ['d1']],
      ['constraint', ['c']],
      ['question', ['q']],
    ]);
    const group = nodes[0] as Extract<Node, { type: 'group' }>;
    expect(groupChildren(group)).toEqual([{ type: 'item', item: items[1] }]);
  });

  it('shows failing causes first', () => {
    const nodes = sessionChildren(session({ causes: ['timeout'] }), [item()]);
    expect(nodes[0]).toEqual({ type: 'cause', sessionId: s.id, text: 'timeout', index: 0 });
  });

  it('explains a session with nothing captured yet', () => {
    const nodes = sessionChildren(session({ captured: 0, pending: 40 }), []);
    expect(nodes).toEqual([
      { type: 'message', id: `msg:no-items:${s.id}`, label: 'Nothing captured yet: 40 turns pending.', icon: 'info' },
    ]);
  });

  it('explains a fully captured session without items', () => {
    const nodes = sessionChildren(session({ pending: 0, captured: 40 }), []);
    expect(nodes[0]).toMatchObject({ label: 'No decisions, constraints or open questions in this session.' });
  });

  it('shows an items request failure under the session', () => {
    const nodes = sessionChildren(s, new Error('request timed out'));
    expect(nodes).toEqual([
      {
        type: 'message',
        id: `msg:items-error:${s.id}`,
        label: 'Could not load items: request timed out',
        icon: 'error',
        command: 'checkpoint.showLog',
      },
    ]);
  });
});

describe('toTreeItem', () => {
  it('renders a session with title, agent, time and captured/pending/failed counts', () => {
    const t = toTreeItem({ type: 'session', session: session({ failed: 2, causes: ['x'] }) }, NOW);
    expect(t.label).toBe('Refactor the parser');
    expect(t.description).toBe('claude · 3 h ago · 30 captured · 10 pending · 2 failed');
    expect(t.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Collapsed);
    expect(t.contextValue).toBe('checkpoint.session');
    expect((t.iconPath as vscode.ThemeIcon).id).toBe('warning');
    expect(t.tooltip).toContain('Failing: x');
  });

  it('falls back to the folder name, then the id, for an untitled session', () => {
    expect(toTreeItem({ type: 'session', session: session({ title: null }) }).label).toBe('proj');
    expect(toTreeItem({ type: 'session', session: session({ title: null, cwd: null }) }).label).toBe('sess-aaaa-11');
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
    expect(t.contextValue).toBe('checkpoint.item state-new files source');
  });

  it('opens the transcript on click when the item names no files, and shows its state', () => {
    const node: Node = { type: 'item', item: item({ files: [], state: 'accepted' }) };
    const t = toTreeItem(node);
    expect(t.command?.command).toBe('checkpoint.openTranscript');
    expect(t.description).toBe('accepted');
    expect(t.contextValue).toBe('checkpoint.item state-accepted source');
  });

  it('gives message nodes their command', () => {
    const t = toTreeItem({ type: 'message', id: 'm', label: 'Show the log', icon: 'output', command: 'checkpoint.showLog' });
    expect(t.command).toEqual({ command: 'checkpoint.showLog', title: 'Show the log' });
  });
});

describe('helpers', () => {
  it('itemContext lists state, files and source flags', () => {
    expect(itemContext(item({ files: [], sources: [] , state: 'dismissed' }))).toBe('checkpoint.item state-dismissed');
  });

  it('oneLine flattens whitespace and truncates', () => {
    expect(oneLine('a\n\n b\tc')).toBe('a b c');
    expect(oneLine('x'.repeat(10), 5)).toBe('xxxx…');
  });

  it('relativeTime reads ISO strings and epoch seconds', () => {
    expect(relativeTime('2026-01-05T12:59:30Z', NOW)).toBe('just now');
    expect(relativeTime('2026-01-05T12:15:00Z', NOW)).toBe('45 min ago');
    expect(relativeTime(NOW.getTime() / 1000 - 2 * 86400, NOW)).toBe('2 d ago');
    expect(relativeTime('2025-06-01T00:00:00Z', NOW)).toBe('2025-06-01');
    expect(relativeTime(null, NOW)).toBe('no time');
  });
});

describe('CheckpointTree', () => {
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
  const ids = (nodes: Node[]): string[] => nodes.map((n) => (n.type === 'session' ? n.session.id : n.type));

  it('asks for the full list when the panel shows it, and again only when others_version changes', async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const fetchSessions = vi.fn(async () => [session({ ...mine, pending: 9 }), other]);
    const tree = new CheckpointTree(vi.fn(async () => []), undefined, fetchSessions);
    tree.setState({ phase: 'running', status: lean() });
    expect(fetchSessions).not.toHaveBeenCalled(); // a status alone asks nothing: the panel asks when it draws

    const nodes = await tree.getChildren();
    expect(nodes).toEqual([
      { type: 'session', session: mine }, // the status's counts, fresher than the list's
      { type: 'session', session: other },
    ]);
    expect(fetchSessions).toHaveBeenCalledTimes(1);

    // Statuses about the workspace's session only: redrawn from the status, nothing asked.
    for (const pending of [3, 2, 1]) {
      tree.setState({ phase: 'running', status: lean({ sessions: [session({ ...mine, pending })] }) });
      const [first] = await tree.getChildren();
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

  it('lists the fetched sessions when none is in the workspace, instead of saying there are none', () => {
    const nodes = rootNodes({ phase: 'running', status: lean({ sessions: [], sessions_total: 1 }) }, [other]);
    expect(ids(nodes)).toEqual(['other']);
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
    expect(t.contextValue).toBe('checkpoint.item state-new files source superseded');
    expect(t.tooltip).toContain('Superseded by: “We moved to SGLang.” (new)');
    expect(t.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Collapsed);
  });

  it('names the newer item by id when it could not be looked up, and is then not expandable', () => {
    const t = toTreeItem({ type: 'item', item: old, related: new Map([['old', old]]) }, NOW);
    expect(t.description).toContain('superseded by item new');
    expect(t.collapsibleState).toBe(vscode.TreeItemCollapsibleState.None);
  });

  it('a current item is not marked; one that replaced others says how many', () => {
    const current = toTreeItem({ type: 'item', item: item() }, NOW);
    expect(current.contextValue).not.toContain('superseded');
    expect(current.iconPath).toMatchObject({ id: 'milestone' });
    const t = toTreeItem({ type: 'item', item: newer, related }, NOW);
    expect(t.description).toContain('supersedes 1');
    expect(t.tooltip).toContain('Supersedes: “We use vLLM for serving.” (old)');
  });

  it('expands to the newer item, which expands onward only (never back to where it came from)', () => {
    const [next] = chainChildren({ type: 'item', item: old, related });
    expect(next).toMatchObject({ type: 'item', item: { id: 'new' }, chain: { direction: 'newer' } });
    const t = toTreeItem(next, NOW);
    expect(t.id).toBe('item:old>newer:new');
    expect(t.description).toContain('→ replaced it');
    expect(t.command?.command).toBe('checkpoint.goToCode');
    expect(chainChildren(next as Extract<Node, { type: 'item' }>)).toEqual([]);
    const [back] = chainChildren({ type: 'item', item: newer, related });
    expect(back).toMatchObject({ item: { id: 'old' }, chain: { direction: 'older' } });
    expect(chainChildren(back as Extract<Node, { type: 'item' }>)).toEqual([]);
  });

  it('follows a longer chain to its end, one step per level', () => {
    const a = item({ id: 'a', superseded_by: 'c' });
    const b = item({ id: 'b', superseded_by: 'c', supersedes: ['a'] });
    const c = item({ id: 'c', supersedes: ['b'] });
    // superseded_by names the newest; the chain a -> b -> c is walked through `supersedes` back from c.
    const chain = new Map([['a', a], ['b', b], ['c', c]]);
    const [fromC] = chainChildren({ type: 'item', item: c, related: chain });
    expect(fromC).toMatchObject({ item: { id: 'b' } });
    const [fromB] = chainChildren(fromC as Extract<Node, { type: 'item' }>);
    expect(fromB).toMatchObject({ item: { id: 'a' } });
    expect(toTreeItem(fromB, NOW).id).toBe('item:c>older:b>older:a');
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
