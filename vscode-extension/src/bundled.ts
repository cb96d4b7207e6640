/**
 * The editor's side of {@link chooseDaemon}: reads `checkpoint.command` as the user set it, asks
 * the Python extension (if installed) for its interpreter, and makes the bundled daemon's venv under
 * a progress notification. The decisions themselves are in environment.ts.
 */

import * as vscode from 'vscode';

import {
  buildEnvironment,
  checkpointVersion,
  chooseDaemon,
  choosePython,
  environmentDir,
  ensureEnvironment,
  pythonVersion,
  readManifest,
  readyPython,
  type Program,
  type Python,
} from './environment';
import { SECTION } from './constants';
import { LaunchError } from './lifecycle';
import { findExecutable } from './settings';


/** The daemon's program for `argv` (from `checkpoint.command`, already expanded). */
export async function daemonProgram(
  context: vscode.ExtensionContext,
  argv: string[],
  env: Record<string, string>,
  log: vscode.LogOutputChannel,
): Promise<Program> {
  const inspected = vscode.workspace.getConfiguration(SECTION).inspect<string[]>('command');
  const userSet = [inspected?.globalValue, inspected?.workspaceValue, inspected?.workspaceFolderValue].some((v) => v !== undefined);
  const manifest = readManifest(context.extensionPath);
  let onPath: { path: string; version: string | undefined } | undefined;
  if (!userSet) {
    const found = findExecutable(argv[0], env, undefined);
    onPath = found ? { path: found, version: await checkpointVersion(found, env) } : undefined;
  }
  const choice = chooseDaemon({ argv, userSet, manifest, onPath });
  if (choice.kind === 'program') {
    log.info(`The daemon: ${choice.why}.`);
    return choice.program;
  }
  if (!manifest) {
    throw new LaunchError('no bundled daemon'); // chooseDaemon says 'bundled' only with a manifest
  }
  const dir = environmentDir(context.globalStorageUri.fsPath, manifest);
  const ready = readyPython(dir);
  const args = ['-m', 'checkpoint', ...argv.slice(1)];
  if (ready) {
    log.info(`The daemon: ${choice.why}, in ${dir}.`);
    return { command: ready, args };
  }
  const candidates = await pythons(env);
  const python = choosePython(candidates, manifest);
  if ('message' in python) {
    throw new LaunchError(python.message);
  }
  log.info(`Installing the bundled daemon ${manifest.version} into ${dir} with ${python.path} (Python ${python.version}, ${python.origin}).`);
  const t0 = Date.now();
  let made: { python: string; created: boolean };
  try {
    made = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Checkpoint: installing its daemon with Python ${python.version} (first start, offline)…` },
      () => ensureEnvironment(dir, (tmp) => buildEnvironment(tmp, python.path, context.extensionPath, manifest, env)),
    );
  } catch (err) {
    throw new LaunchError(`installing the bundled daemon with ${python.path} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  log.info(made.created
    ? `The daemon's environment was created in ${((Date.now() - t0) / 1000).toFixed(1)}s.`
    : 'Another window created the daemon\'s environment first: using it.');
  return { command: made.python, args };
}

/** The interpreters to try, in order: the Python extension's, then python3 (and python3.N) on PATH. */
async function pythons(env: Record<string, string>): Promise<Python[]> {
  const found: Python[] = [];
  const selected = await pythonExtensionInterpreter();
  if (selected) {
    found.push({ path: selected, version: await pythonVersion(selected, env), origin: "the Python extension's interpreter" });
  }
  const names = process.platform === 'win32' ? ['python', 'python3'] : ['python3', 'python3.14', 'python3.13', 'python3.12', 'python3.11'];
  for (const name of names) {
    const full = findExecutable(name, env, undefined);
    if (full && !found.some((p) => p.path === full)) {
      found.push({ path: full, version: await pythonVersion(full, env), origin: `${name} on PATH` });
    }
  }
  return found;
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(env: { path: string }): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
}

async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!ext) {
    return undefined;
  }
  try {
    const api = await ext.activate();
    const active = api.environments?.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
    if (!active) {
      return undefined;
    }
    const resolved = await api.environments?.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? active.path;
  } catch {
    return undefined; // a Python extension that fails is no reason not to try PATH
  }
}
