import * as fs from 'node:fs';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import { Commands, ServerCommands } from '../src/constants';
import { readSettings } from '../src/settings';

interface Manifest {
  engines: { vscode: string };
  main: string;
  contributes: {
    viewsContainers: { activitybar: { id: string; title: string; icon: string }[] };
    views: Record<string, { id: string; name: string }[]>;
    commands: { command: string; title: string; category?: string }[];
    menus: { commandPalette: { command: string; when: string }[] };
    configuration: { properties: Record<string, { default?: unknown }> };
  };
  scripts: Record<string, string>;
}

const root = path.resolve(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;

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

  it('puts the six palette commands under category "Checkpoint" and hides the item-only ones', () => {
    const byTitle = new Map(manifest.contributes.commands.map((c) => [c.title, c]));
    for (const title of ['Checkpoint Now', 'Show Log', 'Restart Daemon', 'Refresh', 'Export Decisions', 'Set API Key']) {
      expect(byTitle.get(title)?.category).toBe('Checkpoint');
    }
    expect(byTitle.get('Checkpoint Now')?.command).toBe(Commands.checkpointNow);
    const hidden = manifest.contributes.menus.commandPalette.filter((m) => m.when === 'false').map((m) => m.command);
    expect(hidden.sort()).toEqual(
      [Commands.goToCode, Commands.openTranscript, Commands.acceptItem, Commands.dismissItem, Commands.copyItemMarkdown].sort(),
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
    expect(Object.keys(props).some((k) => /key|secret|token/i.test(k.replace('maxTokens', '')))).toBe(false);
  });

  it('packages with one npm script', () => {
    expect(manifest.scripts.package).toContain('vsce package');
    expect(manifest.main).toBe('./dist/extension.js');
  });
});
