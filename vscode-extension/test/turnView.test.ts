/** Open Turn's page: who spoke and when, the turn quoted with the statement in bold, the turns around it, a link to the raw line. */

import { describe, expect, it } from 'vitest';

import type { TurnResult } from '../src/protocol';
import { agoWords, exactTime, mdText, OPEN_TRANSCRIPT_LINE, quoted, renderTurn, transcriptLink, turnPage } from '../src/turnView';
import { item } from './fixtures';

const NOW = new Date('2026-01-08T11:00:00Z');

function answer(): TurnResult {
  return {
    item: item({ id: 'it-1', statement: 'Use SQLite for the queue', agent: 'claude', session_title: 'Queue work' }),
    turns: [
      { id: 'u1', role: 'user', text: 'Make the queue durable', length: 22, cited: false, timestamp: null, path: null, line: null, uri: null },
      {
        id: 'a1', role: 'assistant', text: 'OK. Use SQLite for the queue because it survives restarts.', length: 900, cited: true,
        timestamp: '2026-01-05T10:00:02Z', path: '/t/s.jsonl', line: 7, uri: 'file:///t/s.jsonl',
      },
    ],
  };
}

describe('the turn as it was said', () => {
  it('names the speakers and when, bolds the statement, names the raw line', () => {
    const page = renderTurn(answer(), NOW);
    expect(page).toContain('## Claude Code, 3 days ago (2026\\-01\\-05 10:00 UTC)'); // escaped for Markdown
    expect(page).toContain('> OK\\. **Use SQLite for the queue** because it survives restarts\\.');
    expect(page).toContain('### You (around it)');
    expect(page).toContain('*… 842 more characters in the transcript.*');
    // the raw line is a command link, the one the page's webview may run: [uri, line]
    const link = transcriptLink('file:///t/s.jsonl', 7);
    expect(page).toContain(`Raw transcript: [\`/t/s.jsonl\`, line 7](${link})`);
    expect(link).toBe(`command:${OPEN_TRANSCRIPT_LINE}?%5B%22file%3A%2F%2F%2Ft%2Fs.jsonl%22%2C7%5D`);
    expect(JSON.parse(decodeURIComponent(link.split('?')[1] ?? ''))).toEqual(['file:///t/s.jsonl', 7]);
    expect(page.indexOf('You (around it)')).toBeLessThan(page.indexOf('Claude Code, 3 days ago'));
  });

  it('shows what a transcript says as itself: no link, image or HTML comes out of it', () => {
    expect(mdText('[x](command:evil) <img src=x> ![i](p)')).toBe('\\[x\\]\\(command:evil\\) \\<img src\\=x\\> \\!\\[i\\]\\(p\\)');
    expect(quoted('line one\n# two', '')).toBe('> line one\n> \\# two');
  });

  it('says when in words', () => {
    expect(['2026-01-08T10:59:30Z', '2026-01-08T10:55:00Z', '2026-01-07T09:00:00Z', '2025-12-01T00:00:00Z'].map((t) => agoWords(t, NOW))).toEqual([
      'just now',
      '5 minutes ago',
      'yesterday',
      '1 month ago',
    ]);
  });

  it('links a turn without a file URI by its path', () => {
    const [, cited] = answer().turns;
    const page = renderTurn({ ...answer(), turns: [{ ...cited!, uri: null }] }, NOW);
    expect(page).toContain(`(${transcriptLink('/t/s.jsonl', 7)})`);
  });

  it('wraps the rendered page with no script and nothing loaded', () => {
    const html = turnPage('<h1>Decision</h1>', 'vscode-webview://x');
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline' vscode-webview://x;"`);
    expect(html).toContain('<body>\n<h1>Decision</h1>\n</body>');
    expect(html).not.toContain('<script');
  });

  it('says so when the turns are gone', () => {
    expect(renderTurn({ ...answer(), turns: [] }, NOW)).toContain('no longer stored');
  });
});

describe('exactTime', () => {
  it('reads as a date and a minute in UTC, and leaves what is not a time as it was', () => {
    expect(exactTime('2026-12-02T01:54:17.469Z')).toBe('2026-12-02 01:54 UTC');
    expect(exactTime('not a time')).toBe('not a time');
  });
});
