/**
 * The extension's settings (`checkpoint.*`), read once into a plain object, and what the daemon gets
 * from them: its argv, its environment and its initializationOptions.
 *
 * Settings go to the daemon as initializationOptions (its top settings layer, over its config file
 * and the CHECKPOINT_* environment) and, on change, as didChangeConfiguration. Engine settings left
 * empty are not sent, so the daemon's own defaults and an environment the editor was started with
 * still apply. The API key is never a setting: it comes from SecretStorage or the environment and
 * goes to the daemon process as ANTHROPIC_API_KEY only.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { SECTION, SettingIds } from './constants';
import type { ItemKind } from './protocol';

export const DEFAULT_COMMAND: readonly string[] = ['checkpoint', 'serve'];
export const API_KEY_ENV = 'ANTHROPIC_API_KEY';

/**
 * How to get the daemon, shown whenever it cannot be started. Run in a clone of the Checkpoint
 * repository; then point `checkpoint.command` at the venv's `checkpoint`.
 */
export const INSTALL_COMMAND = 'python3 -m venv .venv && .venv/bin/pip install -e .';

export type Severity = 'error' | 'warning' | 'information' | 'hint' | 'off';
export type Extraction = 'auto' | 'manual';

export interface Settings {
  command: string[];
  sources: string[];
  database: string;
  scope: 'workspace' | 'all';
  extractor: 'auto' | 'anthropic' | 'claude-code' | 'codex' | 'heuristic';
  model: string;
  fallbackModels: string[];
  budget: { maxRequests: number | null; maxTokens: number | null; maxCost: number | null };
  /** The auto-checkpoint policy. */
  auto: { extraction: Extraction; idleSeconds: number; maxPendingTurns: number };
  diagnostics: { enabled: boolean; severity: Record<ItemKind, Severity> };
  /** Whether coding agents started from this editor's terminals get the pre-edit reminder (the hook
   * `checkpoint hook pre-edit` runs in the agent's process, so it reads CHECKPOINT_AGENT_REMINDERS). */
  agentReminders: boolean;
}

/** The part of `WorkspaceConfiguration` this module needs. */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

const SEVERITIES: readonly Severity[] = ['error', 'warning', 'information', 'hint', 'off'];

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : [];
}

function positiveOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : null;
}

/** Told of a setting that was replaced by its default: one line, naming it and the allowed values. */
export type SettingWarning = (message: string) => void;

/**
 * `show` called once per distinct message: settings are read again on every change, and a bad value
 * left in place must not be said each time.
 */
export function warnOnce(show: SettingWarning): SettingWarning {
  const said = new Set<string>();
  return (message) => {
    if (!said.has(message)) {
      said.add(message);
      show(message);
    }
  };
}

/** Read `checkpoint.*` into {@link Settings}, with defaults for anything missing or malformed; an
 * enumerated setting with an unknown value keeps its default and `warn` is told (never silently). */
export function readSettings(config: ConfigReader, warn: SettingWarning = () => undefined): Settings {
  const oneOf = <T extends string>(key: string, allowed: readonly T[], fallback: T): T => {
    const value = config.get(key);
    if (value === undefined || value === null) {
      return fallback;
    }
    if (allowed.includes(value as T)) {
      return value as T;
    }
    warn(
      `Checkpoint: the setting "${SECTION}.${key}" is ${JSON.stringify(value)}, not one of ` +
        `${allowed.join(', ')}; using ${fallback}.`,
    );
    return fallback;
  };
  const flag = (key: string, fallback: boolean): boolean => {
    const value = config.get(key);
    if (value === undefined || value === null || typeof value === 'boolean') {
      return value ?? fallback;
    }
    warn(`Checkpoint: the setting "${SECTION}.${key}" is ${JSON.stringify(value)}, not true or false; using ${fallback}.`);
    return fallback;
  };
  const command = stringList(config.get('command'));
  const idle = config.get<number>('idleSeconds');
  const maxPending = config.get<number>('maxPendingTurns');
  return {
    command: command.length ? command : [...DEFAULT_COMMAND],
    sources: stringList(config.get('sources')),
    database: (config.get<string>('database') ?? '').trim(),
    scope: oneOf('scope', ['workspace', 'all'] as const, 'workspace'),
    extractor: oneOf('extractor', ['auto', 'anthropic', 'claude-code', 'codex', 'heuristic'] as const, 'auto'),
    model: (config.get<string>('model') ?? '').trim(),
    fallbackModels: stringList(config.get('fallbackModels')),
    budget: {
      maxRequests: positiveOrNull(config.get('budget.maxRequests')),
      maxTokens: positiveOrNull(config.get('budget.maxTokens')),
      maxCost: positiveOrNull(config.get('budget.maxCost')),
    },
    auto: {
      extraction: oneOf('extraction', ['auto', 'manual'] as const, 'auto'),
      idleSeconds: typeof idle === 'number' && idle >= 0 ? idle : 20,
      maxPendingTurns: typeof maxPending === 'number' && maxPending >= 0 ? Math.floor(maxPending) : 50,
    },
    diagnostics: {
      enabled: config.get<boolean>('diagnostics.enabled') ?? true,
      severity: {
        decision: oneOf('diagnostics.severity.decision', SEVERITIES, 'information'),
        constraint: oneOf('diagnostics.severity.constraint', SEVERITIES, 'information'),
        question: oneOf('diagnostics.severity.question', SEVERITIES, 'hint'),
      },
    },
    agentReminders: flag('agentReminders', true),
  };
}

