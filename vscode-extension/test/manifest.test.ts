import * as fs from 'node:fs';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { Commands, ContextValues, ServerCommands, Views } from '../src/constants';
import { readSettings } from '../src/settings';
import { itemContext } from '../src/treeNodes';
import { item } from './fixtures';

interface Manifest {
  engines: { vscode: string };
  main: string;
  contributes: {
    viewsContainers: { activitybar: { id: string; title: string; icon: string }[] };
    views: Record<string, { id: string; name: string }[]>;
    commands: { command: string; title: string; category?: string }[];
    menus: { commandPalette: { command: string; when: string }[] } & Record<string, { command: string; when?: string; group?: string }[]>;
    configuration: { properties: Record<string, { default?: unknown }> };
  };
  scripts: Record<string, string>;
}

const root = path.resolve(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;

/** Where a quoted `checkpoint.` id is written outside comments: `file:line: text`. */
export function strayIds(file: string, source: string): string[] {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:])\/\/.*$/gm, '$1');
  return code
    .split('\n')
    .map((line, n) => ({ line, n }))
    .filter(({ line }) => /['"`]checkpoint\./.test(line))
    .map(({ line, n }) => `${file}:${n + 1}: ${line.trim()}`);
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

describe('package.json contracts', () => {
  it('targets VS Code 1.100 or older, so code-server 4.100.3 runs it', () => {
    const m = /^\^1\.(\d+)\.\d+$/.exec(manifest.engines.vscode);
    expect(m).not.toBeNull();
    expect(Number(m?.[1])).toBeLessThanOrEqual(100);
  });

  it('has an activity-bar container titled "Checkpoint" holding the sessions view, with an icon that ships', () => {
    const [container] = manifest.contributes.viewsContainers.activitybar;
    expect(container.title).toBe('Checkpoint');
    expect(manifest.contributes.views[container.id].map((v) => v.id)).toEqual(['checkpoint.sessions']);
    expect(fs.existsSync(path.join(root, container.icon))).toBe(true);
  });

  it('puts the eight palette commands under category "Checkpoint" and hides the item-only ones', () => {
    const byTitle = new Map(manifest.contributes.commands.map((c) => [c.title, c]));
    const palette = ['Checkpoint Now', 'Show Log', 'Restart Daemon', 'Refresh', 'Export Decisions', 'Set API Key'];
    for (const title of [...palette, 'Search Decisions', 'Mark as Superseded by…']) {
      expect(byTitle.get(title)?.category).toBe('Checkpoint');
    }
    expect(byTitle.get('Checkpoint Now')?.command).toBe(Commands.checkpointNow);
    const hidden = manifest.contributes.menus.commandPalette.filter((m) => m.when === 'false').map((m) => m.command);
    expect(hidden.sort()).toEqual(
      [
        Commands.goToCode,
        Commands.openTranscript,
        Commands.acceptItem,
        Commands.dismissItem,
        Commands.copyItemMarkdown,
        Commands.removeSupersession,
        Commands.openTurn,
        Commands.openRecord,
        Commands.openSessionTranscript,
        Commands.forgetSession,
        Commands.openProblemFile,
      ].sort(),
    );
  });

  it('contributes exactly the commands the extension registers', () => {
    expect(manifest.contributes.commands.map((c) => c.command).sort()).toEqual(Object.values(Commands).sort());
  });

  it('uses no command id the language client registers for the daemon’s own commands', () => {
    const ours = new Set(manifest.contributes.commands.map((c) => c.command));
    for (const id of Object.values(ServerCommands)) {
      expect(ours.has(id)).toBe(false);
    }
  });

  it('declares checkpoint.command with the default ["checkpoint", "serve"]', () => {
    expect(manifest.contributes.configuration.properties['checkpoint.command'].default).toEqual(['checkpoint', 'serve']);
  });

  it('declares every setting readSettings reads, with the same defaults', () => {
    const props = manifest.contributes.configuration.properties;
    const read: string[] = [];
    const defaults = readSettings({
      get: <T>(key: string): T | undefined => {
        read.push(key);
        return undefined;
      },
    });
    for (const key of read) {
      expect(props, key).toHaveProperty([`checkpoint.${key}`]);
    }
    const fromManifest = readSettings({
      get: <T>(key: string): T | undefined => props[`checkpoint.${key}`]?.default as T | undefined,
    });
    expect(fromManifest).toEqual(defaults);
    expect(Object.keys(props).some((k) => /key|secret|token/i.test(k.replace(/(max|context)Tokens/, '')))).toBe(false);
  });

  it('writes no `checkpoint.` id outside src/constants.ts', () => {
    const src = path.join(root, 'src');
    const stray = sourceFiles(src)
      .filter((f) => path.basename(f) !== 'constants.ts')
      .flatMap((f) => strayIds(path.relative(root, f), fs.readFileSync(f, 'utf8')));
    expect(stray).toEqual([]);
  });

  it('the stray-id scan finds quoted ids in code and leaves comments alone', () => {
    const sample = [
      "/** Runs `checkpoint.command`. */",
      "const a = 'checkpoint.refresh';",
      'const b = "checkpoint.x"; // and `checkpoint.y` here is a comment',
      'const c = `checkpoint.${name}`;',
      "const url = 'https://x.invalid/checkpoint'; // 'checkpoint.z'",
    ].join('\n');
    expect(strayIds('s.ts', sample)).toEqual([
      "s.ts:2: const a = 'checkpoint.refresh';",
      's.ts:3: const b = "checkpoint.x";',
      's.ts:4: const c = `checkpoint.${name}`;',
    ]);
  });

  it('declares the views the extension creates', () => {
    expect(Object.values(manifest.contributes.views).flat().map((v) => v.id)).toEqual(Object.values(Views));
  });

  it('matches menus on context values the panel sets', () => {
    const menus = Object.values(manifest.contributes.menus).flat();
    const whens = menus.map((m) => m.when ?? '').filter((w) => w.includes('viewItem'));
    expect(whens.length).toBeGreaterThan(0);
    const known: string[] = Object.values(ContextValues);
    for (const when of whens) {
      for (const [, value] of when.matchAll(/viewItem == ([\w.]+)/g)) {
        expect(known, when).toContain(value);
      }
      for (const [, source] of when.matchAll(/viewItem =~ \/(.*?)\/(?=\s|$)/g)) {
        const pattern = new RegExp(source);
        // Each pattern matches some value the panel sets: an item's flags or a plain context value.
        const samples = [
          ...known,
          itemContext(item()),
          itemContext(item({ state: 'accepted' })),
          itemContext(item({ superseded_by: 'x' })),
          itemContext(item({ origin: 'shared', record: 'docs/decisions/a.md', state: 'accepted' })),
          itemContext(item({ held: true })),
        ];
        expect(samples.some((v) => pattern.test(v)), when).toBe(true);
      }
    }
    for (const m of menus) {
      expect(Object.values(Commands) as string[], m.command).toContain(m.command);
    }
  });

  /** The panel's menu entries for a row with this context value, as VS Code's `when` clauses pick them. */
  function menuFor(contextValue: string): { command: string; group: string }[] {
    const holds = (term: string): boolean => {
      if (term === 'view == checkpoint.sessions') {
        return true;
      }
      const equal = /^viewItem == ([\w.]+)$/.exec(term);
      if (equal) {
        return contextValue === equal[1];
      }
      const match = /^viewItem =~ \/(.*)\/$/.exec(term);
      if (match) {
        return new RegExp(match[1]).test(contextValue);
      }
      throw new Error(`a when clause this test cannot read: ${term}`);
    };
    return manifest.contributes.menus['view/item/context']
      .filter((m) => (m.when ?? '').split(' && ').every(holds))
      .map((m) => ({ command: m.command, group: m.group ?? '' }));
  }
  const inline = (contextValue: string): string[] =>
    menuFor(contextValue)
      .filter((m) => m.group.startsWith('inline'))
      .sort((a, b) => Number(a.group.split('@')[1]) - Number(b.group.split('@')[1]))
      .map((m) => m.command);

  it('offers a session Open Transcript, Checkpoint Now and Forget, in that order', () => {
    const menu = menuFor(ContextValues.session).filter((m) => !m.group.startsWith('inline'));
    expect(menu.sort((a, b) => a.group.localeCompare(b.group)).map((m) => m.command)).toEqual([
      Commands.openSessionTranscript,
      Commands.checkpointNow,
      Commands.forgetSession,
    ]);
    expect(inline(ContextValues.session)).toEqual([Commands.checkpointNow]);
  });

  it('keeps an item’s inline icons in place when its state changes: what a state hides is leftmost', () => {
    const before = inline(itemContext(item()));
    const after = inline(itemContext(item({ state: 'accepted' })));
    expect(before).toEqual([Commands.acceptItem, Commands.dismissItem, Commands.openTurn, Commands.goToCode]);
    // The action bar is right-aligned: the icons right of the one that went keep their places.
    expect(after).toEqual(before.slice(1));
    expect(before.slice(-after.length)).toEqual(after);
  });

  it('offers no Accept on an accepted item, unless it is a record’s held one you have not accepted', () => {
    const commands = (ctx: string): string[] => menuFor(ctx).map((m) => m.command);
    expect(commands(itemContext(item({ state: 'accepted' })))).not.toContain(Commands.acceptItem);
    expect(commands(itemContext(item({ state: 'new' })))).toContain(Commands.acceptItem);
    const recordHeld = item({ origin: 'shared', record: 'docs/decisions/a.md', state: 'accepted', held: true, accepted_here: false });
    expect(commands(itemContext(recordHeld))).toContain(Commands.acceptItem);
    expect(commands(itemContext({ ...recordHeld, accepted_here: true }))).not.toContain(Commands.acceptItem);
  });

  it('offers Open Decision Record on a shared item, and opens a record that cannot be read', () => {
    const shared = itemContext(item({ origin: 'shared', record: 'docs/decisions/a.md', sources: [], files: [] }));
    expect(inline(shared)).toEqual([Commands.acceptItem, Commands.dismissItem, Commands.openRecord]);
    expect(menuFor(ContextValues.recordProblem).map((m) => m.command)).toContain(Commands.openProblemFile);
  });

  it('offers "Share with the Team" on local items only: a shared one has its record already', () => {
    const share = Object.values(manifest.contributes.menus)
      .flat()
      .filter((m) => m.command === Commands.shareWithTeam && (m.when ?? '').includes('viewItem'));
    expect(share).toHaveLength(1);
    const [, source] = /viewItem =~ \/(.*?)\/(?=\s|$)/.exec(share[0].when ?? '') ?? [];
    const pattern = new RegExp(source);
    expect(pattern.test(itemContext(item({ origin: 'local' })))).toBe(true);
    expect(pattern.test(itemContext(item()))).toBe(true); // a daemon that says no origin: local
    expect(pattern.test(itemContext(item({ origin: 'shared', record: 'docs/decisions/a.md' })))).toBe(false);
  });

  it('packages with one npm script: the platform .vsix of scripts/build-vsix.sh', () => {
    expect(manifest.scripts.package).toBe('bash ../scripts/build-vsix.sh');
    expect(fs.readFileSync(path.join(root, '..', 'scripts', 'build-vsix.sh'), 'utf8')).toContain('vsce package --target "$TARGET"');
    expect(manifest.main).toBe('./dist/extension.js');
  });

  it('has the metadata the Marketplace and Open VSX need, an icon of 128x128 and a walkthrough', () => {
    const m = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      publisher: string; displayName: string; description: string; icon: string; categories: string[];
      keywords: string[]; repository: { url: string }; contributes: { walkthroughs: { title: string; steps: { media: Record<string, string> }[] }[] };
    };
    expect(m.publisher).toBe('checkpoint-dev');
    expect(m.displayName).toBe('Checkpoint');
    expect(m.description.length).toBeGreaterThan(40);
    expect(m.categories).toEqual(['AI', 'Other']);
    expect(m.keywords.length).toBeGreaterThanOrEqual(5);
    expect(m.repository.url).toMatch(/^https:\/\/github\.com\/checkpoint-dev\//);
    const png = fs.readFileSync(path.join(root, m.icon));
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([128, 128]);
    const [walk] = m.contributes.walkthroughs;
    expect(walk.title).toBe('Getting started with Checkpoint');
    for (const step of walk.steps) {
      const media = step.media.markdown ?? step.media.image;
      expect(fs.existsSync(path.join(root, media))).toBe(true);
    }
    expect(fs.existsSync(path.join(root, 'CHANGELOG.md'))).toBe(true);
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toContain('](media/screenshot.png)');
  });
});
