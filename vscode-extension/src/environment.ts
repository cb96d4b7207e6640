/**
 * Which daemon the extension starts, and the private environment it installs for it.
 *
 * The platform .vsix carries `bundled/`: the project's wheel, its dependency wheels for the CPython
 * versions named in `bundled/manifest.json`, and pip's wheel (scripts/build-vsix.sh). In order:
 *   1. `checkpoint.command` set by the user: used as it is;
 *   2. a `checkpoint` on PATH whose `--version` is the bundled daemon's: used;
 *   3. the bundled daemon, in a venv under the extension's global storage, keyed by the daemon's
 *      version and a hash of the wheels (an extension upgrade gets a new one, the old is removed).
 *      Made on first start with the Python the Python extension selected, else a `python3` on PATH,
 *      offline (`pip --no-index --find-links bundled/wheels`);
 *   4. no bundle (a build without one): `checkpoint` on PATH, whatever its version.
 * Two windows may start at once: each builds in its own temporary folder and renames it into place;
 * a rename that finds the folder already there means the other window won, and its venv is used.
 * The venv is run as `python -m checkpoint`, never through pip's scripts, whose shebangs name the
 * temporary folder.
 */

import { execFile } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { DISTRIBUTION, SettingIds } from './constants';

export interface Manifest {
  /** The bundled daemon's version, as `checkpoint --version` says it. */
  version: string;
  /** Changes with any bundled wheel. */
  key: string;
  /** The CPython versions wheels are bundled for, e.g. ["3.11", "3.12"]. */
  pythons: string[];
}

export interface Program {
  command: string;
  args: string[];
}

export interface Python {
  path: string;
  /** "3.12"; undefined when it could not be run. */
  version: string | undefined;
  /** Where it came from, for messages: "the Python extension's interpreter", "python3 on PATH". */
  origin: string;
}

export type Choice =
  | { kind: 'program'; program: Program; why: string }
  | { kind: 'bundled'; why: string };

/** Steps 1, 2 and 4 of the order above; 'bundled' leaves the venv to {@link ensureEnvironment}. */
export function chooseDaemon(input: {
  argv: string[];
  userSet: boolean;
  manifest: Manifest | undefined;
  onPath: { path: string; version: string | undefined } | undefined;
}): Choice {
  const { argv, manifest, onPath } = input;
  const rest = argv.slice(1);
  if (input.userSet) {
    return { kind: 'program', program: { command: argv[0], args: rest }, why: `the ${SettingIds.command} setting` };
  }
  if (onPath && manifest && onPath.version === manifest.version) {
    return { kind: 'program', program: { command: onPath.path, args: rest }, why: `checkpoint ${manifest.version} on PATH` };
  }
  if (manifest) {
    return { kind: 'bundled', why: onPath ? `the bundled daemon (${onPath.path} is ${onPath.version ?? 'of unknown version'}, not ${manifest.version})` : 'the bundled daemon' };
  }
  return { kind: 'program', program: { command: argv[0], args: rest }, why: 'no bundled daemon in this build' };
}

/** The first candidate whose version has bundled wheels, or the message naming what to install. */
export function choosePython(candidates: readonly Python[], manifest: Manifest): Python | { message: string } {
  const usable = candidates.find((p) => p.version !== undefined && manifest.pythons.includes(p.version));
  if (usable) {
    return usable;
  }
  const seen = candidates.length
    ? `found: ${candidates.map((p) => `${p.path} (${p.version ? `Python ${p.version}` : 'would not run'}, ${p.origin})`).join('; ')}`
    : 'none found: no python3 on PATH and no interpreter selected in the Python extension';
  return {
    message:
      `Checkpoint needs Python ${versionList(manifest.pythons)} to install its daemon (${seen}). ` +
      `Install Python ${manifest.pythons[manifest.pythons.length - 1]} (python.org, or your package manager: ` +
      `e.g. "sudo apt install python3", "brew install python3"), or select one with the Python extension, ` +
      `then run "Checkpoint: Restart Daemon". Or set "${SettingIds.command}" to a checkpoint you installed.`,
  };
}

function versionList(versions: readonly string[]): string {
  return versions.length > 1 ? `${versions.slice(0, -1).join(', ')} or ${versions[versions.length - 1]}` : versions.join('');
}

export function readManifest(extensionPath: string): Manifest | undefined {
  try {
    const raw = JSON.parse(fs.readFileSync(path.join(extensionPath, 'bundled', 'manifest.json'), 'utf8')) as Partial<Manifest>;
    if (typeof raw.version === 'string' && typeof raw.key === 'string' && Array.isArray(raw.pythons)) {
      return { version: raw.version, key: raw.key, pythons: raw.pythons.map(String) };
    }
  } catch {
    // no bundle: a universal build, or the extension run from its source folder
  }
  return undefined;
}

