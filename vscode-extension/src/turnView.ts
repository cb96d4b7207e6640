/**
 * Open Turn: an item's turn as it was said, as a read-only Markdown document of the scheme
 * {@link TURN_SCHEME} (`checkpoint-turn:/<item id>/turn.md`), shown in the Markdown preview. The
 * page names who spoke and when, quotes the turn with the statement in bold where its words are
 * found, shows the turns around it, and links to the raw transcript line. Everything quoted from a
 * transcript is escaped to read as itself (no link, image or HTML can come out of it).
 */

import * as vscode from 'vscode';

import { KIND_TITLE, TURN_SCHEME } from './constants';
import type { TurnResult, TurnText } from './protocol';

/** A time as a person says it from `now`: "just now", "5 minutes ago", "yesterday", "3 days ago". Pure. */
export function agoWords(timestamp: string | number, now: Date = new Date()): string {
  const then = typeof timestamp === 'number' ? timestamp * 1000 : Date.parse(timestamp);
  if (Number.isNaN(then)) {
    return String(timestamp);
  }
  const seconds = Math.max(0, (now.getTime() - then) / 1000);
  const units: [number, string][] = [
    [365 * 86400, 'year'],
    [30 * 86400, 'month'],
    [7 * 86400, 'week'],
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, unit] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      return unit === 'day' && n === 1 ? 'yesterday' : `${n} ${unit}${n > 1 ? 's' : ''} ago`;
    }
  }
  return 'just now';
}

/** The agents' names as their users know them. */
export const AGENT_NAMES: Record<string, string> = {
  claude: 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  copilot: 'Copilot CLI',
  opencode: 'opencode',
};

export function turnUri(itemId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: TURN_SCHEME, path: `/${encodeURIComponent(itemId)}/turn.md` });
}

export function itemIdOfTurnUri(uri: vscode.Uri): string {
  return decodeURIComponent(uri.path.split('/')[1] ?? '');
}

/** Text shown as itself in Markdown: every character that could start markup is escaped. */
export function mdText(text: string): string {
  return text
    .replace(/[\\`*_[\]<>!|~&#{}()+\-=.]/g, (c) => `\\${c}`)
    .split('')
    .filter((c) => c === '\n' || c === '\t' || (c >= ' ' && c !== '\u007f'))
    .join('');
}

function speaker(turn: TurnText, agent: string): string {
  if (turn.role === 'user') {
    return 'You';
  }
  if (turn.role === 'assistant') {
    return agent;
  }
  return turn.role;
}

/** The turn's text quoted, the statement's words in bold where they are found in it. */
export function quoted(text: string, statement: string): string {
  const at = statement ? text.toLowerCase().indexOf(statement.toLowerCase()) : -1;
  const parts =
    at >= 0
      ? [mdText(text.slice(0, at)), `**${mdText(text.slice(at, at + statement.length))}**`, mdText(text.slice(at + statement.length))]
      : [mdText(text)];
  return parts
    .join('')
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}

/** The page for a `checkpoint/turn` answer. Pure. */
export function renderTurn(result: TurnResult, now: Date = new Date()): string {
  const { item } = result;
  const agent = AGENT_NAMES[item.agent ?? ''] ?? (item.agent || 'The agent');
  const kind = KIND_TITLE[item.kind] ?? item.kind;
  const lines = [`# ${mdText(kind)}: ${mdText(item.statement)}`, ''];
  const session = item.session_title ? `“${mdText(item.session_title)}”` : 'a session';
  lines.push(`From ${session} with ${mdText(agent)}. ${item.held && item.state !== 'accepted' ? '**Held for review**: no agent is shown it until you accept it.' : `State: ${item.state}.`}`, '');
  if (!result.turns.length) {
    lines.push('*The turns of this item are no longer stored (the transcript was forgotten or deleted).*');
    return lines.join('\n') + '\n';
  }
  for (const turn of result.turns) {
    const when = turn.timestamp ? `, ${agoWords(turn.timestamp, now)} (${mdText(turn.timestamp)})` : '';
    if (turn.cited) {
      lines.push(`## ${mdText(speaker(turn, agent))}${when}`, '', quoted(turn.text, item.statement), '');
      if (turn.length > turn.text.length) {
        lines.push(`*… ${turn.length - turn.text.length} more characters in the transcript.*`, '');
      }
      if (turn.path && turn.line) {
        // The preview opens no file: link (markdown-it refuses the scheme): the raw line is named, and
        // the panel's Open Transcript goes there.
        lines.push(`Raw transcript: \`${turn.path.replace(/`/g, '')}\`, line ${turn.line} (Open Transcript in the panel goes there).`, '');
      }
    } else {
      const cut = turn.length > turn.text.length ? ' …' : '';
      lines.push(`### ${mdText(speaker(turn, agent))} (around it)`, '', quoted(turn.text + cut, ''), '');
    }
  }
  return lines.join('\n') + '\n';
}

/** Serves the pages; read-only, as every document of a content provider is. */
export class TurnDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly fetch: (itemId: string) => Promise<TurnResult>) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const id = itemIdOfTurnUri(uri);
    try {
      return renderTurn(await this.fetch(id));
    } catch (err) {
      return `# Checkpoint\n\nThe turn of item ${mdText(id)} could not be read: ${mdText(err instanceof Error ? err.message : String(err))}\n`;
    }
  }
}

/** Open the page in the Markdown preview (rendered), else as text. */
export async function showTurn(itemId: string): Promise<void> {
  const uri = turnUri(itemId);
  try {
    await vscode.commands.executeCommand('markdown.showPreview', uri);
  } catch {
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}
