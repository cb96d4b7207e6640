/**
 * How the panel writes what it shows: one-line text, relative times ("3 h ago", never an ISO stamp),
 * paths relative to the workspace folder or the home folder (never absolute when either holds them),
 * agents by name. Pure: no `vscode` import.
 */

import * as path from 'node:path';

/** The longest label a row gets (a wide side bar shows it whole; the tooltip always does). */
export const MAX_LABEL = 160;

/** One line of at most `max` characters: transcript text can hold newlines and very long runs. */
export function oneLine(text: string, max = MAX_LABEL): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** "just now", "5 min ago", "3 h ago", "2 d ago", else the date. */
export function relativeTime(timestamp: string | number | null | undefined, now: Date = new Date()): string {
  if (timestamp === null || timestamp === undefined || timestamp === '') {
    return 'no time';
  }
  const when = typeof timestamp === 'number' ? new Date(timestamp * 1000) : new Date(timestamp);
  if (Number.isNaN(when.getTime())) {
    return String(timestamp);
  }
  const seconds = Math.round((now.getTime() - when.getTime()) / 1000);
  if (seconds < 60) {
    return 'just now';
  }
  if (seconds < 3600) {
    return `${Math.floor(seconds / 60)} min ago`;
  }
  if (seconds < 86400) {
    return `${Math.floor(seconds / 3600)} h ago`;
  }
  if (seconds < 30 * 86400) {
    return `${Math.floor(seconds / 86400)} d ago`;
  }
  return when.toISOString().slice(0, 10);
}

/** Where the rows are read: the workspace folders (paths) and the home folder, for {@link shownPath}. */
export interface Place {
  roots: readonly string[];
  home: string;
}

export const NO_PLACE: Place = { roots: [], home: '' };

/** A folder's path from the URI the daemon sends (`file:///…`); anything else as it is. */
export function pathOfUri(uri: string): string {
  if (!uri.startsWith('file://')) {
    return uri;
  }
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri;
  }
}

function inside(folder: string, p: string): string | undefined {
  const rel = path.relative(folder, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel)) ? rel : undefined;
}

/**
 * A path as a row shows it: relative to the workspace folder holding it (the folder's own name for
 * the folder itself, prefixed with it when there are several), `~/…` under the home folder, else whole.
 */
export function shownPath(p: string, place: Place): string {
  if (!path.isAbsolute(p)) {
    return p;
  }
  for (const root of place.roots) {
    const rel = inside(root, p);
    if (rel !== undefined) {
      const name = path.basename(root);
      if (rel === '') {
        return name;
      }
      return place.roots.length > 1 ? `${name}/${rel}` : rel;
    }
  }
  if (place.home) {
    const rel = inside(place.home, p);
    if (rel !== undefined) {
      return rel === '' ? '~' : `~/${rel}`;
    }
  }
  return p;
}

/** An item's file, absolute: as given, or relative to the session's folder. */
export function absoluteFile(file: string, cwd: string | null): string {
  return path.isAbsolute(file) || !cwd ? file : path.resolve(cwd, file);
}

/** The agents by the names their users know (the daemon's cards say the same). */
const AGENT_NAMES: Record<string, string> = {
  claude: 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  copilot: 'Copilot CLI',
  opencode: 'opencode',
};

export function agentName(agent: string | null | undefined): string {
  return agent ? (AGENT_NAMES[agent] ?? agent) : 'an agent';
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
