/**
 * Wiring only: one log channel, the daemon client, the status bar item, the side panel and the
 * commands, all fed from one {@link ViewState}.
 */

import * as vscode from 'vscode';

import { DaemonClient, type LaunchPlan } from './client';
import { daemonProgram } from './bundled';
import { registerCommands, showDaemonError } from './commands';
import { API_KEY_SECRET, SECTION, TURN_SCHEME, Views } from './constants';
import {
  API_KEY_ENV,
  daemonLaunch,
  describeLaunch,
  initializationOptions,
  needsRestart,
  readSettings,
  agentEnvironment,
  type Settings,
} from './settings';
import { StatusItem, type ViewState } from './status';
import { CheckpointTree } from './tree';
import { OPEN_TRANSCRIPT_LINE, openTranscriptLine, TurnDocuments } from './turnView';

let daemon: DaemonClient | undefined;

function workspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

// A bad value is the daemon's to refuse: it shows a warning naming the setting, once per value.
function currentSettings(): Settings {
  return readSettings(vscode.workspace.getConfiguration(SECTION));
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('Checkpoint', { log: true });
  context.subscriptions.push(log);
  log.info(`Checkpoint extension ${String(context.extension.packageJSON.version)} activating.`);

  let state: ViewState = { phase: 'starting' };
  let lastFailure: string | undefined;
  const status = new StatusItem();
  context.subscriptions.push(status);

  const client = new DaemonClient({
    log,
    plan: async (): Promise<LaunchPlan> => {
      const settings = currentSettings();
      const folder = workspaceFolder();
      const stored = await context.secrets.get(API_KEY_SECRET);
      const apiKey = stored || process.env[API_KEY_ENV] || undefined;
      const launch = daemonLaunch(settings, process.env, apiKey, folder);
      // The bundled daemon unless checkpoint.command says otherwise (bundled.ts); may install it first.
      const program = await daemonProgram(context, [launch.command, ...launch.args], launch.env, log);
      launch.command = program.command;
      launch.args = program.args;
      return {
        launch,
        description: describeLaunch(launch, ['CHECKPOINT_DB', 'CHECKPOINT_SOURCES', 'CHECKPOINT_EXTRACTOR', API_KEY_ENV]),
        initializationOptions: initializationOptions(settings, folder),
        cwd: folder,
      };
    },
    onPhase: (phase, error) => {
      if (phase !== 'failed') {
        lastFailure = undefined;
      }
      update({ ...state, phase, error, status: phase === 'running' ? state.status : undefined });
    },
    onStatus: (s) => update({ ...state, status: s }),
    onFailure: (message) => {
      lastFailure = message;
      void showDaemonError(message, { log, daemon: client });
    },
  });
  daemon = client;

  // A chain can lead to an item of another session, or out of the workspace: looked up among all.
  // (checkpoint/items takes no list of ids, so this asks for every item and keeps the ones named.)
  const tree = new CheckpointTree(
    (session) => client.items({ session }),
    async (ids) => (await client.items({ scope: 'all', state: 'any' })).filter((i) => ids.includes(i.id)),
    async () => (await client.sessions()).sessions,
    // The Team node: the shared items of the team session's workspace folder (said here or not).
    (team) => client.items(team.workspace ? { workspace: team.workspace } : { session: team.id }),
    context.workspaceState,
  );
  context.subscriptions.push(tree);
  const view = vscode.window.createTreeView(Views.sessions, { treeDataProvider: tree, showCollapseAll: true });
  context.subscriptions.push(
    view,
    // Kept in the workspace's state: VS Code does not keep a tree's expansion across a reload.
    view.onDidExpandElement((e) => tree.expanded(e.element, true)),
    view.onDidCollapseElement((e) => tree.expanded(e.element, false)),
  );

  function update(next: ViewState): void {
    state = next;
    status.update(state);
    tree.setState(state);
  }

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(TURN_SCHEME, new TurnDocuments((id) => client.turn(id))),
    // The turn page's link to the raw transcript line (its webview may run this command alone).
    vscode.commands.registerCommand(OPEN_TRANSCRIPT_LINE, async (uri: unknown, line: unknown) => {
      try {
        await openTranscriptLine(uri, line);
      } catch (err) {
        void vscode.window.showErrorMessage(`Checkpoint: ${err instanceof Error ? err.message : String(err)}`);
      }
    }),
    ...registerCommands({
      daemon: client,
      log,
      tree,
      secrets: context.secrets,
      setBusy: (busy) => update({ ...state, busy }),
      lastFailure: () => lastFailure,
    }),
  );

  let settings = currentSettings();
  const applyAgentEnvironment = (current: Settings): void => {
    for (const [name, value] of Object.entries(agentEnvironment(current))) {
      if (value === undefined) {
        context.environmentVariableCollection.delete(name);
      } else {
        context.environmentVariableCollection.replace(name, value);
      }
    }
  };
  applyAgentEnvironment(settings);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration(SECTION)) {
        return;
      }
      const next = currentSettings();
      applyAgentEnvironment(next);
      const restart = needsRestart(settings, next);
      settings = next;
      if (restart) {
        log.info('Settings changed: restarting the daemon.');
        void client.restart();
      } else {
        client.sendSettings(initializationOptions(next, workspaceFolder())).catch((err: unknown) => {
          log.error(`Sending settings to the daemon failed: ${String(err)}`);
        });
      }
    }),
    context.secrets.onDidChange((event) => {
      if (event.key === API_KEY_SECRET) {
        log.info('The stored API key changed: restarting the daemon.');
        void client.restart();
      }
    }),
    { dispose: () => void client.stop() },
  );

  void client.restart();
}

export async function deactivate(): Promise<void> {
  await daemon?.stop();
  daemon = undefined;
}
