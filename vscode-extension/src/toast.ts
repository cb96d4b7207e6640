/**
 * Notifications of at most two lines, each with the action it implies (Show Log, Show Items, Set API
 * Key, Undo...): the whole message goes to the log, the toast says the gist. Modal dialogs (a
 * confirmation) are not toasts and keep their detail.
 */

import * as vscode from 'vscode';

/** What fits two lines of a notification at its default width (about 50 characters a line). */
export const TOAST_MAX = 100;
/** A path longer than this is shortened to its last two parts: one unbroken run would take a line of its own. */
export const TOAST_PATH = 32;
/** Most buttons on a toast: the action it implies and at most one more. */
export const TOAST_ACTIONS = 2;

/**
 * `message` in at most {@link TOAST_MAX} characters: as it is when it fits; else without its
 * parenthesised asides; else its first sentences that fit; else cut at a word.
 */
export function toastText(message: string, max = TOAST_MAX): string {
  const flat = shortPaths(message.replace(/\s+/g, ' ').trim());
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
  // One long sentence: its first clauses that fit ("…: 9 captured, 0 failed; 12 new items" keeps the first).
  for (const clause of bare.split(/;\s+/)) {
    const next = out ? `${out}; ${clause}` : clause;
    if (next.length > max - 1) {
      break;
    }
    out = next;
  }
  if (out && out !== bare) {
    return /[.!?…]$/.test(out) ? out : `${out}.`;
  }
  const cut = bare.slice(0, max - 1);
  const word = cut.lastIndexOf(' ');
  return `${word > max / 2 ? cut.slice(0, word) : cut}…`;
}

/** Absolute paths longer than {@link TOAST_PATH} as `…/parent/name`. */
export function shortPaths(text: string): string {
  return text.replace(/(?<![\w.~:/])\/[^\s"'`()]+/g, (p) => {
    if (p.length <= TOAST_PATH) {
      return p;
    }
    const parts = p.replace(/[.,;:]+$/, '').split('/').filter(Boolean);
    const tail = p.slice(p.replace(/[.,;:]+$/, '').length);
    return parts.length > 2 ? `…/${parts.slice(-2).join('/')}${tail}` : p;
  });
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