/** Run a program, resolving to its trimmed stdout, or undefined if it fails or takes too long. */
export function output(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 15_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout: timeoutMs, encoding: 'utf8' }, (err, stdout) => resolve(err ? undefined : stdout.trim()));
  });
}

/** "checkpoint 0.1.0" → "0.1.0". */
export async function checkpointVersion(program: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const said = await output(program, ['--version'], env);
  return said?.startsWith('checkpoint ') ? said.slice('checkpoint '.length) : undefined;
}

/** Its major.minor, if it runs and has the venv module. */
export async function pythonVersion(program: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return output(program, ['-c', 'import sys, venv; print("%d.%d" % sys.version_info[:2])'], env);
}

export function venvPython(dir: string): string {
  return process.platform === 'win32' ? path.join(dir, 'Scripts', 'python.exe') : path.join(dir, 'bin', 'python');
}

export function environmentDir(storage: string, manifest: Manifest): string {
  return path.join(storage, 'daemon', `${manifest.version}-${manifest.key}`);
}

/** The finished venv's python, if it is there and its interpreter still exists. */
export function readyPython(dir: string): string | undefined {
  const python = venvPython(dir);
  return fs.existsSync(python) ? python : undefined; // existsSync follows the venv's symlink
}

/**
 * The venv at `dir`, made by `build(tmp)` in a sibling temporary folder and renamed into place.
 * Resolves to the venv's python; `created` says whether this call made it (false: already there, or
 * another window finished first). Older siblings (earlier versions, abandoned builds) are removed.
 */
export async function ensureEnvironment(dir: string, build: (tmp: string) => Promise<void>): Promise<{ python: string; created: boolean }> {
  const ready = readyPython(dir);
  if (ready) {
    return { python: ready, created: false };
  }
  const parent = path.dirname(dir);
  fs.mkdirSync(parent, { recursive: true });
  if (fs.existsSync(dir)) {
    // A venv whose interpreter is gone (that Python was uninstalled): made again.
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const tmp = path.join(parent, `.new-${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
  try {
    await build(tmp);
    try {
      fs.renameSync(tmp, dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const python = readyPython(dir);
      if ((code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EPERM') && python) {
        return { python, created: false };
      }
      throw err;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  removeOthers(parent, path.basename(dir));
  return { python: venvPython(dir), created: true };
}

const ABANDONED_MS = 60 * 60 * 1000;

function removeOthers(parent: string, keep: string): void {
  for (const name of fs.readdirSync(parent)) {
    const full = path.join(parent, name);
    // Another window may be building in a .new- folder right now: only an old one is abandoned.
    const abandoned = !name.startsWith('.new-') || Date.now() - fs.statSync(full).mtimeMs > ABANDONED_MS;
    if (name !== keep && abandoned) {
      fs.rmSync(full, { recursive: true, force: true });
    }
  }
}

/** pip's and Python's own settings, which must not send the offline install to an index. */
function offlineEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith('PIP_') && k !== 'PYTHONHOME' && k !== 'PYTHONPATH' && k !== 'VIRTUAL_ENV') {
      out[k] = v;
    }
  }
  out.PIP_CONFIG_FILE = process.platform === 'win32' ? 'nul' : '/dev/null';
  return out;
}

/** Make the daemon's venv in `tmp` with `python`, from the wheels in `bundled/wheels` only. */
export async function buildEnvironment(tmp: string, python: string, extensionPath: string, manifest: Manifest, env: NodeJS.ProcessEnv): Promise<void> {
  const wheels = path.join(extensionPath, 'bundled', 'wheels');
  const pip = fs.readdirSync(wheels).find((f) => /^pip-.*\.whl$/.test(f));
  if (!pip) {
    throw new Error(`no pip wheel in ${wheels}`);
  }
  const clean = offlineEnv(env);
  await run(python, ['-m', 'venv', '--without-pip', tmp], clean);
  const venv = venvPython(tmp);
  // pip runs from its wheel (a supported use) and installs into the interpreter running it, the venv's.
  await run(venv, [path.join(wheels, pip, 'pip'), 'install', '--no-index', '--find-links', wheels, '--no-cache-dir',
    '--disable-pip-version-check', '--no-warn-script-location', '--quiet', `${DISTRIBUTION}==${manifest.version}`], clean);
  const version = await output(venv, ['-m', 'checkpoint', '--version'], clean);
  if (version !== `checkpoint ${manifest.version}`) {
    throw new Error(`the new environment's daemon says "${version ?? 'nothing'}", not checkpoint ${manifest.version}`);
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { env, timeout: 300_000, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      if (err) {
        const said = stderr.trim().split('\n').slice(-3).join(' ').slice(0, 500);
        reject(new Error(`${path.basename(command)} ${args.slice(0, 2).join(' ')} failed: ${said || err.message}`));
      } else {
        resolve();
      }
    });
  });
}
