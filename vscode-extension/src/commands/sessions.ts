/**
 * A session's menu in the panel: Open Transcript (its transcript file, at its last line) and Forget
 * (the daemon's checkpoint.forget, as `checkpoint forget` does: asked first, with Undo), and Open the
 * Record at the Problem for a decision record that cannot be read. Checkpoint Now for one session is
 * run.ts's.
 */

import * as vscode from 'vscode';

import { ServerCommands } from '../constants';
import type { ForgetResult, SessionStatus } from '../protocol';
import { plural } from '../rowText';
import { info } from '../toast';
import { sessionLabel, type RecordProblem } from '../treeNodes';
import { UserError, type CommandDeps } from './guard';

/** The session a panel command was invoked on (a session node), or a {@link UserError}. */
export function requireSession(arg: unknown): SessionStatus {
  const node = arg as { type?: unknown; session?: SessionStatus } | undefined;
  if (node?.type === 'session' && node.session && typeof node.session.id === 'string') {
    return node.session;
  }
  throw new UserError('pick a session in the Checkpoint panel first');
}

export async function openSessionTranscript(deps: CommandDeps, arg: unknown): Promise<void> {
  const session = requireSession(arg);
  const { files } = await deps.daemon.transcripts(session.id);
  if (!files.length) {
    throw new UserError(`the transcript of “${sessionLabel(session)}” is no longer on disk`);
  }
  let chosen = files[0];
  if (files.length > 1) {
    const picked = await vscode.window.showQuickPick(
      files.map((f) => ({ label: f.path.split(/[\\/]/).pop() ?? f.path, description: f.path, file: f })),
      { placeHolder: 'Which transcript file? (the latest written first)' },
    );
    if (!picked) {
      return;
    }
    chosen = picked.file;
  }
  const editor = await vscode.window.showTextDocument(vscode.Uri.parse(chosen.uri), { preview: true });
  // Its latest turn is at the end.
  const last = Math.max(0, editor.document.lineCount - 1);
  editor.selection = new vscode.Selection(last, 0, last, 0);
  editor.revealRange(new vscode.Range(last, 0, last, 0));
}

/** The confirmation's words: what forgetting removes and what stays. Pure. */
export function forgetConfirmation(session: SessionStatus): { message: string; detail: string } {
  return {
    message: `Forget the session “${sessionLabel(session)}”?`,
    detail:
      `Checkpoint removes what it stored for it: its ${plural(session.turns, 'turn')} and the items only it said ` +
      '(accepted or not; an item another session said too stays with that one), and reads its transcript no more. ' +
      'The transcript file itself is not touched. Undo reads it in again at the next scan: its items are extracted anew, ' +
      'as new.',
  };
}

export async function forgetSession(deps: CommandDeps, arg: unknown): Promise<void> {
  const session = requireSession(arg);
  const { message, detail } = forgetConfirmation(session);
  const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Forget');
  if (choice !== 'Forget') {
    return;
  }
  const result = (await deps.daemon.executeCommand(ServerCommands.forget, [session.id])) as ForgetResult;
  deps.tree.refresh();
  const removed = result.removed ?? {};
  deps.log.info(`Session ${session.id} forgotten: ${JSON.stringify(removed)}.`);
  const undo = await info(
    `Checkpoint: forgot “${sessionLabel(session)}”: ${plural(removed.turns ?? 0, 'turn')} and ${plural(removed.items ?? 0, 'item')} removed.`,
    'Undo',
  );
  if (undo === 'Undo') {
    await deps.daemon.executeCommand(ServerCommands.forget, [{ session: session.id, undo: true }]);
    deps.log.info(`Session ${session.id} no longer forgotten: read again at the next scan.`);
    void info('Checkpoint: the session is read in again at the next scan.');
  }
}

/** A decision record that cannot be read, opened at the line the daemon names. */
export async function openProblemFile(arg: unknown): Promise<void> {
  const node = arg as { type?: unknown; problem?: RecordProblem } | undefined;
  const problem = node?.type === 'recordProblem' ? node.problem : undefined;
  if (!problem) {
    throw new UserError('pick a record that cannot be read in the Checkpoint panel first');
  }
  const uri = vscode.Uri.file(problem.path);
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    throw new UserError(`${problem.path} is no longer there (${problem.message})`);
  }
  const line = Math.max(0, problem.line - 1);
  await vscode.window.showTextDocument(uri, { preview: true, selection: new vscode.Range(line, 0, line, 0) });
}
