/**
 * The workspace's sessions kept from `checkpoint/status` deltas (sessionMirror.ts): applied in
 * order they give the daemon's whole list; a gap asks `checkpoint/workspaceSessions` once, holds the
 * statuses that come meanwhile and applies them after its answer; totals are each message's own.
 */

import { describe, expect, it } from 'vitest';

import type { SessionStatus, Status, StatusMessage, WorkspaceSessionsDelta, WorkspaceSessionsResult } from '../src/protocol';
import { SessionMirror, newestFirst } from '../src/sessionMirror';
import { session, status } from './fixtures';

function message(delta: Partial<WorkspaceSessionsDelta> & { version: number; since: number }, turns = 0): StatusMessage {
  const changed = delta.changed ?? [];
  const sent: StatusMessage & { sessions?: unknown } = {
    ...status(),
    totals: { turns, captured: 0, pending: turns, failed: 0 },
    workspace_sessions: { changed, removed: [], total: 0, ...delta },
  };
  delete sent.sessions;
  return sent;
}

function s(id: string, last: number, turns = 1): SessionStatus {
  return session({ id, turns, last_ts: `2026-01-05T10:00:${String(last).padStart(2, '0')}.000Z` });
}

/** A mirror whose `checkpoint/workspaceSessions` answers are resolved by hand. */
function harness(): {
  mirror: SessionMirror;
  shown: Status[];
  asked: Array<(answer: WorkspaceSessionsResult | Error) => void>;
  errors: unknown[];
} {
  const shown: Status[] = [];
  const asked: Array<(answer: WorkspaceSessionsResult | Error) => void> = [];
  const errors: unknown[] = [];
  const mirror = new SessionMirror({
    fetchAll: () =>
      new Promise((resolve, reject) => {
        asked.push((answer) => (answer instanceof Error ? reject(answer) : resolve(answer)));
      }),
    show: (st) => shown.push(st),
    onError: (err) => errors.push(err),
  });
  return { mirror, shown, asked, errors };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe('SessionMirror', () => {
  it('applies deltas in order to the whole list, newest turn first, the message’s totals kept', () => {
    const { mirror, shown, asked } = harness();
    mirror.receive(message({ version: 1, since: 0, changed: [s('a', 1), s('b', 2)], total: 2 }, 2));
    mirror.receive(message({ version: 2, since: 1, changed: [s('a', 3, 5)], total: 2 }, 6));
    mirror.receive(message({ version: 3, since: 2, changed: [s('c', 2)], removed: ['b'], total: 2 }, 6));
    mirror.receive(message({ version: 3, since: 3, total: 2 }, 7)); // no session changed
    expect(asked).toHaveLength(0);
    expect(shown.map((st) => st.sessions.map((x) => [x.id, x.turns]))).toEqual([
      [['b', 1], ['a', 1]],
      [['a', 5], ['b', 1]],
      [['a', 5], ['c', 1]],
      [['a', 5], ['c', 1]],
    ]);
    expect(shown.map((st) => st.totals.turns)).toEqual([2, 6, 6, 7]);
    expect(shown.every((st) => !('workspace_sessions' in st))).toBe(true);
    expect(mirror.at).toBe(3);
  });

  it('a gap asks for the whole list once, holds what comes meanwhile and applies it after the answer', async () => {
    const { mirror, shown, asked } = harness();
    mirror.receive(message({ version: 1, since: 0, changed: [s('a', 1)], total: 1 }, 1));
    // version 2 was missed: 3 does not follow on from 1
    mirror.receive(message({ version: 3, since: 2, changed: [s('c', 3)], total: 3 }, 3));
    mirror.receive(message({ version: 4, since: 3, changed: [s('a', 4, 2)], total: 3 }, 4));
    expect(asked).toHaveLength(1); // once, not per held message
    // meanwhile: the old list, the newest totals (exact in every status)
    expect(shown.map((st) => [st.totals.turns, st.sessions.map((x) => x.id)])).toEqual([
      [1, ['a']],
      [3, ['a']],
      [4, ['a']],
    ]);
    // the answer is at version 3: message 3 is in it already, message 4 follows on
    asked[0]({ version: 3, sessions: [s('c', 3), s('b', 2), s('a', 1)], total: 3 });
    await settle();
    const last = shown[shown.length - 1];
    expect(last.sessions.map((x) => [x.id, x.turns])).toEqual([['a', 2], ['c', 1], ['b', 1]]);
    expect(last.totals.turns).toBe(4);
    expect(mirror.at).toBe(4);
    mirror.receive(message({ version: 5, since: 4, removed: ['c'], total: 2 }, 4));
    expect(shown[shown.length - 1].sessions.map((x) => x.id)).toEqual(['a', 'b']);
    expect(asked).toHaveLength(1);
  });

  it('a failed answer leaves it out of step: the next status asks again', async () => {
    const { mirror, shown, asked, errors } = harness();
    mirror.receive(message({ version: 2, since: 1, changed: [s('a', 1)], total: 1 }));
    asked[0](new Error('daemon busy'));
    await settle();
    expect(errors).toHaveLength(1);
    expect(shown[0].sessions).toEqual([]);
    mirror.receive(message({ version: 3, since: 2, changed: [s('b', 2)], total: 2 }));
    expect(asked).toHaveLength(2);
    asked[1]({ version: 3, sessions: [s('b', 2), s('a', 1)], total: 2 });
    await settle();
    expect(shown[shown.length - 1].sessions.map((x) => x.id)).toEqual(['b', 'a']);
  });

  it('a delta from nothing (a daemon’s first) replaces the list; reset drops an answer asked for before it', async () => {
    const { mirror, shown, asked } = harness();
    mirror.receive(message({ version: 7, since: 6, changed: [s('old', 1)], total: 1 }));
    expect(asked).toHaveLength(1);
    mirror.reset(); // the daemon restarted
    mirror.receive(message({ version: 1, since: 0, changed: [s('new', 1)], total: 1 }));
    asked[0]({ version: 7, sessions: [s('old', 1)], total: 1 });
    await settle();
    expect(shown[shown.length - 1].sessions.map((x) => x.id)).toEqual(['new']);
    expect(mirror.at).toBe(1);
  });

  it('orders as the daemon does: newest turn first, then by id, no turn last', () => {
    const none = session({ id: 'z', last_ts: null });
    expect(newestFirst([none, s('b', 1), s('a', 1), s('c', 2)]).map((x) => x.id)).toEqual(['c', 'a', 'b', 'z']);
  });
});
