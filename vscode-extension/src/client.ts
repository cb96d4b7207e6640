/**
 * The daemon's language client: the only module that imports vscode-languageclient.
 *
 * It starts `checkpoint.command` over stdio, reports its phase (starting, running, failed, stopped)
 * and every `checkpoint/status` notification (with the workspace's sessions kept from their deltas,
 * sessionMirror.ts), and carries the extension's requests. Restarts go
 * through a {@link RestartQueue}. A daemon that cannot start or that dies is reported once, with
 * its cause, and never restarted silently in a loop.
 */

import * as readline from 'node:readline';

import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';

import { DaemonNotRunningError, LaunchError, RestartQueue } from './lifecycle';
import { DIAGNOSTIC_SOURCE, EditorCommands, Methods, SERVER_NAME, SettingIds } from './constants';
import {
  itemsOf,
  searchResponseOf,
  sessionsResultOf,
  transcriptsResultOf,
  turnResultOf,
  workspaceSessionsResultOf,
  type Item,
  type ItemsQuery,
  type SearchQuery,
  type SearchResponse,
  type SessionsQuery,
  type SessionsResult,
  type Status,
  type StatusMessage,
  type TranscriptsResult,
  type TurnResult,
} from './protocol';
import { SessionMirror } from './sessionMirror';
import { findExecutable, startFailureMessage, type DaemonLaunch } from './settings';
import type { DaemonPhase } from './status';

export interface LaunchPlan {
  launch: DaemonLaunch;
  /** The launch for the log, secrets replaced. */
  description: string;
  initializationOptions: Record<string, unknown>;
  cwd: string | undefined;
}

export interface DaemonClientOptions {
  log: vscode.LogOutputChannel;
  /** Read settings and secrets anew for each start. */
  plan(): Promise<LaunchPlan>;
  onPhase(phase: DaemonPhase, error?: string): void;
  onStatus(status: Status): void;
  /** Tell the user the daemon is not running, why, and how to fix it. */
  onFailure(message: string): void;
}

