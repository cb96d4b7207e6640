import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  INSTALL_COMMAND,
  daemonLaunch,
  describeLaunch,
  expandPath,
  findExecutable,
  initializationOptions,
  needsRestart,
  readSettings,
  startFailureMessage,
  type ConfigReader,
} from '../src/settings';

function config(values: Record<string, unknown>): ConfigReader {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

describe('readSettings', () => {
  it('gives the documented defaults for an empty configuration', () => {
    const s = readSettings(config({}));
    expect(s.command).toEqual(['checkpoint', 'serve']);
    expect(s.sources).toEqual([]);
    expect(s.scope).toBe('workspace');
    expect(s.extractor).toBe('auto');
    expect(s.auto).toEqual({ mode: 'idle', idleSeconds: 120 });
    expect(s.diagnostics).toEqual({
      enabled: true,
      severity: { decision: 'information', constraint: 'warning', question: 'information' },
    });
    expect(s.budget).toEqual({ maxRequests: null, maxTokens: null, maxCost: null });
  });

  it('replaces malformed values with defaults instead of passing them on', () => {
    const s = readSettings(
      config({
        command: [],
        sources: ['', 7, '/t'],
        extractor: 'gpt',
        'budget.maxRequests': -3,
        'diagnostics.severity.constraint': 'loud',
        'auto.idleSeconds': -1,
      }),
    );
    expect(s.command).toEqual(['checkpoint', 'serve']);
    expect(s.sources).toEqual(['/t']);
    expect(s.extractor).toBe('auto');
    expect(s.budget.maxRequests).toBeNull();
    expect(s.diagnostics.severity.constraint).toBe('warning');
    expect(s.auto.idleSeconds).toBe(120);
  });
});

describe('daemonLaunch', () => {
  const settings = readSettings(
    config({
      command: ['${workspaceFolder}/.venv/bin/checkpoint', 'serve'],
      sources: ['~/a', '/b'],
      model: 'claude-sonnet-4-5',
      fallbackModels: ['claude-haiku-4-5'],
      'budget.maxTokens': 50000,
    }),
  );

  it('builds argv from checkpoint.command and the environment from the editor’s plus the set settings', () => {
    const launch = daemonLaunch(settings, { PATH: '/usr/bin', CHECKPOINT_DB: '/keep.db', UNSET: undefined }, undefined, '/ws');
    expect(launch.command).toBe('/ws/.venv/bin/checkpoint');
    expect(launch.args).toEqual(['serve']);
    expect(launch.env).toMatchObject({
      PATH: '/usr/bin',
      CHECKPOINT_DB: '/keep.db',
      CHECKPOINT_SOURCES: [path.join(os.homedir(), 'a'), '/b'].join(path.delimiter),
      CHECKPOINT_MODEL: 'claude-sonnet-4-5',
      CHECKPOINT_FALLBACK_MODELS: 'claude-haiku-4-5',
      CHECKPOINT_MAX_TOKENS: '50000',
      PYTHONUNBUFFERED: '1',
    });
    expect('UNSET' in launch.env).toBe(false);
    expect('ANTHROPIC_API_KEY' in launch.env).toBe(false);
    expect('CHECKPOINT_EXTRACTOR' in launch.env).toBe(false);
  });

  it('passes the API key as ANTHROPIC_API_KEY and never shows it in the log line', () => {
    const launch = daemonLaunch(settings, {}, 'sk-ant-secret-123', '/ws');
    expect(launch.env.ANTHROPIC_API_KEY).toBe('sk-ant-secret-123');
    const line = describeLaunch(launch, ['CHECKPOINT_MODEL', 'ANTHROPIC_API_KEY']);
    expect(line).toBe('/ws/.venv/bin/checkpoint serve (CHECKPOINT_MODEL=claude-sonnet-4-5, ANTHROPIC_API_KEY=<set>)');
    expect(line).not.toContain('secret');
  });
});

describe('initializationOptions', () => {
  it('uses the daemon’s snake_case keys and leaves out engine settings that were not set', () => {
    const opts = initializationOptions(
      readSettings(config({ extractor: 'heuristic', 'budget.maxRequests': 5, 'diagnostics.severity.question': 'hint' })),
      undefined,
    );
    expect(opts).toEqual({
      extractor: 'heuristic',
      max_requests: 5,
      scope: 'workspace',
      auto_checkpoint: 'idle',
      idle_seconds: 120,
      diagnostics: { enabled: true, severity: { decision: 'information', constraint: 'warning', question: 'hint' } },
    });
  });
});

describe('needsRestart', () => {
  const base = readSettings(config({}));
  it('restarts for a new command or a setting passed through the environment', () => {
    expect(needsRestart(base, readSettings(config({ command: ['/x/checkpoint', 'serve'] })), undefined)).toBe(true);
    expect(needsRestart(base, readSettings(config({ sources: ['/t'] })), undefined)).toBe(true);
    expect(needsRestart(base, readSettings(config({ model: 'm' })), undefined)).toBe(true);
  });
  it('does not restart for settings the running daemon takes as didChangeConfiguration', () => {
    expect(needsRestart(base, readSettings(config({ 'diagnostics.enabled': false })), undefined)).toBe(false);
    expect(needsRestart(base, readSettings(config({ 'auto.mode': 'off', scope: 'all' })), undefined)).toBe(false);
  });
});

describe('findExecutable and the start failure message', () => {
  it('finds a program on PATH or by path, and nothing where there is none', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cp-exe-'));
    const exe = path.join(dir, 'checkpoint');
    fs.writeFileSync(exe, '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'plain'), 'x', { mode: 0o644 });
    expect(findExecutable('checkpoint', { PATH: `/nonexistent${path.delimiter}${dir}` }, undefined)).toBe(exe);
    expect(findExecutable('plain', { PATH: dir }, undefined)).toBeUndefined();
    expect(findExecutable('./checkpoint', {}, dir)).toBe(exe);
    expect(findExecutable('checkpoint', { PATH: '/nonexistent' }, undefined)).toBeUndefined();
  });

  it('names the command, the cause and the exact install command', () => {
    const msg = startFailureMessage({ command: 'checkpoint', args: ['serve'] }, '"checkpoint" was not found');
    expect(msg).toContain('(checkpoint serve)');
    expect(msg).toContain('"checkpoint" was not found');
    expect(msg).toContain(INSTALL_COMMAND);
    expect(INSTALL_COMMAND).toBe('python3 -m venv .venv && .venv/bin/pip install -e .');
  });

  it('expandPath handles ~, ${userHome} and ${workspaceFolder}', () => {
    expect(expandPath('~/x', undefined, '/h')).toBe('/h/x');
    expect(expandPath('${userHome}/y', undefined, '/h')).toBe('/h/y');
    expect(expandPath('${workspaceFolder}/z', '/w', '/h')).toBe('/w/z');
  });
});
