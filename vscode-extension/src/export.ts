/**
 * Items as Markdown: one item (Copy as Markdown), one document (Export Decisions → Markdown), or one
 * Architecture Decision Record per decision (Export Decisions → ADR files). Pure functions.
 *
 * Statements come from transcripts, so they are escaped: HTML in them stays text and brackets make
 * no links.
 */

import { KIND_LABELS as SECTION_TITLE, KIND_TITLE } from './constants';
import type { Item } from './protocol';
import { ITEM_KINDS } from './protocol';

export type ExportFormat = 'markdown' | 'adr';

export interface ExportFile {
  name: string;
  content: string;
}


/** Text made safe for Markdown: no HTML, no links, no line structure of its own. */
export function mdText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\[\]`*_])/g, '\\$1');
}

/** A code span that holds `text` whatever backticks it contains. */
export function mdCode(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

export function dateOf(createdAt: number | string, fallback: Date): string {
  const when = typeof createdAt === 'number' ? new Date(createdAt * 1000) : new Date(createdAt);
  return Number.isNaN(when.getTime()) ? fallback.toISOString().slice(0, 10) : when.toISOString().slice(0, 10);
}

function provenance(item: Item): string[] {
  const lines: string[] = [];
  if (item.rationale) {
    lines.push(`- Why: ${mdText(item.rationale)}`);
  }
  if (item.files.length) {
    lines.push(`- Files: ${item.files.map(mdCode).join(', ')}`);
  }
  const session = item.session_title ? mdText(item.session_title) : mdCode(item.session_id);
  lines.push(`- Session: ${session}`);
  for (const src of item.sources.slice(0, 3)) {
    lines.push(`- Source: ${mdCode(`${src.path}:${src.line}`)}${src.timestamp ? ` (${mdText(src.timestamp)})` : ''}`);
  }
  if (item.state !== 'new') {
    lines.push(`- State: ${item.state}`);
  }
  return lines;
}

/** One item, for the clipboard. */
export function itemMarkdown(item: Item): string {
  return [`**${KIND_TITLE[item.kind] ?? item.kind}:** ${mdText(item.statement)}`, '', ...provenance(item), ''].join('\n');
}

/** Every item in one document, by kind; dismissed items are left out. */
export function markdownDocument(items: Item[], now: Date): string {
  const kept = items.filter((i) => i.state !== 'dismissed');
  const sessions = new Set(kept.map((i) => i.session_id));
  const counts = ITEM_KINDS.map((k) => {
    const n = kept.filter((i) => i.kind === k).length;
    return `${n} ${(n === 1 ? KIND_TITLE[k] : SECTION_TITLE[k]).toLowerCase()}`;
  });
  const out = [
    '# Decisions',
    '',
    `Exported by Checkpoint on ${now.toISOString().slice(0, 10)}: ${counts.join(', ')} from ${sessions.size} ` +
      `session${sessions.size === 1 ? '' : 's'}.`,
    '',
  ];
  for (const kind of ITEM_KINDS) {
    const ofKind = kept.filter((i) => i.kind === kind);
    if (!ofKind.length) {
      continue;
    }
    out.push(`## ${SECTION_TITLE[kind]}`, '');
    ofKind.forEach((item, n) => {
      out.push(`### ${n + 1}. ${mdText(item.statement)}`, '', ...provenance(item), '');
    });
  }
  if (!kept.length) {
    out.push('Nothing captured yet.', '');
  }
  return out.join('\n');
}

export function slugify(text: string, max = 50): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const cut = slug.slice(0, max).replace(/-+$/g, '');
  return cut || 'decision';
}

/** One ADR (title, status, context, decision, consequences) per decision; others are left out. */
export function adrFiles(items: Item[], now: Date): ExportFile[] {
  const decisions = items.filter((i) => i.kind === 'decision' && i.state !== 'dismissed');
  return decisions.map((item, n) => {
    const number = String(n + 1).padStart(4, '0');
    const src = item.sources[0];
    const lines = [
      `# ${n + 1}. ${mdText(item.statement)}`,
      '',
      `- Status: ${item.state === 'accepted' ? 'Accepted' : 'Proposed'}`,
      `- Date: ${dateOf(item.created_at, now)}`,
      `- Recorded by: Checkpoint (${mdText(item.extractor)}), session ${item.session_title ? mdText(item.session_title) : mdCode(item.session_id)}`,
    ];
    if (src) {
      lines.push(`- Source: ${mdCode(`${src.path}:${src.line}`)}`);
    }
    lines.push(
      '',
      '## Context',
      '',
      item.rationale ? mdText(item.rationale) : 'Made in a coding-agent session; no rationale was recorded with it.',
      '',
      '## Decision',
      '',
      mdText(item.statement),
      '',
      '## Consequences',
      '',
      item.files.length
        ? `Concerns: ${item.files.map(mdCode).join(', ')}.`
        : 'No files were named with this decision.',
      '',
    );
    return { name: `${number}-${slugify(item.statement)}.md`, content: lines.join('\n') };
  });
}

export function exportFiles(items: Item[], format: ExportFormat, now: Date): ExportFile[] {
  return format === 'adr' ? adrFiles(items, now) : [{ name: 'checkpoint-decisions.md', content: markdownDocument(items, now) }];
}
