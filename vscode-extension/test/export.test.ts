import { describe, expect, it } from 'vitest';

import { adrFiles, exportFiles, itemMarkdown, markdownDocument, mdCode, mdText, slugify } from '../src/export';
import { item } from './fixtures';

const NOW = new Date('2026-02-01T09:00:00Z');

describe('itemMarkdown', () => {
  it('formats one item with its rationale, files, session and transcript source', () => {
    expect(itemMarkdown(item())).toBe(
      [
        "**Decision:** We'll use SQLite for the store.",
        '',
        '- Why: One file, transactions.',
        '- Files: `/home/dev/proj/src/store.py`',
        '- Session: Refactor the parser',
        '- Source: `/home/dev/.claude/projects/p/s.jsonl:12` (2026-01-05T10:00:00Z)',
        '',
      ].join('\n'),
    );
  });

  it('keeps HTML and links in a statement as text', () => {
    const md = itemMarkdown(item({ kind: 'question', statement: '<img src=x onerror=alert(1)> see [here](http://x)', rationale: null }));
    expect(md.split('\n')[0]).toBe('**Open question:** &lt;img src=x onerror=alert(1)&gt; see \\[here\\](http://x)');
    expect(md).not.toContain('<img');
  });
});

describe('markdownDocument', () => {
  it('puts items under Decisions, Constraints and Open questions, numbered, without dismissed ones', () => {
    const doc = markdownDocument(
      [
        item({ id: '1', kind: 'question', statement: 'Shard later?' }),
        item({ id: '2', statement: 'Use SQLite.' }),
        item({ id: '3', kind: 'constraint', statement: 'Must run offline.', state: 'accepted' }),
        item({ id: '4', statement: 'Use Postgres.', state: 'dismissed' }),
        item({ id: '5', statement: 'Use orjson.', session_id: 'other' }),
      ],
      NOW,
    );
    const headings = doc.split('\n').filter((l) => l.startsWith('#'));
    expect(headings).toEqual([
      '# Decisions',
      '## Decisions',
      '### 1. Use SQLite.',
      '### 2. Use orjson.',
      '## Constraints',
      '### 1. Must run offline.',
      '## Open questions',
      '### 1. Shard later?',
    ]);
    expect(doc).toContain(
      'Exported by Checkpoint on 2026-02-01: 2 decisions, 1 constraint, 1 open question from 2 sessions.',
    );
    expect(doc).toContain('- State: accepted');
    expect(doc).not.toContain('Postgres');
  });

  it('says so when there is nothing to export', () => {
    expect(markdownDocument([], NOW)).toContain('Nothing captured yet.');
  });
});

describe('adrFiles', () => {
  it('writes one numbered ADR per decision, with status from its state and context from its rationale', () => {
    const files = adrFiles(
      [
        item({ id: 'a', statement: "We'll use SQLite for the store." }),
        item({ id: 'b', kind: 'constraint', statement: 'Offline only.' }),
        item({ id: 'c', statement: 'Use orjson for JSON', state: 'accepted', rationale: null, files: [] }),
        item({ id: 'd', statement: 'Dismissed one', state: 'dismissed' }),
      ],
      NOW,
    );
    expect(files.map((f) => f.name)).toEqual(['0001-we-ll-use-sqlite-for-the-store.md', '0002-use-orjson-for-json.md']);
    const [first, second] = files.map((f) => f.content);
    expect(first).toContain("# 1. We'll use SQLite for the store.");
    expect(first).toContain('- Status: Proposed');
    expect(first).toContain('- Date: 2026-01-05');
    expect(first).toContain('## Context\n\nOne file, transactions.');
    expect(first).toContain('## Decision\n\nWe\'ll use SQLite for the store.');
    expect(first).toContain('Concerns: `/home/dev/proj/src/store.py`.');
    expect(second).toContain('- Status: Accepted');
    expect(second).toContain('no rationale was recorded');
    expect(second).toContain('No files were named with this decision.');
  });

  it('exportFiles picks one Markdown file or ADR files', () => {
    expect(exportFiles([item()], 'markdown', NOW).map((f) => f.name)).toEqual(['checkpoint-decisions.md']);
    expect(exportFiles([item()], 'adr', NOW)).toHaveLength(1);
  });
});

describe('escaping helpers', () => {
  it('mdText flattens lines and escapes HTML and link brackets', () => {
    expect(mdText('a\n# b & <c> [d] `e`')).toBe('a # b &amp; &lt;c&gt; \\[d\\] \\`e\\`');
  });

  it('mdCode fences text that holds backticks', () => {
    expect(mdCode('a.py')).toBe('`a.py`');
    expect(mdCode('x `y` z')).toBe('``x `y` z``');
    expect(mdCode('`edge')).toBe('`` `edge ``');
  });

  it('slugify makes short ascii file names', () => {
    expect(slugify('Use Ünïcode — and  symbols!')).toBe('use-unicode-and-symbols');
    expect(slugify('***')).toBe('decision');
    expect(slugify('a'.repeat(80)).length).toBe(50);
  });
});
