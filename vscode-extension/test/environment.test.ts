import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  chooseDaemon,
  choosePython,
  environmentDir,
  ensureEnvironment,
  readManifest,
  venvPython,
  type Manifest,
} from '../src/environment';

const manifest: Manifest = { version: '0.1.0', key: 'abc123', pythons: ['3.11', '3.12', '3.13', '3.14'] };
const argv = ['checkpoint', 'serve'];

describe('chooseDaemon', () => {
  it('uses checkpoint.command as it is when the user set it, whatever is bundled or on PATH', () => {
    const choice = chooseDaemon({ argv: ['/opt/cp/bin/checkpoint', 'serve'], userSet: true, manifest, onPath: { path: '/usr/bin/checkpoint', version: '0.1.0' } });
    expect(choice).toEqual({ kind: 'program', program: { command: '/opt/cp/bin/checkpoint', args: ['serve'] }, why: 'the checkpoint.command setting' });
  });

  it('uses a checkpoint on PATH of the bundled version', () => {
    const choice = chooseDaemon({ argv, userSet: false, manifest, onPath: { path: '/home/u/.local/bin/checkpoint', version: '0.1.0' } });
    expect(choice).toMatchObject({ kind: 'program', program: { command: '/home/u/.local/bin/checkpoint', args: ['serve'] } });
  });

  it('prefers the bundled daemon to a checkpoint on PATH of another version, and says why', () => {
    const choice = chooseDaemon({ argv, userSet: false, manifest, onPath: { path: '/usr/bin/checkpoint', version: '0.0.9' } });
    expect(choice).toEqual({ kind: 'bundled', why: 'the bundled daemon (/usr/bin/checkpoint is 0.0.9, not 0.1.0)' });
    expect(chooseDaemon({ argv, userSet: false, manifest, onPath: undefined })).toEqual({ kind: 'bundled', why: 'the bundled daemon' });
  });

  it('falls back to checkpoint on PATH, any version, in a build without a bundle', () => {
    const choice = chooseDaemon({ argv, userSet: false, manifest: undefined, onPath: undefined });
    expect(choice).toMatchObject({ kind: 'program', program: { command: 'checkpoint', args: ['serve'] }, why: 'no bundled daemon in this build' });
  });
});

describe('choosePython', () => {
  it('takes the first candidate whose version has bundled wheels', () => {
    const chosen = choosePython(
      [
        { path: '/ext/py3.9', version: '3.9', origin: "the Python extension's interpreter" },
        { path: '/broken', version: undefined, origin: 'python3 on PATH' },
        { path: '/usr/bin/python3.12', version: '3.12', origin: 'python3.12 on PATH' },
        { path: '/usr/bin/python3.13', version: '3.13', origin: 'python3.13 on PATH' },
      ],
      manifest,
    );
    expect(chosen).toEqual({ path: '/usr/bin/python3.12', version: '3.12', origin: 'python3.12 on PATH' });
  });

  it('names what to install when no Python is found', () => {
    const chosen = choosePython([], manifest);
    expect('message' in chosen && chosen.message).toMatch(/needs Python 3\.11, 3\.12, 3\.13 or 3\.14 .*none found: no python3 on PATH.*Install Python 3\.14 .*sudo apt install python3/);
  });

  it('names the Pythons it found and why they would not do', () => {
    const chosen = choosePython([{ path: '/usr/bin/python3', version: '3.9', origin: 'python3 on PATH' }], manifest);
    expect('message' in chosen && chosen.message).toContain('found: /usr/bin/python3 (Python 3.9, python3 on PATH)');
  });
});

describe('the environment folder', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'checkpoint-env-test-'));
  });
  afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** A stand-in for buildEnvironment: a venv's python file (the real one is made in the e2e). */
  function fakeBuild(label: string, delayMs = 0): (dir: string) => Promise<void> {
    return async (dir) => {
      await new Promise((r) => setTimeout(r, delayMs));
      fs.mkdirSync(path.dirname(venvPython(dir)), { recursive: true });
      fs.writeFileSync(venvPython(dir), label);
    };
  }

  it('is keyed by the daemon version and the wheels, so an upgrade gets a new one and the old is removed', async () => {
    const old = environmentDir(tmp, { ...manifest, version: '0.0.9', key: 'old' });
    await ensureEnvironment(old, fakeBuild('old'));
    const dir = environmentDir(tmp, manifest);
    expect(dir).toBe(path.join(tmp, 'daemon', '0.1.0-abc123'));
    const made = await ensureEnvironment(dir, fakeBuild('new'));
    expect(made).toEqual({ python: venvPython(dir), created: true });
    expect(fs.readdirSync(path.join(tmp, 'daemon'))).toEqual(['0.1.0-abc123']);
  });

  it('is made once: a second call finds it ready and builds nothing', async () => {
    const dir = environmentDir(tmp, manifest);
    await ensureEnvironment(dir, fakeBuild('first'));
    let built = false;
    const again = await ensureEnvironment(dir, async () => {
      built = true;
    });
    expect(again.created).toBe(false);
    expect(built).toBe(false);
  });

  it('two windows starting at once end with one complete environment, and no temporary folder left', async () => {
    const dir = environmentDir(tmp, manifest);
    const [a, b] = await Promise.all([ensureEnvironment(dir, fakeBuild('a', 30)), ensureEnvironment(dir, fakeBuild('b', 60))]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(a.python).toBe(b.python);
    expect(fs.readFileSync(venvPython(dir), 'utf8')).toBe('a');
    expect(fs.readdirSync(path.join(tmp, 'daemon'))).toEqual(['0.1.0-abc123']);
  });

  it('a build that fails leaves nothing behind and says why', async () => {
    const dir = environmentDir(tmp, manifest);
    await expect(ensureEnvironment(dir, async (t) => {
      fs.mkdirSync(t, { recursive: true });
      throw new Error('pip install failed: no matching distribution');
    })).rejects.toThrow('no matching distribution');
    expect(fs.readdirSync(path.join(tmp, 'daemon'))).toEqual([]);
  });

  it('an environment whose Python was uninstalled is made again', async () => {
    const dir = environmentDir(tmp, manifest);
    fs.mkdirSync(path.dirname(venvPython(dir)), { recursive: true });
    fs.symlinkSync(path.join(tmp, 'gone', 'python3'), venvPython(dir));
    const made = await ensureEnvironment(dir, fakeBuild('again'));
    expect(made.created).toBe(true);
    expect(fs.readFileSync(venvPython(dir), 'utf8')).toBe('again');
  });

  it('reads the bundle manifest, and none from an extension without a bundle', () => {
    expect(readManifest(tmp)).toBeUndefined();
    fs.mkdirSync(path.join(tmp, 'bundled'));
    fs.writeFileSync(path.join(tmp, 'bundled', 'manifest.json'), JSON.stringify({ ...manifest, target: 'linux-x64' }));
    expect(readManifest(tmp)).toEqual(manifest);
  });
});