export class DaemonClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private phase: DaemonPhase = 'stopped';
  private error: string | undefined;
  private starting = false;
  private stopping = false;
  private readonly restarts = new RestartQueue(() => this.restartNow());

  constructor(private readonly opts: DaemonClientOptions) {}

  get currentPhase(): DaemonPhase {
    return this.phase;
  }

  get lastError(): string | undefined {
    return this.error;
  }

  /** Start, or restart; queued behind a restart in progress, never stacked. */
  restart(): Promise<void> {
    return this.restarts.request();
  }

  async stop(): Promise<void> {
    await this.stopClient();
    this.setPhase('stopped');
  }

  private setPhase(phase: DaemonPhase, error?: string): void {
    this.phase = phase;
    this.error = error;
    this.opts.onPhase(phase, error);
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) {
      return;
    }
    this.stopping = true;
    try {
      if (client.state === State.Running || client.state === State.Starting) {
        await client.stop(5000);
      }
    } catch (err) {
      this.opts.log.warn(`Stopping the daemon: ${String(err)}`);
    } finally {
      await client.dispose().catch(() => undefined);
      this.stopping = false;
    }
  }

  private async restartNow(): Promise<void> {
    const { log } = this.opts;
    await this.stopClient();
    this.setPhase('starting');
    let plan: LaunchPlan;
    try {
      plan = await this.opts.plan();
    } catch (err) {
      this.fail(err instanceof LaunchError ? err.message.replace(/\.$/, '') : `settings could not be read: ${errorText(err)}`, undefined);
      return;
    }
    const { launch } = plan;
    log.info(`Starting the daemon: ${plan.description}`);
    if (!findExecutable(launch.command, launch.env, plan.cwd)) {
      const bare = !launch.command.includes('/');
      if (bare) {
        log.info(`PATH=${launch.env.PATH ?? ''}`);
      }
      this.fail(`"${launch.command}" was not found${bare ? ' on PATH' : ''} (setting ${SettingIds.command})`, launch);
      return;
    }

    // No `transport`: with TransportKind.stdio the client would append `--stdio` to the argv.
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { env: launch.env, cwd: plan.cwd },
    };
    const stderrTail: string[] = [];
    const clientOptions: LanguageClientOptions = {
      // Every file: the daemon's diagnostics concern whatever files the items name.
      documentSelector: [{ scheme: 'file' }],
      diagnosticCollectionName: DIAGNOSTIC_SOURCE,
      initializationOptions: plan.initializationOptions,
      outputChannel: log,
      traceOutputChannel: log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // The hover cards' actions are command links: only the extension's own item commands may run.
      markdown: { isTrusted: { enabledCommands: Object.values(EditorCommands) }, supportHtml: false },
      connectionOptions: { maxRestartCount: 0 },
      stdioOptions: {
        stdout: () => undefined, // the LSP stream itself
        stderr: (input, channel) => {
          readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', (line) => {
            channel.info(`[daemon] ${line}`);
            stderrTail.push(line);
            if (stderrTail.length > STDERR_TAIL) {
              stderrTail.shift();
            }
          });
        },
      },
      errorHandler: {
        error: (_error, _message, count) => ({ action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown }),
        closed: () => {
          if (!this.stopping && !this.starting) {
            this.client = undefined;
            this.fail(`it exited${lastWords(stderrTail)}`, launch);
          }
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient(SERVER_NAME, 'Checkpoint', serverOptions, clientOptions);
    // A copy per daemon process: its versions start again.
    const mirror = new SessionMirror({
      fetchAll: async () => workspaceSessionsResultOf(await client.sendRequest(Methods.workspaceSessions, {})),
      show: (status) => this.opts.onStatus(status),
      onError: (err) => log.warn(`Asking the daemon for the workspace's sessions: ${errorText(err)}`),
    });
    client.onNotification(Methods.status, (message: StatusMessage) => mirror.receive(message));
    this.starting = true;
    try {
      await client.start();
    } catch (err) {
      this.starting = false;
      await client.dispose().catch(() => undefined);
      // Let the process's last stderr lines arrive before quoting them.
      await new Promise((resolve) => setTimeout(resolve, 200));
      this.fail(`it exited before answering (${errorText(err)})${lastWords(stderrTail)}`, launch);
      return;
    }
    this.starting = false;
    this.client = client;
    const info = client.initializeResult?.serverInfo;
    log.info(`The daemon is running${info ? `: ${info.name} ${info.version ?? ''}` : ''}.`);
    this.setPhase('running');
  }

  private fail(reason: string, launch: DaemonLaunch | undefined): void {
    // A launch failure's own message says it is Checkpoint's ("Checkpoint needs Python…"): not said twice.
    const message = launch
      ? startFailureMessage(launch, reason)
      : reason.startsWith('Checkpoint')
        ? `${reason}.`
        : `Checkpoint: the daemon could not be started: ${reason}.`;
    this.opts.log.error(message);
    this.setPhase('failed', reason);
    this.opts.onFailure(message);
  }

  private running(): LanguageClient {
    if (!this.client || this.phase !== 'running') {
      throw new DaemonNotRunningError(this.error);
    }
    return this.client;
  }

  /** `workspace/executeCommand` on the daemon. */
  async executeCommand(command: string, args: unknown[] = []): Promise<unknown> {
    const client = this.running();
    this.opts.log.info(`→ ${command} ${JSON.stringify(args)}`);
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  }

  /** `checkpoint/items`. */
  async items(query: ItemsQuery): Promise<Item[]> {
    const client = this.running();
    return itemsOf(await client.sendRequest(Methods.items, query));
  }

  /** `checkpoint/turn`: an item's turns as they were said, with those around them. */
  async turn(itemId: string): Promise<TurnResult> {
    const client = this.running();
    return turnResultOf(await client.sendRequest(Methods.turn, { item: itemId }));
  }

  /** One item by id, in any state and scope (what a link or a diagnostic names). */
  async item(itemId: string): Promise<Item | undefined> {
    return (await this.turn(itemId)).item;
  }

  /** `checkpoint/sessions`: every session in scope, which a status lists only for the workspace. */
  async sessions(query: SessionsQuery = {}): Promise<SessionsResult> {
    const client = this.running();
    return sessionsResultOf(await client.sendRequest(Methods.sessions, query));
  }

  /** `checkpoint/transcripts`: a session's transcript files on disk, the latest written first. */
  async transcripts(sessionId: string): Promise<TranscriptsResult> {
    const client = this.running();
    return transcriptsResultOf(await client.sendRequest(Methods.transcripts, { session: sessionId }));
  }

  /** `checkpoint/search`: the items the query's words find, best first. */
  async search(query: SearchQuery): Promise<SearchResponse> {
    const client = this.running();
    return searchResponseOf(await client.sendRequest(Methods.search, query));
  }

  /** Settings that need no restart reach the running daemon as didChangeConfiguration. */
  async sendSettings(settings: Record<string, unknown>): Promise<void> {
    if (this.client && this.phase === 'running') {
      await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: { checkpoint: settings } });
    }
  }

  dispose(): void {
    void this.stop();
  }
}

const STDERR_TAIL = 20;

/** The daemon's last stderr line, which usually names what went wrong. */
function lastWords(tail: readonly string[]): string {
  const last = [...tail].reverse().find((line) => line.trim() !== '');
  return last ? `; it said: ${last.trim().slice(0, 300)}` : '; see the log';
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
