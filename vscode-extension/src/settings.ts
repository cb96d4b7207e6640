/**
 * The extension's settings (`checkpoint.*`), read once into a plain object, and what the daemon gets
 * from them: its argv, its environment and its initializationOptions.
 *
 * Settings go to the daemon as initializationOptions (its top settings layer, over its config file
 * and the CHECKPOINT_* environment) and, on change, as didChangeConfiguration. Settings left at their
 * defaults are not sent, so the daemon's own defaults and an environment the editor was started with
 * still apply. The API key is never a setting: it comes from SecretStorage or the environment and
 * goes to the daemon process as ANTHROPIC_API_KEY only.
 *
 * The settings' names, defaults and allowed values are the daemon's, generated into settingsSchema.ts
 * (and package.json) by scripts/vscode_settings.py. Values are not checked here: the daemon is their
 * one validator, and shows a warning naming a setting it refused.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { SettingIds } from './constants';
import { SETTINGS } from './settingsSchema';

/** A `checkpoint.*` setting's id without the prefix, as settingsSchema.ts (generated) lists them. */
export type SettingId = keyof typeof SETTINGS;
const SETTING_IDS = Object.keys(SETTINGS) as SettingId[];

export const DEFAULT_COMMAND: readonly string[] = SETTINGS.command.default;
export const API_KEY_ENV = 'ANTHROPIC_API_KEY';

/**
 * How to get the daemon, shown whenever it cannot be started. Run in a clone of the Checkpoint
 * repository; then point `checkpoint.command` at the venv's `checkpoint`.
 */
export const INSTALL_COMMAND = 'python3 -m venv .venv && .venv/bin/pip install -e .';

/**
 * How to install the daemon as a command on PATH (`checkpoint`), from a clone: the distribution
 * (checkpoint-decisions) is not on PyPI yet, and a line naming it would fail.
 */
export const PACKAGE_INSTALL_COMMAND = 'pipx install /path/to/a/clone/of/checkpoint';

/**
 * Every setting as the user wrote it, or its default. Values the daemon reads are not checked here:
 * the daemon is their one validator and says which one it refused. `command` is the extension's own.
 */
export type Settings = { readonly [K in SettingId]: unknown } & { readonly command: readonly string[] };

/** The part of `WorkspaceConfiguration` this module needs. */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : [];
}

/** Read `checkpoint.*` into {@link Settings}: each setting as written, or its default when unset. */
export function readSettings(config: ConfigReader): Settings {
  const values = Object.fromEntries(SETTING_IDS.map((id) => [id, config.get(id) ?? SETTINGS[id].default]));
  const command = stringList(config.get('command'));
  return { ...(values as Record<SettingId, unknown>), command: command.length ? command : [...DEFAULT_COMMAND] };
}

/** What the editor's terminals add to their environment, for the agents started there: the pre-edit
 * reminder switch, as the hook reads it (config.py's CHECKPOINT_AGENT_REMINDERS); undefined: not set
 * here (the config file or the default applies). A value that is not true or false is passed as
 * written: the hook refuses it by name, and `checkpoint status` says so. */
export function agentEnvironment(settings: Settings): Record<string, string | undefined> {
  const value = settings.agentReminders;
  if (value === null || value === undefined) {
    return { CHECKPOINT_AGENT_REMINDERS: undefined };
  }
  return { CHECKPOINT_AGENT_REMINDERS: value === true ? '1' : value === false ? '0' : String(value) };
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

/** `value` with `~` and `${...}` expanded, where it is a path or a list of paths. */
function expandPaths(value: unknown, workspaceFolder: string | undefined): unknown {
  if (typeof value === 'string') {
    return expandPath(value, workspaceFolder);
  }
  return Array.isArray(value) ? value.map((v) => expandPaths(v, workspaceFolder)) : value;
}

/**
 * What goes to the daemon as initializationOptions and, on change, as
 * `workspace/didChangeConfiguration` `{settings: {checkpoint: ...}}`. Keys are the daemon's own
 * options (snake_case, as settingsSchema.ts names them); a setting at its default is left out, so the
 * daemon's own default applies (for an engine setting: its config file and environment too).
 */
export function initializationOptions(settings: Settings, workspaceFolder: string | undefined): Record<string, unknown> {
  const opts: Record<string, unknown> = {};
  for (const id of SETTING_IDS) {
    const spec = SETTINGS[id];
    const value = settings[id];
    // A default that is the editor's own (`sent`), not the daemon's, is sent all the same.
    if (spec.option === null || (JSON.stringify(value) === JSON.stringify(spec.default) && !('sent' in spec))) {
      continue;
    }
    const [outer, inner] = spec.option.split('.');
    const sent = spec.path ? expandPaths(value, workspaceFolder) : value;
    if (inner === undefined) {
      opts[outer] = sent;
    } else {
      opts[outer] = { ...(opts[outer] as Record<string, unknown> | undefined), [inner]: sent };
    }
  }
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
    `Remove the "${SettingIds.command}" setting to use the daemon the extension brings, or install one with ` +
    `\`${PACKAGE_INSTALL_COMMAND}\` (a checkpoint on PATH), or in a clone of the Checkpoint repository with ` +
    `\`${INSTALL_COMMAND}\` and set "${SettingIds.command}" to ["<clone>/.venv/bin/checkpoint", "serve"]; ` +
    `then run Checkpoint: Restart Daemon.`
  );
}
