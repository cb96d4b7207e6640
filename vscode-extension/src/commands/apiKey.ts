/** Set API Key: the Anthropic key into VS Code's secret storage, or out of it. */

import * as vscode from 'vscode';

import { API_KEY_SECRET } from '../constants';
import type { CommandDeps } from './guard';
import { info } from '../toast';

export async function setApiKey(deps: CommandDeps): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: 'Checkpoint: Anthropic API key',
    prompt: 'Stored in VS Code’s secret storage and given to the daemon as ANTHROPIC_API_KEY. Leave empty to remove it.',
    password: true,
    ignoreFocusOut: true,
    placeHolder: 'sk-ant-…',
  });
  if (key === undefined) {
    return;
  }
  if (key.trim() === '') {
    await deps.secrets.delete(API_KEY_SECRET);
    deps.log.info('The stored API key was removed.');
    void info('Checkpoint: stored API key removed; the daemon restarts without it.');
  } else {
    await deps.secrets.store(API_KEY_SECRET, key.trim());
    deps.log.info('An API key was stored in secret storage.');
    void info('Checkpoint: API key stored; the daemon restarts to use it.');
  }
  // The secret-storage change listener restarts the daemon.
}
