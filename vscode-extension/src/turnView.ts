/**
 * Open Turn: an item's turn as it was said, a read-only page. The page is Markdown (the same text a
 * document of the scheme {@link TURN_SCHEME}, `checkpoint-turn:/<item id>/turn.md`, holds), rendered
 * by VS Code's own Markdown engine (`markdown.api.render`) into a webview of ours: the Markdown
 * preview runs no `command:` link and opens no `file:` one, and the page's link to the raw transcript
 * line is a command link ({@link OPEN_TRANSCRIPT_LINE}), the only command the webview may run. Where
 * the engine is missing, the page is shown in the Markdown preview, without a working link. The page
 * names who spoke and when, quotes the turn with the statement in bold where its words are found,
 * and shows the turns around it. Everything quoted from a transcript is escaped to read as itself (no
 * link, image or HTML can come out of it).
 */

import * as vscode from 'vscode';

import { KIND_TITLE, OPEN_TRANSCRIPT_LINE, TURN_SCHEME, TURN_VIEW_TYPE } from './constants';
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

/** The exact time beside the relative one, as a person reads it: "2026-12-02 01:54 UTC". Pure. */
export function exactTime(timestamp: string): string {
  const then = Date.parse(timestamp);
  return Number.isNaN(then) ? timestamp : `${new Date(then).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export { OPEN_TRANSCRIPT_LINE };

/** A `command:` link that opens the transcript at a line. Pure. */
export function transcriptLink(uri: string, line: number): string {
  return `command:${OPEN_TRANSCRIPT_LINE}?${encodeURIComponent(JSON.stringify([uri, line]))}`;
}

/** Open a transcript (a file URI or path) at a 1-based line, its text selected there. */
export async function openTranscriptLine(uri: unknown, line: unknown): Promise<void> {
  if (typeof uri !== 'string' || !uri || typeof line !== 'number' || !Number.isInteger(line) || line < 1) {
    throw new Error('the turn page names no transcript line');
  }
  const target = /^[a-z][a-z0-9+.-]*:/i.test(uri) ? vscode.Uri.parse(uri) : vscode.Uri.file(uri);
  const at = new vscode.Range(line - 1, 0, line - 1, 0);
  await vscode.window.showTextDocument(target, { selection: at, preview: true });
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
    const when = turn.timestamp ? `, ${agoWords(turn.timestamp, now)} (${mdText(exactTime(turn.timestamp))})` : '';
    if (turn.cited) {
      lines.push(`## ${mdText(speaker(turn, agent))}${when}`, '', quoted(turn.text, item.statement), '');
      if (turn.length > turn.text.length) {
        lines.push(`*… ${turn.length - turn.text.length} more characters in the transcript.*`, '');
      }
      if (turn.path && turn.line) {
        // A command link (the page's webview runs it): the preview would refuse a file: link.
        const target = turn.uri || turn.path;
        lines.push(`Raw transcript: [\`${turn.path.replace(/`/g, '')}\`, line ${turn.line}](${transcriptLink(target, turn.line)})`, '');
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

/** The webview page around the rendered Markdown: VS Code's colours, no script, nothing loaded. Pure. */
export function turnPage(body: string, cspSource: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline' ${cspSource};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style>
body { font-family: var(--vscode-markdown-font-family, var(--vscode-font-family)); font-size: var(--vscode-markdown-font-size, 14px);
  color: var(--vscode-foreground); padding: 0 26px; line-height: 1.5; max-width: 980px; }
a { color: var(--vscode-textLink-foreground); } a:hover { color: var(--vscode-textLink-activeForeground); }
blockquote { margin: 0 0 8px; padding: 2px 16px; border-left: 5px solid var(--vscode-textBlockQuote-border);
  background: var(--vscode-textBlockQuote-background); }
code { font-family: var(--vscode-editor-font-family); font-size: 0.9em; }
h1 { font-size: 1.5em; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 6px; }
h2 { font-size: 1.2em; } h3 { font-size: 1em; opacity: 0.8; }
</style></head><body>
${body}
</body></html>`;
}

const panels = new Map<string, vscode.WebviewPanel>();

/**
 * Open the item's turn page: rendered into a webview of ours whose one runnable link opens the raw
 * transcript line; without VS Code's Markdown engine, the page in the Markdown preview, else as text.
 */
export async function showTurn(itemId: string, fetch: (itemId: string) => Promise<TurnResult>): Promise<void> {
  const uri = turnUri(itemId);
  const markdown = await new TurnDocuments(fetch).provideTextDocumentContent(uri);
  let html: unknown;
  try {
    html = await vscode.commands.executeCommand('markdown.api.render', markdown);
  } catch {
    html = undefined;
  }
  if (typeof html === 'string' && html) {
    const open = panels.get(itemId);
    const panel =
      open ??
      vscode.window.createWebviewPanel(TURN_VIEW_TYPE, 'Checkpoint: Turn', vscode.ViewColumn.Active, {
        enableScripts: false,
        enableCommandUris: [OPEN_TRANSCRIPT_LINE],
        enableFindWidget: true,
        localResourceRoots: [],
      });
    if (!open) {
      panels.set(itemId, panel);
      panel.onDidDispose(() => panels.delete(itemId));
    }
    panel.webview.html = turnPage(html, panel.webview.cspSource);
    panel.reveal();
    return;
  }
  try {
    await vscode.commands.executeCommand('markdown.showPreview', uri);
  } catch {
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}
