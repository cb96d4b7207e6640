/**
 * What every command needs, and {@link guard}, which wraps each one: a failure is logged and shown
 * to the user with a Show Log button, never swallowed; a stopped daemon is answered with why and
 * how to fix it.
 */

import * as vscode from 'vscode';

import { SettingIds } from '../constants';
import { DaemonNotRunningError } from '../lifecycle';
import type { Item, ItemsQuery, SearchQuery, SearchResponse, TurnResult } from '../protocol';
import { INSTALL_COMMAND } from '../settings';
import type { DaemonPhase } from '../status';

/** What the commands need of the daemon client (a fake in unit tests). */
export interface Daemon {
  readonly currentPhase: DaemonPhase;
  readonly lastError: string | undefined;
  executeCommand(command: string, args?: unknown[]): Promise<unknown>;
  items(query: ItemsQuery): Promise<Item[]>;
  search(query: SearchQuery): Promise<SearchResponse>;
  /** `checkpoint/turn`: an item (any state, any scope) and its turns as they were said. */
  turn(itemId: string): Promise<TurnResult>;
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

/** The daemon is not running: say why and how to fix it, with buttons. The install command is
 * offered only when the message names it (a bundled daemon without Python needs Python, not it). */
export async function showDaemonError(message: string, deps: Pick<CommandDeps, 'log' | 'daemon'>): Promise<void> {
  const buttons = ['Show Log', 'Restart Daemon', ...(message.includes(INSTALL_COMMAND) ? ['Copy Install Command'] : []), 'Open Settings'];
  const choice = await vscode.window.showErrorMessage(message, ...buttons);
  if (choice === 'Show Log') {
    deps.log.show(true);
  } else if (choice === 'Restart Daemon') {
    await deps.daemon.restart();
  } else if (choice === 'Copy Install Command') {
    await vscode.env.clipboard.writeText(INSTALL_COMMAND);
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
      const choice = await vscode.window.showErrorMessage(`Checkpoint: ${title} failed: ${message}`, 'Show Log');
      if (choice === 'Show Log') {
        deps.log.show(true);
      }
    }
  };
}
