/**
 * What every command needs, and {@link guard}, which wraps each one: a failure is logged whole and
 * shown to the user in at most two lines with a Show Log button, never swallowed; a stopped daemon
 * is answered with why and the action that fixes it.
 */

import * as vscode from 'vscode';

import { SettingIds } from '../constants';
import { DaemonNotRunningError } from '../lifecycle';
import type { Item, ItemsQuery, SearchQuery, SearchResponse, TranscriptsResult, TurnResult } from '../protocol';
import type { DaemonPhase } from '../status';
import { error } from '../toast';

/** What the commands need of the daemon client (a fake in unit tests). */
export interface Daemon {
  readonly currentPhase: DaemonPhase;
  readonly lastError: string | undefined;
  executeCommand(command: string, args?: unknown[]): Promise<unknown>;
  items(query: ItemsQuery): Promise<Item[]>;
  search(query: SearchQuery): Promise<SearchResponse>;
  /** `checkpoint/turn`: an item (any state, any scope) and its turns as they were said. */
  turn(itemId: string): Promise<TurnResult>;
  /** `checkpoint/transcripts`: a session's transcript files on disk. */
  transcripts(sessionId: string): Promise<TranscriptsResult>;
  restart(): Promise<void>;
}

export interface CommandDeps {
  daemon: Daemon;
  log: vscode.LogOutputChannel;
  tree: { refresh(): void };
  secrets: vscode.SecretStorage;
  /** A Checkpoint Now from this window is in flight (spinner in the status bar). */
  setBusy(busy: boolean): void;
  /** The full message of the last start failure, with the install command. */
  lastFailure(): string | undefined;
  now?: () => Date;
}

/** A mistake of the user's (no item picked, a file gone): shown as the command's failure. */
export class UserError extends Error {}

/**
 * The daemon is not running: the gist in at most two lines (the whole message, with how to install
 * or configure a daemon, is in the log), Show Log and the one action the failure implies: Open
 * Settings when the message points at the command setting (a daemon that could not be started from
 * it), else Restart Daemon (after installing Python, say).
 */
export async function showDaemonError(message: string, deps: Pick<CommandDeps, 'log' | 'daemon'>): Promise<void> {
  const fix = message.includes(SettingIds.command) && !/needs Python/.test(message) ? 'Open Settings' : 'Restart Daemon';
  const choice = await error(message, 'Show Log', fix);
  if (choice === 'Show Log') {
    deps.log.show(true);
  } else if (choice === 'Restart Daemon') {
    await deps.daemon.restart();
  } else if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', SettingIds.command);
  }
}

/** Wrap a command so any failure reaches the user (and the log) instead of vanishing. */
export function guard(
  deps: Pick<CommandDeps, 'log' | 'daemon' | 'lastFailure'>,
  title: string,
  fn: (...args: unknown[]) => Promise<unknown>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof DaemonNotRunningError) {
        deps.log.error(`${title}: ${err.message}`);
        await showDaemonError(
          deps.lastFailure() ?? `Checkpoint: ${title} needs the daemon, and ${err.message}.`,
          deps,
        );
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      deps.log.error(`${title} failed: ${message}`);
      // The daemon's refusals start with its command's id ("checkpoint.supersede: …"): the title says it.
      const choice = await error(`Checkpoint: ${title} failed: ${message.replace(/^checkpoint\.\w+: /, '')}`, 'Show Log');
      if (choice === 'Show Log') {
        deps.log.show(true);
      }
    }
  };
}
