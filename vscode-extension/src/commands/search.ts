/**
 * Search Decisions: a quick pick that asks the daemon's `checkpoint/search` as the user types
 * (debounced, only the latest answer shown) and opens the chosen item's code or transcript turn.
 */

import * as path from 'node:path';

import * as vscode from 'vscode';

import { KIND_TITLE } from '../constants';
import { DaemonNotRunningError } from '../lifecycle';
import type { Item, SearchHit, SearchResponse } from '../protocol';
import { oneLine } from '../treeNodes';
import type { CommandDeps } from './guard';
import { openItem } from './navigate';

/** How long typing must pause before the query is sent. */
export const SEARCH_DEBOUNCE_MS = 200;
/** Most items one answer lists. */
export const SEARCH_LIMIT = 50;

export const SEARCH_HINT = 'Type words to search decisions, constraints and open questions (statement, rationale, files)';

export interface SearchPick extends vscode.QuickPickItem {
  /** The item to open; none on a hint or an error line. */
  item?: Item;
}

const KIND_ICONS = { decision: 'milestone', constraint: 'lock', question: 'question' } as const;

/** Where an item was said: its session and its workspace folder (or the session's folder). */
export function whereSaid(item: Item): string {
  const session = item.session_title ? oneLine(item.session_title, 40) : `session ${item.session_id.slice(0, 8)}`;
  const folder = item.workspace ? decodeURIComponent(item.workspace.replace(/^file:\/\//, '')) : item.cwd;
  return folder ? `${session} · ${path.basename(folder) || folder}` : session;
}

/** One line of the quick pick: statement, then kind and state, then session and workspace. */
export function searchPick(item: Item): SearchPick {
  const description = [KIND_TITLE[item.kind] ?? item.kind];
  if (item.superseded_by) {
    description.push('superseded');
  }
  if (item.state !== 'new') {
    description.push(item.state);
  }
  return {
    label: oneLine(item.statement),
    description: description.join(' · '),
    detail: whereSaid(item),
    iconPath: new vscode.ThemeIcon(item.superseded_by ? 'history' : KIND_ICONS[item.kind] ?? 'circle-small'),
    // The daemon matched rationale and files too: VS Code's own filter on the label must not hide them.
    alwaysShow: true,
    item,
  };
}

/** The quick pick's lines for an answer: the items, or one line that says none matched. */
export function searchPicks(response: SearchResponse): SearchPick[] {
  if (!response.terms.length) {
    return [];
  }
  if (!response.items.length) {
    return [{ label: 'No item matches these words', alwaysShow: true }];
  }
  const picks = response.items.map((hit: SearchHit) => searchPick(hit));
  if (response.matched === 'any') {
    return [{ label: 'No item has every word; these have some', kind: vscode.QuickPickItemKind.Separator }, ...picks];
  }
  return picks;
}

export interface SearchOptions {
  debounceMs?: number;
}

/** Show the search box; resolves once the user chose an item (and it was opened) or closed the box. */
export async function searchDecisions(deps: CommandDeps, options: SearchOptions = {}): Promise<void> {
  if (deps.daemon.currentPhase !== 'running') {
    throw new DaemonNotRunningError(deps.daemon.lastError);
  }
  const debounceMs = options.debounceMs ?? SEARCH_DEBOUNCE_MS;
  const pick = vscode.window.createQuickPick<SearchPick>();
  pick.title = 'Checkpoint: Search Decisions';
  pick.placeholder = SEARCH_HINT;
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let asked = 0; // the number of the latest request: older answers arriving late are dropped

  const ask = async (query: string): Promise<void> => {
    const mine = ++asked;
    pick.busy = true;
    try {
      const response = await deps.daemon.search({ query, limit: SEARCH_LIMIT });
      if (mine === asked) {
        pick.items = searchPicks(response);
      }
    } catch (err) {
      if (mine === asked) {
        const message = err instanceof Error ? err.message : String(err);
        deps.log.error(`Search Decisions failed: ${message}`);
        pick.items = [{ label: `Search failed: ${oneLine(message)}`, alwaysShow: true }];
      }
    } finally {
      if (mine === asked) {
        pick.busy = false;
      }
    }
  };

  const chosen = await new Promise<Item | undefined>((resolve) => {
    pick.onDidChangeValue((value) => {
      clearTimeout(timer);
      if (!value.trim()) {
        asked++; // an answer still on its way is for text no longer there
        pick.items = [];
        pick.busy = false;
        return;
      }
      timer = setTimeout(() => void ask(value), debounceMs);
    });
    pick.onDidAccept(() => {
      const item = pick.selectedItems[0]?.item;
      if (item) {
        resolve(item);
        pick.hide();
      }
    });
    pick.onDidHide(() => resolve(undefined));
    pick.show();
  });
  clearTimeout(timer);
  pick.dispose();
  if (chosen) {
    await openItem(chosen);
  }
}
