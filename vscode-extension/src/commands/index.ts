/**
 * Palette and panel commands, registered here, each wrapped by {@link guard} so a failure is logged
 * and shown to the user with a Show Log button, never swallowed. One module per concern: run.ts
 * (Checkpoint Now), triage.ts (accept, dismiss, undo), turn.ts (Open Turn, Open Decision Record), navigate.ts (to the code, the transcript, the
 * clipboard), search.ts (Search Decisions), supersede.ts (Mark as Superseded by…, Remove
 * Supersession), share.ts (Share with the Team), sessions.ts (a session's Open Transcript and Forget, a
 * broken record's Open), exportDecisions.ts, apiKey.ts; args.ts reads what a command was invoked on.
 */

import * as vscode from 'vscode';

import { Commands } from '../constants';
import { setApiKey } from './apiKey';
import { exportDecisions } from './exportDecisions';
import { guard, type CommandDeps } from './guard';
import { copyItemMarkdown, goToCode, openTranscript } from './navigate';
import { checkpointNow } from './run';
import { forgetSession, openProblemFile, openSessionTranscript } from './sessions';
import { searchDecisions } from './search';
import { shareWithTeam } from './share';
import { markSuperseded, removeSupersession } from './supersede';
import { acceptItem, dismissItem } from './triage';
import { openRecord, openTurn } from './turn';

export { itemFromArg, resolveItem, sessionIdFromArg } from './args';
export { agentLine, heldConfirmation } from './triage';
export { exportDecisions, isInsideAny } from './exportDecisions';
export { guard, showDaemonError, type CommandDeps, type Daemon } from './guard';
export { openItem, resolveItemFile } from './navigate';
export { searchDecisions, searchPick, searchPicks, SEARCH_DEBOUNCE_MS, SEARCH_HINT } from './search';
export { markSuperseded, removeSupersession } from './supersede';
export { shareWithTeam } from './share';
export { checkpointNow, formatNowResult } from './run';
export { setApiKey } from './apiKey';
export { forgetConfirmation, forgetSession, openProblemFile, openSessionTranscript, requireSession } from './sessions';

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const reg = (id: string, title: string, fn: (...args: unknown[]) => Promise<unknown>): vscode.Disposable =>
    vscode.commands.registerCommand(id, guard(deps, title, fn));
  return [
    reg(Commands.checkpointNow, 'Checkpoint Now', (arg) => checkpointNow(deps, arg)),
    reg(Commands.showLog, 'Show Log', async () => deps.log.show(true)),
    reg(Commands.restartDaemon, 'Restart Daemon', () => deps.daemon.restart()),
    reg(Commands.refresh, 'Refresh', async () => deps.tree.refresh()),
    reg(Commands.exportDecisions, 'Export Decisions', () => exportDecisions(deps)),
    reg(Commands.setApiKey, 'Set API Key', () => setApiKey(deps)),
    reg(Commands.goToCode, 'Go to Code', (arg) => goToCode(arg)),
    reg(Commands.openTranscript, 'Open Transcript', (arg) => openTranscript(arg)),
    reg(Commands.acceptItem, 'Accept', (arg) => acceptItem(deps, arg)),
    reg(Commands.dismissItem, 'Dismiss', (arg) => dismissItem(deps, arg)),
    reg(Commands.copyItemMarkdown, 'Copy as Markdown', (arg) => copyItemMarkdown(arg)),
    reg(Commands.searchDecisions, 'Search Decisions', () => searchDecisions(deps)),
    reg(Commands.markSuperseded, 'Mark as Superseded', (arg) => markSuperseded(deps, arg)),
    reg(Commands.removeSupersession, 'Remove Supersession', (arg) => removeSupersession(deps, arg)),
    reg(Commands.shareWithTeam, 'Share with the Team', (arg) => shareWithTeam(deps, arg)),
    reg(Commands.openTurn, 'Open Turn', (arg) => openTurn(deps, arg)),
    reg(Commands.openRecord, 'Open Decision Record', (arg) => openRecord(deps, arg)),
    reg(Commands.openSessionTranscript, 'Open Transcript', (arg) => openSessionTranscript(deps, arg)),
    reg(Commands.forgetSession, 'Forget Session', (arg) => forgetSession(deps, arg)),
    reg(Commands.openProblemFile, 'Open the Record', (arg) => openProblemFile(arg)),
  ];
}