/** What the editor's terminals add to their environment, for the agents started there: the pre-edit
 * reminder switch, as the hook reads it (config.py's CHECKPOINT_AGENT_REMINDERS). */
export function agentEnvironment(settings: Settings): Record<string, string> {
  return { CHECKPOINT_AGENT_REMINDERS: settings.agentReminders ? '1' : '0' };
}

/** Expand `~` and `${workspaceFolder}` / `${userHome}` in a path-like setting. */
export function expandPath(value: string, workspaceFolder: string | undefined, home = os.homedir()): string {
  let out = value.replace(/\$\{userHome\}/g, home);
  if (workspaceFolder !== undefined) {
    out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  }
  if (out === '~' || out.startsWith('~/')) {
    out = path.join(home, out.slice(1));
  }
  return out;
}

export interface DaemonLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The daemon's process: argv from `checkpoint.command`, the editor's environment plus the API key. */
export function daemonLaunch(
  settings: Settings,
  baseEnv: Record<string, string | undefined>,
  apiKey: string | undefined,
  workspaceFolder: string | undefined,
): DaemonLaunch {
  const argv = settings.command.map((part) => expandPath(part, workspaceFolder));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(baseEnv)) {
    if (value !== undefined) {
      env[key] = value;
    }
  }
  if (apiKey) {
    env[API_KEY_ENV] = apiKey;
  }
  // The daemon talks LSP over stdout: make sure Python never buffers it behind a pipe.
  env.PYTHONUNBUFFERED = '1';
  return { command: argv[0], args: argv.slice(1), env };
}

/**
 * What goes to the daemon as initializationOptions and, on change, as
 * `workspace/didChangeConfiguration` `{settings: {checkpoint: ...}}`. Keys are the daemon's own
 * (snake_case, as in config.py); engine settings that were left empty are omitted.
 */
export function initializationOptions(settings: Settings, workspaceFolder: string | undefined): Record<string, unknown> {
  const opts: Record<string, unknown> = {};
  if (settings.database) {
    opts.db = expandPath(settings.database, workspaceFolder);
  }
  if (settings.sources.length) {
    opts.sources = settings.sources.map((s) => expandPath(s, workspaceFolder));
  }
  if (settings.extractor !== 'auto') {
    opts.extractor = settings.extractor;
  }
  if (settings.model) {
    opts.model = settings.model;
  }
  if (settings.fallbackModels.length) {
    opts.fallback_models = settings.fallbackModels;
  }
  if (settings.budget.maxRequests !== null) {
    opts.max_requests = settings.budget.maxRequests;
  }
  if (settings.budget.maxTokens !== null) {
    opts.max_tokens = settings.budget.maxTokens;
  }
  if (settings.budget.maxCost !== null) {
    opts.max_cost = settings.budget.maxCost;
  }
  opts.scope = settings.scope;
  opts.extraction = settings.auto.extraction;
  opts.idle_seconds = settings.auto.idleSeconds;
  opts.max_pending_turns = settings.auto.maxPendingTurns;
  opts.diagnostics = settings.diagnostics.enabled;
  opts.severity = { ...settings.diagnostics.severity };
  return opts;
}

/**
 * Whether a change from `before` to `after` needs a new daemon process: only a new argv does.
 * Every other setting reaches the running daemon as didChangeConfiguration, which it applies live.
 */
export function needsRestart(before: Settings, after: Settings): boolean {
  return JSON.stringify(before.command) !== JSON.stringify(after.command);
}

/** The launch as one line for the log, with every secret replaced. */
export function describeLaunch(launch: DaemonLaunch, extraEnvKeys: readonly string[]): string {
  const quoted = [launch.command, ...launch.args].map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' ');
  const shown = extraEnvKeys
    .filter((k) => launch.env[k] !== undefined)
    .map((k) => `${k}=${k === API_KEY_ENV ? '<set>' : launch.env[k]}`);
  return shown.length ? `${quoted} (${shown.join(', ')})` : quoted;
}

/**
 * Where the daemon's program is, resolved the way spawn would: a name with a slash relative to
 * `cwd`, a bare name on PATH. Undefined when it is not there, so the extension can say so itself
 * instead of a generic "couldn't create connection".
 */
export function findExecutable(command: string, env: Record<string, string>, cwd: string | undefined): string | undefined {
  const isExecutable = (file: string): boolean => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/') || command.includes(path.sep)) {
    const full = path.resolve(cwd ?? process.cwd(), command);
    return isExecutable(full) ? full : undefined;
  }
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const full = path.join(dir, command + ext);
      if (isExecutable(full)) {
        return full;
      }
    }
  }
  return undefined;
}

/** The error shown when the daemon cannot be started or dies: the cause, and how to install it. */
export function startFailureMessage(launch: Pick<DaemonLaunch, 'command' | 'args'>, reason: string): string {
  const argv = [launch.command, ...launch.args].join(' ');
  return (
    `Checkpoint: the daemon (${argv}) is not running: ${reason}. ` +
    `Remove the "${SettingIds.command}" setting to use the daemon the extension brings, or install one in a clone ` +
    `of the Checkpoint repository with \`${INSTALL_COMMAND}\` and set "${SettingIds.command}" to ` +
    `["<clone>/.venv/bin/checkpoint", "serve"]; then run Checkpoint: Restart Daemon.`
  );
}
