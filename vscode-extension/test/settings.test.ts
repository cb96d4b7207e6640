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
  agentEnvironment,
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
    expect([s.sources, s.database, s.scope, s.extractor, s.model]).toEqual([[], '', 'workspace', 'auto', '']);
    expect([s.extraction, s.idleSeconds, s.maxPendingTurns]).toEqual(['auto', 20, 50]);
    expect([s['diagnostics.enabled'], s['diagnostics.severity.decision'], s['diagnostics.severity.question']]).toEqual([
      true,
      'information',
      'hint',
    ]);
    expect([s['budget.maxRequests'], s['budget.maxTokens'], s['budget.maxCost']]).toEqual([null, null, null]);
  });

  it('keeps the values as written for the daemon to check, and only its own command falls back', () => {
    const s = readSettings(
      config({ command: [], scope: 'everywhere', extractor: 'gpt', 'budget.maxRequests': -3, idleSeconds: -1 }),
    );
    expect(s.command).toEqual(['checkpoint', 'serve']);
    expect([s.scope, s.extractor, s['budget.maxRequests'], s.idleSeconds]).toEqual(['everywhere', 'gpt', -3, -1]);
  });
});

const settings = readSettings(
  config({
    command: ['${workspaceFolder}/.venv/bin/checkpoint', 'serve'],
    sources: ['~/a', '/b'],
    model: 'claude-sonnet-4-5',
    fallbackModels: ['claude-haiku-4-5'],
    'budget.maxTokens': 50000,
  }),
);
describe('daemonLaunch', () => {


  it('builds argv from checkpoint.command and passes the editor’s environment on', () => {
    const launch = daemonLaunch(settings, { PATH: '/usr/bin', CHECKPOINT_DB: '/keep.db', UNSET: undefined }, undefined, '/ws');
    expect(launch.command).toBe('/ws/.venv/bin/checkpoint');
    expect(launch.args).toEqual(['serve']);
    expect(launch.env).toEqual({ PATH: '/usr/bin', CHECKPOINT_DB: '/keep.db', PYTHONUNBUFFERED: '1' });
  });

  it('passes the API key as ANTHROPIC_API_KEY and never shows it in the log line', () => {
    const launch = daemonLaunch(settings, {}, 'sk-ant-secret-123', '/ws');
    expect(launch.env.ANTHROPIC_API_KEY).toBe('sk-ant-secret-123');
    const line = describeLaunch({ ...launch, env: { ...launch.env, CHECKPOINT_DB: '/d.db' } }, [
      'CHECKPOINT_DB',
      'CHECKPOINT_MODEL',
      'ANTHROPIC_API_KEY',
    ]);
    expect(line).toBe('/ws/.venv/bin/checkpoint serve (CHECKPOINT_DB=/d.db, ANTHROPIC_API_KEY=<set>)');
    expect(line).not.toContain('secret');
  });
});

describe('initializationOptions', () => {
  it('uses the daemon’s snake_case keys and leaves out settings at their defaults, but the editor’s own (marks)', () => {
    const opts = initializationOptions(
      readSettings(
        config({ extractor: 'heuristic', 'budget.maxRequests': 5, 'diagnostics.severity.constraint': 'warning', extraction: 'manual' }),
      ),
      undefined,
    );
    expect(opts).toEqual({
      extractor: 'heuristic', max_requests: 5, extraction: 'manual', severity: { constraint: 'warning' }, marks: 'codelens',
    });
    // CodeLens is VS Code's default, not the daemon's (any LSP editor gets diagnostics): always sent
    expect(initializationOptions(readSettings(config({})), undefined)).toEqual({ marks: 'codelens' });
    expect(initializationOptions(readSettings(config({ 'diagnostics.marks': 'diagnostics' })), undefined)).toEqual({ marks: 'diagnostics' });
  });

  it('sends a bad value as written, for the daemon to refuse by name', () => {
    const opts = initializationOptions(
      readSettings(config({ scope: 'everywhere', extractor: 'gpt', idleSeconds: -1, 'diagnostics.severity.question': 'loud' })),
      undefined,
    );
    expect(opts).toEqual({ scope: 'everywhere', extractor: 'gpt', idle_seconds: -1, severity: { question: 'loud' }, marks: 'codelens' });
  });

  it('passes every engine setting that was set, with paths expanded', () => {
    const opts = initializationOptions(settings, '/ws');
    expect(opts).toMatchObject({
      sources: [path.join(os.homedir(), 'a'), '/b'],
      model: 'claude-sonnet-4-5',
      fallback_models: ['claude-haiku-4-5'],
      max_tokens: 50000,
    });
    expect('db' in opts).toBe(false);
  });
});

describe('needsRestart', () => {
  const base = readSettings(config({}));
  it('restarts for a new command', () => {
    expect(needsRestart(base, readSettings(config({ command: ['/x/checkpoint', 'serve'] })))).toBe(true);
  });
  it('does not restart for settings the running daemon takes as didChangeConfiguration', () => {
    expect(needsRestart(base, readSettings(config({ 'diagnostics.enabled': false })))).toBe(false);
    expect(needsRestart(base, readSettings(config({ extraction: 'manual', scope: 'all', sources: ['/t'] })))).toBe(false);
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
    // From a clone: checkpoint-decisions is not on PyPI yet (and `checkpoint` there is another project).
    expect(msg).toContain('`pipx install /path/to/a/clone/of/checkpoint`');
    expect(msg).not.toContain('pipx install checkpoint-decisions');
  });

  it('expandPath handles ~, ${userHome} and ${workspaceFolder}', () => {
    expect(expandPath('~/x', undefined, '/h')).toBe('/h/x');
    expect(expandPath('${userHome}/y', undefined, '/h')).toBe('/h/y');
    expect(expandPath('${workspaceFolder}/z', '/w', '/h')).toBe('/w/z');
  });
});

describe('agentReminders', () => {
  it('goes to the terminals as CHECKPOINT_AGENT_REMINDERS when set, as written when not a boolean', () => {
    expect(readSettings(config({})).agentReminders).toBeNull();
    expect(agentEnvironment(readSettings(config({})))).toEqual({ CHECKPOINT_AGENT_REMINDERS: undefined });
    expect(agentEnvironment(readSettings(config({ agentReminders: true })))).toEqual({ CHECKPOINT_AGENT_REMINDERS: '1' });
    expect(agentEnvironment(readSettings(config({ agentReminders: false })))).toEqual({
      CHECKPOINT_AGENT_REMINDERS: '0',
    });
    // Not replaced here: the hook, the one validator, refuses it by name.
    expect(agentEnvironment(readSettings(config({ agentReminders: 'sometimes' })))).toEqual({
      CHECKPOINT_AGENT_REMINDERS: 'sometimes',
    });
  });
});
