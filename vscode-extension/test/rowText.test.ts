/** How rows write times, paths and agents (src/rowText.ts): no ISO stamps, no absolute paths. */
import { describe, expect, it } from 'vitest';

import { absoluteFile, agentName, pathOfUri, relativeTime, shownPath } from '../src/rowText';

const NOW = new Date('2026-01-05T13:00:00.000Z');

describe('shownPath', () => {
  const place = { roots: ['/home/dev/proj'], home: '/home/dev' };

  it('writes a path in the workspace folder relative to it, the folder itself by its name', () => {
    expect(shownPath('/home/dev/proj/src/store.py', place)).toBe('src/store.py');
    expect(shownPath('/home/dev/proj', place)).toBe('proj');
  });

  it('prefixes the folder’s name when the workspace has several', () => {
    const two = { roots: ['/home/dev/proj', '/home/dev/lib'], home: '/home/dev' };
    expect(shownPath('/home/dev/lib/a.ts', two)).toBe('lib/a.ts');
  });

  it('writes a path elsewhere under home with ~, and leaves others and relative ones as they are', () => {
    expect(shownPath('/home/dev/other/x.md', place)).toBe('~/other/x.md');
    expect(shownPath('/home/dev', place)).toBe('~');
    expect(shownPath('/srv/data/x.md', place)).toBe('/srv/data/x.md');
    expect(shownPath('src/x.py', place)).toBe('src/x.py');
    // A sibling whose name starts like the folder's is not inside it.
    expect(shownPath('/home/dev/project2/a.py', place)).toBe('~/project2/a.py');
  });
});

describe('the rest', () => {
  it('reads a folder’s path from the daemon’s file URI', () => {
    expect(pathOfUri('file:///home/dev/my%20proj')).toBe('/home/dev/my proj');
    expect(pathOfUri('vscode-remote://x/y')).toBe('vscode-remote://x/y');
  });

  it('resolves an item’s relative file against its session’s folder', () => {
    expect(absoluteFile('src/a.py', '/home/dev/proj')).toBe('/home/dev/proj/src/a.py');
    expect(absoluteFile('/abs/a.py', '/home/dev/proj')).toBe('/abs/a.py');
    expect(absoluteFile('src/a.py', null)).toBe('src/a.py');
  });

  it('names agents as their users know them, an unknown one by its id', () => {
    expect([agentName('claude'), agentName('codex'), agentName('gemini'), agentName('mystery'), agentName(null)]).toEqual([
      'Claude Code',
      'Codex',
      'Gemini CLI',
      'mystery',
      'an agent',
    ]);
  });

  it('writes times relative to now, the date only past a month', () => {
    expect(relativeTime('2026-01-05T10:00:00Z', NOW)).toBe('3 h ago');
    expect(relativeTime('2025-06-01T00:00:00Z', NOW)).toBe('2025-06-01');
  });
});
