/**
 * Notifications of at most two lines, each with the action it implies (Show Log, Show Items, Set API
 * Key, Undo...): the whole message goes to the log, the toast says the gist. Modal dialogs (a
 * confirmation) are not toasts and keep their detail.
 */

import * as vscode from 'vscode';

/** What fits two lines of a notification at its default width (about 60 characters a line). */
export const TOAST_MAX = 110;
/** Most buttons on a toast: the action it implies and at most one more. */
export const TOAST_ACTIONS = 2;

/**
 * `message` in at most {@link TOAST_MAX} characters: as it is when it fits; else without its
 * parenthesised asides; else its first sentences that fit; else cut at a word.
 */
export function toastText(message: string, max = TOAST_MAX): string {
  const flat = message.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) {
    return flat;
  }
  const bare = flat.replace(/\s*\([^()]*\)/g, '').replace(/\s+([,.;:])/g, '$1');
  if (bare.length <= max) {
    return bare;
  }
  let out = '';
  for (const sentence of bare.split(/(?<=[.!?])\s+/)) {
    const next = out ? `${out} ${sentence}` : sentence;
    if (next.length > max) {
      break;
    }
    out = next;
  }
  if (out) {
    return out;
  }
  const cut = bare.slice(0, max - 1);
  const word = cut.lastIndexOf(' ');
  return `${word > max / 2 ? cut.slice(0, word) : cut}…`;
}

export function info(message: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(toastText(message), ...actions.slice(0, TOAST_ACTIONS));
}

export function warn(message: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(toastText(message), ...actions.slice(0, TOAST_ACTIONS));
}

export function error(message: string, ...actions: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(toastText(message), ...actions.slice(0, TOAST_ACTIONS));
}
