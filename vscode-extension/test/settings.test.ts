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
  warnOnce,
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
    expect(s.auto).toEqual({ extraction: 'auto', idleSeconds: 20, maxPendingTurns: 50 });
    expect(s.diagnostics).toEqual({
      enabled: true,
      severity: { decision: 'information', constraint: 'information', question: 'hint' },
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
        idleSeconds: -1,
        extraction: 'sometimes',
      }),
    );
    expect(s.command).toEqual(['checkpoint', 'serve']);
    expect(s.sources).toEqual(['/t']);
    expect(s.extractor).toBe('auto');
    expect(s.budget.maxRequests).toBeNull();
    expect(s.diagnostics.severity.constraint).toBe('information');
    expect(s.auto).toEqual({ extraction: 'auto', idleSeconds: 20, maxPendingTurns: 50 });
  });

  it('says which enumerated setting it replaced, with the allowed values, keeping the default', () => {
    const said: string[] = [];
    const s = readSettings(
      config({
        scope: 'everywhere',
        extractor: 'gpt',
        extraction: 'sometimes',
        'diagnostics.severity.question': 'loud',
        'diagnostics.severity.decision': 'error',
      }),
      (m) => said.push(m),
    );
    expect([s.scope, s.extractor, s.auto.extraction, s.diagnostics.severity.question]).toEqual([
      'workspace',
      'auto',
      'auto',
      'hint',
    ]);
    expect(s.diagnostics.severity.decision).toBe('error');
    expect(said).toEqual([
      'Checkpoint: the setting "checkpoint.scope" is "everywhere", not one of workspace, all; using workspace.',
      'Checkpoint: the setting "checkpoint.extractor" is "gpt", not one of auto, anthropic, claude-code, codex, ' +
        'heuristic; using auto.',
      'Checkpoint: the setting "checkpoint.extraction" is "sometimes", not one of auto, manual; using auto.',
      'Checkpoint: the setting "checkpoint.diagnostics.severity.question" is "loud", not one of error, warning, ' +
        'information, hint, off; using hint.',
    ]);
    // Good or unset values say nothing.
    said.length = 0;
    readSettings(config({ scope: 'all', extractor: 'codex' }), (m) => said.push(m));
    expect(said).toEqual([]);
  });

  it('says a bad value once however often the settings are read, and a new bad value again', () => {
    const shown: string[] = [];
    const warn = warnOnce((m) => shown.push(m));
    for (let i = 0; i < 3; i++) {
      readSettings(config({ scope: 'everywhere' }), warn);
    }
    readSettings(config({ scope: 'nowhere' }), warn);
    expect(shown).toHaveLength(2);
    expect(shown[1]).toContain('"nowhere"');
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
  it('uses the daemon’s snake_case keys and leaves out engine settings that were not set', () => {
    const opts = initializationOptions(
      readSettings(
        config({ extractor: 'heuristic', 'budget.maxRequests': 5, 'diagnostics.severity.constraint': 'warning', extraction: 'manual' }),
      ),
      undefined,
    );
    expect(opts).toEqual({
      extractor: 'heuristic',
      max_requests: 5,
      scope: 'workspace',
      extraction: 'manual',
      idle_seconds: 20,
      max_pending_turns: 50,
      diagnostics: true,
      severity: { decision: 'information', constraint: 'warning', question: 'hint' },
    });
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
  });

  it('expandPath handles ~, ${userHome} and ${workspaceFolder}', () => {
    expect(expandPath('~/x', undefined, '/h')).toBe('/h/x');
    expect(expandPath('${userHome}/y', undefined, '/h')).toBe('/h/y');
    expect(expandPath('${workspaceFolder}/z', '/w', '/h')).toBe('/w/z');
  });
});

describe('agentReminders', () => {
  it('is on by default, goes to the terminals as CHECKPOINT_AGENT_REMINDERS, and a non-boolean is said', () => {
    expect(readSettings(config({})).agentReminders).toBe(true);
    expect(agentEnvironment(readSettings(config({})))).toEqual({ CHECKPOINT_AGENT_REMINDERS: '1' });
    expect(agentEnvironment(readSettings(config({ agentReminders: false })))).toEqual({
      CHECKPOINT_AGENT_REMINDERS: '0',
    });
    const said: string[] = [];
    expect(readSettings(config({ agentReminders: 'sometimes' }), (m) => said.push(m)).agentReminders).toBe(true);
    expect(said).toEqual([
      'Checkpoint: the setting "checkpoint.agentReminders" is "sometimes", not true or false; using true.',
    ]);
  });
});
