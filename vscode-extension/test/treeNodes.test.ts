/**
 * The panel's nodes as plain data (src/treeNodes.ts), tested without VS Code: this file imports no
 * `vscode`, mock or real.
 */
import { describe, expect, it } from 'vitest';

import type { Item, Status } from '../src/protocol';
import {
  chainChildren,
  groupChildren,
  repositoryChildren,
  itemContext,
  nodeView,
  oneLine,
  relativeTime,
  rootNodes,
  sessionChildren,
  teamChildren,
  type Node,
  type NodeView,
} from '../src/treeNodes';
import { item, session, status } from './fixtures';

const NOW = new Date('2026-01-05T13:00:00.000Z');

type ItemNode = Extract<Node, { type: 'item' }>;

const idOf = (n: Node): string => nodeView(n, NOW).id;

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

  it('lists the fetched sessions when none is in the workspace, instead of saying there are none', () => {
    const other = session({ id: 'other', cwd: '/elsewhere', workspace: null });
    const lean = status({ scope: 'all', sessions: [], sessions_total: 1, others_version: 'v1' });
    // Scope "all": under its repository (here its own folder: it is in none the panel knows).
    expect(rootNodes({ phase: 'running', status: lean }, [other])).toEqual([
      { type: 'repository', folder: '/elsewhere', teams: [], sessions: [other] },
    ]);
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

describe('nodeView', () => {
  it('shows a session with title, agent, time, captured/pending/failed counts and why it is stuck', () => {
    const s = session({ failed: 2, causes: ['x'], dropped: { base64_image: { records: 3, chars: 900 } }, problems: 1 });
    expect(nodeView({ type: 'session', session: s }, NOW)).toEqual<NodeView>({
      id: 'session:sess-aaaa-1111',
      label: 'Refactor the parser',
      collapsible: 'collapsed',
      description: 'Claude Code · 3 h ago · 30 captured · 10 pending · 2 failed',
      tooltip: [
        'Refactor the parser',
        'Claude Code session, last turn 3 h ago',
        'Folder: /home/dev/proj',
        '40 turns: 30 captured, 10 pending, 2 failed.',
        'Failing: x',
        'Not sent, by policy: base64_image 3 records',
        '1 transcript lines could not be read.',
        'Session sess-aaaa-1111',
      ].join('\n'),
      icon: { id: 'warning' },
      contextValue: 'checkpoint.session',
    });
  });

  it('marks a session with pending turns as waiting and a finished one as passed', () => {
    expect(nodeView({ type: 'session', session: session() }, NOW).icon).toEqual({ id: 'clock' });
    expect(nodeView({ type: 'session', session: session({ pending: 0, captured: 40 }) }, NOW).icon).toEqual({ id: 'pass' });
  });

  it('falls back to the folder name, then the id, for an untitled session', () => {
    expect(nodeView({ type: 'session', session: session({ title: null }) }).label).toBe('proj');
    expect(nodeView({ type: 'session', session: session({ title: null, cwd: null }) }).label).toBe('sess-aaaa-11');
  });

  it('shows a message with its detail as description and tooltip, and its command', () => {
    const node: Node = { type: 'message', id: 'm', label: 'Not running.', detail: 'ENOENT', icon: 'error', command: 'checkpoint.showLog' };
    expect(nodeView(node)).toEqual<NodeView>({
      id: 'm',
      label: 'Not running.',
      collapsible: 'none',
      description: 'ENOENT',
      tooltip: 'Not running.\nENOENT',
      icon: { id: 'error' },
      contextValue: 'checkpoint.message',
      command: { command: 'checkpoint.showLog', title: 'Not running.' },
    });
    expect(nodeView({ type: 'message', id: 'w', label: 'Waiting…', icon: 'loading~spin' })).toEqual<NodeView>({
      id: 'w',
      label: 'Waiting…',
      collapsible: 'none',
      icon: { id: 'loading~spin' },
      contextValue: 'checkpoint.message',
    });
  });

  it('shows a failing cause on one line, whole in its tooltip', () => {
    expect(nodeView({ type: 'cause', sessionId: 's', text: 'rate\nlimited', index: 1 })).toEqual<NodeView>({
      id: 'cause:s:1',
      label: 'Failing: rate limited',
      collapsible: 'none',
      tooltip: 'rate\nlimited',
      icon: { id: 'warning' },
      contextValue: 'checkpoint.cause',
    });
  });

  it('shows a kind group with its count, expanded', () => {
    expect(nodeView({ type: 'group', sessionId: 's', kind: 'question', items: [item(), item()] })).toEqual<NodeView>({
      id: 'group:s:question',
      label: 'Open questions',
      collapsible: 'expanded',
      description: '2',
      icon: { id: 'question' },
      contextValue: 'checkpoint.group question',
    });
  });

  it('shows an item’s statement as plain text on one line, and clicks through to its code', () => {
    const node: Node = {
      type: 'item',
      item: item({ statement: '<script>alert(1)</script>\n**bold** [x](command:evil)', files: ['/a/b.py', '/a/c.py'] }),
    };
    expect(nodeView(node, NOW)).toEqual<NodeView>({
      id: 'item:item-1',
      label: '<script>alert(1)</script> **bold** [x](command:evil)',
      collapsible: 'none',
      description: 'b.py +1',
      tooltip: [
        'Decision: <script>alert(1)</script>\n**bold** [x](command:evil)',
        'Why: One file, transactions.',
        'Files: /a/b.py, /a/c.py',
        'Said in a session, 3 h ago (“Refactor the parser”)',
        'State: new · extractor heuristic · confidence 0.8',
      ].join('\n'),
      icon: { id: 'milestone' },
      contextValue: 'checkpoint.item state-new files source accept dismiss',
      command: { command: 'checkpoint.goToCode', title: 'Go to Code', arguments: [node] },
    });
  });

  it('opens the turn on click when the item names no files, and shows its state, keeping its kind’s icon', () => {
    const node: Node = { type: 'item', item: item({ files: [], state: 'accepted' }) };
    const view = nodeView(node);
    expect(view.command).toEqual({ command: 'checkpoint.openTurn', title: 'Open Turn', arguments: [node] });
    expect(view.description).toBe('accepted');
    expect(view.icon).toEqual({ id: 'milestone' });
    // No Accept on an accepted item; Dismiss still applies.
    expect(view.contextValue).toBe('checkpoint.item state-accepted source dismiss');
  });

  it('gives an item with neither files nor a source no click, and an empty description', () => {
    const view = nodeView({ type: 'item', item: item({ files: [], sources: [] }) });
    expect(view.command).toBeUndefined();
    expect(view.description).toBe('');
  });
});

describe('items held for review', () => {
  it('marks a held item in its description and tooltip until it is accepted', () => {
    const held = nodeView({ type: 'item', item: item({ held: true }) }, NOW);
    expect(held.description).toBe('needs review: decision · store.py');
    expect(held.icon).toEqual({ id: 'shield', color: 'list.warningForeground' });
    expect(held.tooltip).toContain('Held for review: it reads as an instruction planted for an agent');
    const accepted = nodeView({ type: 'item', item: item({ held: true, state: 'accepted' }) }, NOW);
    expect(accepted.description).toBe('accepted · store.py');
    expect(accepted.tooltip).not.toContain('Held for review');
    expect(accepted.icon).toEqual({ id: 'milestone' });
  });

  it('lists held items first, in a "Needs review" group of their own', () => {
    const s = session({ id: 'sess-1' });
    const groups = sessionChildren(s, [item({ id: 'a', session_id: 'sess-1' }), item({ id: 'h', session_id: 'sess-1', held: true, kind: 'constraint' })]);
    expect(groups.map((g) => (g.type === 'group' ? [g.kind, g.items.map((i) => i.id)] : g.type))).toEqual([
      ['review', ['h']],
      ['decision', ['a']],
    ]);
    expect(nodeView(groups[0]).label).toBe('Needs review');
  });
});

describe('helpers', () => {
  it('itemContext lists state, files and source flags', () => {
    expect(itemContext(item({ files: [], sources: [] , state: 'dismissed' }))).toBe('checkpoint.item state-dismissed accept');
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

describe('supersession chains in the panel', () => {
  const old = item({ id: 'old', statement: 'We use vLLM for serving.', superseded_by: 'new' });
  const newer = item({ id: 'new', statement: 'We moved to SGLang.', supersedes: ['old'], session_id: 'sess-other' });
  const related = new Map([
    ['old', old],
    ['new', newer],
  ]);

  it('shows a superseded item dimmed, with its own icon, naming the newer item, and a context flag', () => {
    const view = nodeView({ type: 'item', item: old, related }, NOW);
    expect(view.label).toBe('We use vLLM for serving.');
    expect(view.description).toBe('superseded by “We moved to SGLang.” · store.py');
    expect(view.icon).toEqual({ id: 'history', color: 'disabledForeground' });
    expect(view.contextValue).toBe('checkpoint.item state-new files source superseded accept dismiss');
    expect(view.tooltip).toContain('Superseded by: “We moved to SGLang.” (new)');
    expect(view.collapsible).toBe('collapsed');
  });

  it('names the newer item by id when it could not be looked up, and is then not expandable', () => {
    const view = nodeView({ type: 'item', item: old, related: new Map([['old', old]]) }, NOW);
    expect(view.description).toBe('superseded by item new · store.py');
    expect(view.collapsible).toBe('none');
  });

  it('a current item is not marked; one that replaced others says how many', () => {
    const current = nodeView({ type: 'item', item: item() }, NOW);
    expect(current.contextValue).not.toContain('superseded');
    expect(current.icon).toEqual({ id: 'milestone' });
    const view = nodeView({ type: 'item', item: newer, related }, NOW);
    expect(view.description).toBe('supersedes 1 · store.py');
    expect(view.tooltip).toContain('Supersedes: “We use vLLM for serving.” (old)');
  });

  it('expands to the newer item, which expands onward only (never back to where it came from)', () => {
    const [next] = chainChildren({ type: 'item', item: old, related });
    expect(next).toEqual({ type: 'item', item: newer, related, chain: { parentId: 'item:old', direction: 'newer' } });
    const view = nodeView(next, NOW);
    expect(view.id).toBe('item:old>newer:new');
    expect(view.description).toBe('→ replaced it · store.py');
    expect(view.command?.command).toBe('checkpoint.goToCode');
    expect(chainChildren(next as ItemNode)).toEqual([]);
    const [back] = chainChildren({ type: 'item', item: newer, related });
    expect(back).toEqual({ type: 'item', item: old, related, chain: { parentId: 'item:new', direction: 'older' } });
    expect(nodeView(back, NOW).description).toBe('← replaced by it · superseded by “We moved to SGLang.” · store.py');
    expect(chainChildren(back as ItemNode)).toEqual([]);
  });

  it('follows a longer chain to its end, one step per level', () => {
    const a = item({ id: 'a', superseded_by: 'c' });
    const b = item({ id: 'b', superseded_by: 'c', supersedes: ['a'] });
    const c = item({ id: 'c', supersedes: ['b'] });
    // superseded_by names the newest; the chain a -> b -> c is walked through `supersedes` back from c.
    const chain = new Map([['a', a], ['b', b], ['c', c]]);
    const [fromC] = chainChildren({ type: 'item', item: c, related: chain });
    expect(fromC).toMatchObject({ item: { id: 'b' } });
    const [fromB] = chainChildren(fromC as ItemNode);
    expect(fromB).toMatchObject({ item: { id: 'a' } });
    expect(nodeView(fromB, NOW).id).toBe('item:c>older:b>older:a');
  });
});

describe('the Team node: decisions shared in the repository', () => {
  const team = session({
    id: 'team:/home/dev/proj/.git',
    agent: 'team',
    title: 'Decisions shared in the repository',
    cwd: '/home/dev/proj',
    turns: 0,
    captured: 0,
    pending: 0,
    last_ts: null,
  });
  const problem = {
    path: '/home/dev/proj/docs/decisions/bad.md',
    line: 4,
    message: "id: expected Checkpoint's item id (hexadecimal), got 'zz'",
    session_id: team.id,
  };
  const record = 'docs/decisions/2026-01-05-we-ll-use-sqlite-item-1.md';
  const shared = item({ session_id: team.id, origin: 'shared', record, extractor: 'shared', sources: [], shared_by: 'Alice' });
  const local = item({ id: 'item-2', statement: 'Said here, not shared.', origin: 'local' });
  const sharedHere = item({ id: 'item-3', statement: 'Said here and shared.', origin: 'shared', record: 'docs/decisions/b.md' });
  const teamNode = { type: 'team' as const, session: team, problems: [problem] };

  it('stands for the team session, above the sessions, with the records that cannot be read', () => {
    const other = { ...problem, path: '/x/s.jsonl', session_id: 'sess-aaaa-1111' };
    const nodes = rootNodes({ phase: 'running', status: status({ sessions: [session(), team], problems: [problem, other] }) });
    expect(nodes).toEqual<Node[]>([teamNode, { type: 'session', session: session() }]);
  });

  it('is shown as "Team" with the repository’s folder, and says how sharing works', () => {
    expect(nodeView({ ...teamNode, problems: [] })).toEqual<NodeView>({
      id: 'team:team:/home/dev/proj/.git',
      label: 'Team',
      collapsible: 'collapsed',
      description: 'proj',
      tooltip: [
        'Decisions shared with the team in the repository /home/dev/proj: its decision records.',
        'Share with the Team writes a record; commit and push it. A pull brings your team’s.',
      ].join('\n'),
      icon: { id: 'organization' },
      contextValue: 'checkpoint.team',
    });
    expect(nodeView(teamNode)).toEqual<NodeView>({
      ...nodeView({ ...teamNode, problems: [] }),
      tooltip: [
        'Decisions shared with the team in the repository /home/dev/proj: its decision records.',
        'Share with the Team writes a record; commit and push it. A pull brings your team’s.',
        '1 record cannot be read.',
      ].join('\n'),
      icon: { id: 'warning' },
    });
  });

  it('lists the unreadable records, then the shared items only, dismissed ones left out', () => {
    const dismissed = item({ id: 'item-4', origin: 'shared', record: 'docs/decisions/c.md', state: 'dismissed' });
    const related = new Map([[shared.id, shared]]);
    expect(teamChildren(teamNode, [shared, local, sharedHere, dismissed], related)).toEqual<Node[]>([
      { type: 'recordProblem', sessionId: team.id, problem },
      { type: 'item', item: shared, related, team: team.id },
      { type: 'item', item: sharedHere, related, team: team.id },
    ]);
  });

  it('says when nothing is shared, and when the items could not be loaded', () => {
    expect(teamChildren({ ...teamNode, problems: [] }, [local])).toEqual<Node[]>([
      {
        type: 'message',
        id: `msg:no-shared:${team.id}`,
        label: 'No decision is shared in this repository.',
        detail: 'Share with the Team writes one; commit and push it.',
        icon: 'info',
      },
    ]);
    expect(teamChildren({ ...teamNode, problems: [] }, new Error('timeout'))).toEqual<Node[]>([
      {
        type: 'message',
        id: `msg:items-error:${team.id}`,
        label: 'Could not load the shared decisions: timeout',
        icon: 'error',
        command: 'checkpoint.showLog',
      },
    ]);
  });

  it('shows an unreadable record with its file and line', () => {
    const node: Node = { type: 'recordProblem', sessionId: team.id, problem };
    // Its path relative to the workspace folder; a click opens the record at the line.
    expect(nodeView(node, NOW, { roots: ['/home/dev/proj'], home: '/home/dev' })).toEqual<NodeView>({
      id: `record-problem:${team.id}:${problem.path}:4`,
      label: 'Cannot be read: bad.md:4',
      collapsible: 'none',
      description: problem.message,
      tooltip: `docs/decisions/bad.md:4: ${problem.message}\nClick to open the record at that line.`,
      icon: { id: 'warning' },
      contextValue: 'checkpoint.recordProblem',
      command: { command: 'checkpoint.openProblemFile', title: 'Open the Record', arguments: [node] },
    });
  });

  it('shows a shared item with its record, without "Share with the Team", under an id of its own', () => {
    const node: Node = { type: 'item', item: shared, team: team.id };
    // Who shared it and when (the record's date) in its description; paths relative to the workspace.
    expect(nodeView(node, NOW, { roots: ['/home/dev/proj'], home: '/home/dev' })).toEqual<NodeView>({
      id: `team:${team.id}>item:item-1`,
      label: "We'll use SQLite for the store.",
      collapsible: 'none',
      description: 'Alice · 3 h ago · store.py',
      tooltip: [
        "Decision: We'll use SQLite for the store.",
        'Why: One file, transactions.',
        'Files: src/store.py',
        'Shared by Alice, 3 h ago',
        `Decision record: ${record}`,
        'State: new · extractor shared · confidence 0.8',
      ].join('\n'),
      icon: { id: 'milestone' },
      contextValue: 'checkpoint.item state-new files shared record accept dismiss',
      command: { command: 'checkpoint.goToCode', title: 'Go to Code', arguments: [node] },
    });
  });

  it('marks a shared item listed under the session that said it', () => {
    const view = nodeView({ type: 'item', item: sharedHere });
    expect([view.id, view.description, view.contextValue]).toEqual([
      'item:item-3',
      'shared · store.py',
      'checkpoint.item state-new files source shared record accept dismiss',
    ]);
    expect(nodeView({ type: 'item', item: local }).contextValue).toBe('checkpoint.item state-new files source accept dismiss');
  });
});

describe('scope "all": grouped by repository', () => {
  const team = session({ id: 'team:/home/dev/app/.git', agent: 'team', title: null, cwd: '/home/dev/app', turns: 0, captured: 0, pending: 0, last_ts: null });
  const inRepo = session({ id: 'a', cwd: '/home/dev/app/src', repository: '/home/dev/app', workspace: null, last_ts: '2026-01-05T12:00:00Z' });
  const underTeam = session({ id: 'b', cwd: '/home/dev/app/docs', workspace: null, last_ts: '2026-01-05T09:00:00Z' });
  const inWorkspace = session({ id: 'c', cwd: '/home/dev/proj/sub', workspace: 'file:///home/dev/proj', last_ts: '2026-01-05T11:00:00Z' });
  const loose = session({ id: 'd', cwd: '/tmp/scratch', workspace: null, last_ts: '2026-01-04T11:00:00Z' });
  const all = status({ scope: 'all', sessions: [inWorkspace], sessions_total: 5, others_version: 'v1' });
  const roots = (): Node[] => rootNodes({ phase: 'running', status: all }, [team, inRepo, underTeam, inWorkspace, loose]);

  it('puts a repository node above its Team node and its sessions, the newest repository first', () => {
    const nodes = roots();
    expect(nodes.map((n) => (n.type === 'repository' ? [n.folder, ...repositoryChildren(n).map(idOf)] : n.type))).toEqual([
      // the daemon's repository, or the Team folder holding the session's folder
      ['/home/dev/app', 'team:team:/home/dev/app/.git', 'session:a', 'session:b'],
      // the workspace folder holding it
      ['/home/dev/proj', 'session:c'],
      // in no repository the panel knows: its own folder
      ['/tmp/scratch', 'session:d'],
    ]);
  });

  it('shows a repository by its folder’s name, with its sessions counted, expanded, with its own id', () => {
    const [app] = roots();
    const view = nodeView(app, NOW, { roots: ['/home/dev/proj'], home: '/home/dev' });
    expect(view).toMatchObject({
      id: 'repo:/home/dev/app',
      label: 'app',
      collapsible: 'expanded',
      description: '2 sessions · shared decisions',
      icon: { id: 'repo' },
      contextValue: 'checkpoint.repository',
    });
    expect(view.tooltip).toBe('Repository ~/app\n2 agent sessions, the latest 1 h ago\nIts team’s shared decisions are under Team.');
  });

  it('keeps the workspace scope flat: Team nodes, then sessions', () => {
    const nodes = rootNodes({ phase: 'running', status: status({ sessions: [inWorkspace, { ...team, workspace: 'file:///home/dev/proj' }] }) });
    expect(nodes.map(idOf)).toEqual(['team:team:/home/dev/app/.git', 'session:c']);
  });

  it('takes the repository from the fetched copy of a session the status holds too', () => {
    const fresh = session({ ...inRepo, pending: 1, repository: undefined });
    const nodes = rootNodes({ phase: 'running', status: status({ scope: 'all', sessions: [fresh], sessions_total: 2 }) }, [inRepo, loose]);
    expect(nodes[0]).toMatchObject({ type: 'repository', folder: '/home/dev/app', sessions: [{ id: 'a', pending: 1 }] });
  });
});

describe('row ids', () => {
  /** Every node of a tree, depth first, its items' children from the lists given. */
  function walk(nodes: Node[], items: Item[]): Node[] {
    return nodes.flatMap((n) => {
      const children =
        n.type === 'repository'
          ? repositoryChildren(n)
          : n.type === 'session'
            ? sessionChildren(n.session, items)
            : n.type === 'team'
              ? teamChildren(n, items)
              : n.type === 'group'
                ? groupChildren(n)
                : [];
      return [n, ...walk(children, items)];
    });
  }
  const team = session({ id: 'team:/home/dev/proj/.git', agent: 'team', title: null, cwd: '/home/dev/proj', turns: 0, captured: 0, pending: 0, last_ts: null });
  const mine = session({ id: 's1', repository: '/home/dev/proj' });
  const items = [
    item({ id: 'i1', session_id: 's1' }),
    item({ id: 'i2', session_id: 's1', held: true, kind: 'constraint' }),
    item({ id: 'i3', session_id: 's1', origin: 'shared', record: 'docs/decisions/x.md' }),
  ];
  const ids = (st: Status, list: Item[]): string[] => walk(rootNodes({ phase: 'running', status: st }, [mine, team]), list).map(idOf);

  it('are unique in the whole tree, a shared item under Team and under its session too', () => {
    const all = ids(status({ scope: 'all', sessions: [mine, team], sessions_total: 3 }), items);
    expect(new Set(all).size).toBe(all.length);
    expect(all).toContain('item:i3');
    expect(all).toContain('team:team:/home/dev/proj/.git>item:i3');
  });

  it('stay the same across refreshes with new counts, so VS Code keeps what was expanded', () => {
    const before = ids(status({ scope: 'all', sessions: [mine, team], sessions_total: 3 }), items);
    const grown = session({ ...mine, captured: 35, pending: 5, last_ts: '2026-01-05T12:30:00Z' });
    const after = walk(rootNodes({ phase: 'running', status: status({ scope: 'all', sessions: [grown, team], sessions_total: 3 }) }, [grown, team]), items).map(idOf);
    expect(after).toEqual(before);
  });

  it('keep an item’s id when accepting moves it out of "Needs review"', () => {
    const st = status({ sessions: [mine] });
    const before = ids(st, items);
    const after = ids(st, items.map((i) => (i.id === 'i2' ? { ...i, state: 'accepted' as const, accepted_here: true } : i)));
    expect(before).toContain('group:s1:review');
    expect(after).not.toContain('group:s1:review');
    expect(before.filter((id) => id.startsWith('item:'))).toEqual(expect.arrayContaining(after.filter((id) => id.startsWith('item:'))));
    expect(after).toContain('item:i2');
  });
});

describe('Team rows', () => {
  it('say who shared and when; a held one first, marked, with Accept even when the record says accepted', () => {
    const team = session({ id: 'team:/home/dev/proj/.git', agent: 'team', cwd: '/home/dev/proj' });
    const byAlice = item({ id: 'x', origin: 'shared', record: 'docs/decisions/x.md', shared_by: 'Alice', state: 'accepted', accepted_here: false });
    const planted = item({ id: 'y', origin: 'shared', record: 'docs/decisions/y.md', shared_by: null, held: true, state: 'accepted', accepted_here: false });
    const rows = teamChildren({ type: 'team', session: team, problems: [] }, [byAlice, planted]);
    expect(rows.map(idOf)).toEqual(['team:team:/home/dev/proj/.git>item:y', 'team:team:/home/dev/proj/.git>item:x']);
    const [heldView, aliceView] = rows.map((r) => nodeView(r, NOW));
    expect(aliceView.description).toBe('Alice · 3 h ago · accepted in the record · store.py');
    expect(aliceView.contextValue).not.toMatch(/\baccept\b/);
    expect(heldView.description).toBe('needs review: decision · 3 h ago · accepted in the record · store.py');
    expect(heldView.icon).toEqual({ id: 'shield', color: 'list.warningForeground' });
    expect(heldView.contextValue).toMatch(/\baccept\b.*\bdismiss\b/);
    expect(aliceView.tooltip).toContain('State: accepted in the record, not by you');
  });
});
