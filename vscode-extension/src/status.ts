/**
 * The status bar item: a tiny API driven by the daemon's state and its `checkpoint/status`
 * notifications. It says Checkpoint, with its own icon, and counts what matters: decisions and items
 * held for review, then pending and failed turns when there are any; a spinner shows while
 * extracting, and failing chunks or a refused fallback turn it to a warning with the cause in its
 * tooltip, whose counts are the panel's. Clicking it runs Checkpoint Now.
 */

import * as vscode from 'vscode';

import { Commands, STATUS_BAR_ITEM_ID, TEAM_AGENT } from './constants';
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
  /** The accessibility label, when it says more than the text. */
  label?: string;
}

const MAX_CAUSES = 5;
/** Checkpoint's icon in the status bar: a milestone, the codicon closest to "a point kept". */
export const CHECKPOINT_ICON = '$(milestone)';

/** The counts the status item and the panel both show. Pure. */
export function itemCounts(status: Status): { decisions: number; constraints: number; questions: number; review: number } {
  const kinds = status.items.by_kind;
  return {
    decisions: kinds.decision ?? 0,
    constraints: kinds.constraint ?? 0,
    questions: kinds.question ?? 0,
    review: status.items.held ?? 0,
  };
}

/**
 * The sessions the panel lists: the workspace's, or every one in scope "all"; a repository's team
 * session (its decision records) is its Team node, not a session, and is not counted.
 */
export function sessionCount(status: Status): number {
  return status.scope === 'all'
    ? status.sessions_total - (status.team_sessions ?? 0)
    : status.sessions.filter((s) => s.agent !== TEAM_AGENT).length;
}

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
  const counts = itemCounts(status);
  // Checkpoint's own icon and name, then what matters: decisions and what needs review; turns only
  // when some wait or failed.
  const icon = running ? '$(sync~spin)' : problem ? '$(warning)' : CHECKPOINT_ICON;
  const parts = [plural(counts.decisions, 'decision')];
  if (counts.review > 0) {
    parts.push(`${counts.review} to review`);
  }
  if (pending > 0) {
    parts.push(`${pending} pending`);
  }
  if (failed > 0) {
    parts.push(`${failed} failed`);
  }
  const text = `${icon} Checkpoint: ${parts.join(' · ')}`;

  const lines: string[] = [];
  lines.push(
    `Checkpoint: ${plural(counts.decisions, 'decision')}, ${plural(counts.constraints, 'constraint')}, ` +
      `${plural(counts.questions, 'open question')}` +
      (counts.review > 0 ? `; ${counts.review} held for your review (no agent is shown them until accepted).` : '.'),
  );
  lines.push(
    `Turns: ${captured} captured, ${pending} pending, ${failed} failed, of ${plural(turns, 'turn')} in ` +
      `${plural(sessionCount(status), 'session')} ${status.scope === 'all' ? 'in scope' : 'of this workspace'}.`,
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
  return {
    text,
    tooltip: lines.join('\n'),
    look: problem ? 'warning' : 'normal',
    command: Commands.checkpointNow,
    // The screen reader's label keeps the turn counts whatever the text shows.
    label: `${text.replace(/\$\([^)]*\)\s*/g, '')}; turns: ${pending} pending · ${captured} captured · ${failed} failed`,
  };
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
    this.item.accessibilityInformation = p.label ? { label: p.label } : undefined;
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
