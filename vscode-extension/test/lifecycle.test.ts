import { describe, expect, it } from 'vitest';

import { RestartQueue } from '../src/lifecycle';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('RestartQueue', () => {
  it('runs one restart at a time and collapses requests made meanwhile into one more', async () => {
    const gates: { resolve: () => void }[] = [];
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const queue = new RestartQueue(async () => {
      runs += 1;
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      const gate = deferred();
      gates.push(gate);
      await gate.promise;
      running -= 1;
    });

    const first = queue.request();
    await Promise.resolve();
    expect(queue.busy).toBe(true);
    const second = queue.request();
    const third = queue.request();
    const fourth = queue.request();
    expect(third).toBe(second);
    expect(fourth).toBe(second);
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(1);

    gates[0].resolve();
    await first;
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(2);
    gates[1].resolve();
    await second;
    expect(runs).toBe(2);
    expect(maxRunning).toBe(1);
    expect(queue.busy).toBe(false);
  });

  it('runs the queued restart even when the one before it failed, and reports each failure to its caller', async () => {
    let n = 0;
    const queue = new RestartQueue(async () => {
      n += 1;
      if (n === 1) {
        throw new Error('first failed');
      }
    });
    const first = queue.request();
    const second = queue.request();
    await expect(first).rejects.toThrow('first failed');
    await expect(second).resolves.toBeUndefined();
    expect(n).toBe(2);
  });

  it('starts afresh once idle', async () => {
    let n = 0;
    const queue = new RestartQueue(async () => {
      n += 1;
    });
    await queue.request();
    await queue.request();
    expect(n).toBe(2);
  });
});
