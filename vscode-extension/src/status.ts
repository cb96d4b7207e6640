/**
 * The status bar item: a tiny API driven by the daemon's state and its `checkpoint/status`
 * notifications. Pending is always visible: the text names pending and captured counts, a spinner
 * shows while extracting, and failing chunks or a refused fallback turn the item to a warning with
 * the cause in its tooltip. Clicking it runs Checkpoint Now.
 */

import * as vscode from 'vscode';

import { Commands, STATUS_BAR_ITEM_ID } from './constants';
import type { Status } from './protocol';

export type DaemonPhase = 'starting' | 'running' | 'stopped' | 'failed';

/** Everything the surfaces show, in one value. */
export interface ViewState {
  phase: DaemonPhase;
  /** Why the daemon is not running (phase "failed"). */
  error?: string;
  /** The last `checkpoint/status` the daemon sent. */
  status?: Status;
  /** A Checkpoint Now request from this window is in flight. */
  busy?: boolean;
}

export interface StatusPresentation {
  text: string;
  tooltip: string;
  /** 'warning' and 'error' map to the theme's status bar warning / error backgrounds. */
  look: 'normal' | 'warning' | 'error';
  command: string;
}

const MAX_CAUSES = 5;

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Why something is stuck, across all sessions: failing-chunk causes, a paused budget, the last error. */
export function stuckCauses(status: Status): string[] {
  const causes: string[] = [];
  const add = (label: string, cause: string): void => {
    const line = `${label}: ${cause}`;
    if (!causes.includes(line)) {
      causes.push(line);
    }
  };
  for (const session of status.sessions) {
    for (const cause of session.causes ?? []) {
      add(session.title || session.cwd || session.id, cause);
    }
  }
  // Sessions outside the workspace are not in the status, but their causes are.
  for (const other of status.other_causes ?? []) {
    add(other.title || other.cwd || other.session_id, other.cause);
  }
  for (const failure of status.last_run?.failures ?? []) {
    const line = failure.session_id ? `${failure.session_id}: ${failure.cause}` : failure.cause;
    if (!causes.some((c) => c.endsWith(failure.cause))) {
      causes.push(line);
    }
  }
  return causes;
}

/** The status item's look for a state; pure, so every state is unit-tested. */
export function renderStatus(state: ViewState): StatusPresentation {
  if (state.phase === 'failed') {
    return {
      text: '$(error) Checkpoint: daemon not running',
      tooltip: `The Checkpoint daemon is not running: ${state.error ?? 'unknown cause'}.\nClick to see how to start it.`,
      look: 'error',
      command: Commands.checkpointNow,
    };
  }
  if (state.phase === 'stopped') {
    return {
      text: '$(circle-slash) Checkpoint: stopped',
      tooltip: 'The Checkpoint daemon is stopped. Click to start it and checkpoint now.',
      look: 'warning',
      command: Commands.checkpointNow,
    };
  }
  const status = state.status;
  if (state.phase === 'starting' || status === undefined) {
    return {
      text: '$(sync~spin) Checkpoint: starting',
      tooltip:
        state.phase === 'starting'
          ? 'Starting the Checkpoint daemon…'
          : 'The Checkpoint daemon is running; waiting for its first status.',
      look: 'normal',
      command: Commands.checkpointNow,
    };
  }

  const { pending, captured, failed, turns } = status.totals;
  const running = status.running || state.busy === true;
  const causes = stuckCauses(status);
  const problem = failed > 0 || causes.length > 0 || Boolean(status.last_error) || Boolean(status.paused);
  const icon = running ? '$(sync~spin)' : problem ? '$(warning)' : '$(history)';
  let text = `${icon} ${pending} pending · ${captured} captured`;
  if (failed > 0) {
    text += ` · ${failed} failed`;
  }

  const lines: string[] = [];
  lines.push(
    `Checkpoint: ${plural(turns, 'turn')} in ${plural(status.sessions_total, 'session')}: ` +
      `${captured} captured, ${pending} pending, ${failed} failed.`,
  );
  if (running) {
    const progress = status.progress;
    lines.push(
      progress && progress.total > 0
        ? `Extracting: ${progress.done}/${progress.total} chunks.`
        : 'Extracting…',
    );
  }
  if (status.last_error) {
    lines.push(`Last error: ${status.last_error}`);
  }
  if (status.paused) {
    lines.push(`Paused: ${status.paused}`);
  }
  if (status.last_run?.stopped_by) {
    lines.push(`Last run stopped: ${status.last_run.stopped_by}; the rest stays pending.`);
  }
  if (causes.length) {
    lines.push(failed > 0 ? 'Failing:' : 'Causes:');
    for (const cause of causes.slice(0, MAX_CAUSES)) {
      lines.push(`  • ${cause}`);
    }
    if (causes.length > MAX_CAUSES) {
      lines.push(`  … and ${causes.length - MAX_CAUSES} more (Checkpoint: Show Log)`);
    }
  }
  lines.push('Click to checkpoint now.');
  return { text, tooltip: lines.join('\n'), look: problem ? 'warning' : 'normal', command: Commands.checkpointNow };
}

/** Owns the one status bar item. */
export class StatusItem implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem(STATUS_BAR_ITEM_ID, vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Checkpoint';
    this.update({ phase: 'starting' });
    this.item.show();
  }

  update(state: ViewState): void {
    const p = renderStatus(state);
    this.item.text = p.text;
    // A plain string tooltip: shown as text, never rendered as Markdown or HTML.
    this.item.tooltip = p.tooltip;
    this.item.command = p.command;
    this.item.backgroundColor =
      p.look === 'normal'
        ? undefined
        : new vscode.ThemeColor(p.look === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
  }

  dispose(): void {
    this.item.dispose();
  }
}
