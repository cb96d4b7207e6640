/** Checkpoint Now: run the daemon's checkpoint.now, for every session in scope or the one picked. */

import * as vscode from 'vscode';

import { Commands, ServerCommands, Views } from '../constants';
import type { NowResult } from '../protocol';
import { sessionIdFromArg } from './args';
import type { CommandDeps } from './guard';
import { info, warn } from '../toast';

/** The run's own clause: the run layer's sentence (composed here only for a daemon older than it). */
function runClause(result: NowResult): string {
  const { run } = result;
  if (run.sentence) {
    return /[.!?…]$/.test(run.sentence) ? run.sentence : `${run.sentence}.`;
  }
  if (run.tried > 0) {
    const lost = run.lost ? `, ${run.lost} not captured (taken over by another worker)` : '';
    return `${run.tried} chunks tried: ${run.captured} captured, ${run.failed} failed${lost}; ${run.items_added} new items.`;
  }
  // Nothing was sent although turns are pending: never let that read as success.
  return (result.totals?.pending ?? 0) > 0 ? 'no chunk was extracted.' : 'nothing pending to extract.';
}

/** The message after a Checkpoint Now, and whether everything it tried was captured. */
export function formatNowResult(result: unknown): { text: string; ok: boolean } {
  if (typeof result === 'string') {
    return { text: `Checkpoint: ${result}`, ok: true };
  }
  if (result === null || result === undefined) {
    return { text: 'Checkpoint: run finished.', ok: true };
  }
  // Read defensively all the same: an older daemon may send less than protocol.ts declares.
  const r = result as NowResult;
  if (typeof r === 'object' && r.run) {
    const run = r.run;
    const stillPending = r.totals?.pending ?? 0;
    let text = `Checkpoint: ${runClause(r)}`;
    if (r.totals) {
      text += ` Now ${r.totals.pending} turns pending, ${r.totals.captured} captured, ${r.totals.failed} failed.`;
    }
    if (run.stopped_by) {
      text += ` Stopped: ${run.stopped_by}; the rest stays pending.`;
    }
    if (run.failures?.length) {
      text += ` First failure: ${run.failures[0].cause}`;
    }
    const allCaptured = run.failed === 0 && !run.lost && !run.stopped_by;
    return { text, ok: allCaptured && (run.tried > 0 || stillPending === 0) };
  }
  return { text: `Checkpoint: ${JSON.stringify(result).slice(0, 300)}`, ok: true };
}

export async function checkpointNow(deps: CommandDeps, arg?: unknown): Promise<void> {
  const phase = deps.daemon.currentPhase;
  if (phase === 'stopped') {
    await deps.daemon.restart();
  }
  if (deps.daemon.currentPhase === 'starting') {
    void info('Checkpoint: the daemon is still starting; try again in a moment.');
    return;
  }
  const session = sessionIdFromArg(arg);
  deps.setBusy(true);
  let result: unknown;
  try {
    result = await deps.daemon.executeCommand(ServerCommands.now, session ? [session] : []);
  } finally {
    deps.setBusy(false);
  }
  deps.tree.refresh();
  const { text, ok } = formatNowResult(result);
  deps.log.info(text);
  // Each notification carries the action it implies.
  if (ok) {
    void info(text, 'Show Items').then(async (choice) => {
      if (choice === 'Show Items') {
        await vscode.commands.executeCommand(`${Views.sessions}.focus`);
      }
    });
  } else {
    const keyMissing = /API key|ANTHROPIC_API_KEY/i.test(text);
    const choice = await warn(text, ...(keyMissing ? ['Set API Key'] : []), 'Show Log');
    if (choice === 'Show Log') {
      deps.log.show(true);
    } else if (choice === 'Set API Key') {
      await vscode.commands.executeCommand(Commands.setApiKey);
    }
  }
}
