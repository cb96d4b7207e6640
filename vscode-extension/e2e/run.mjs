// End-to-end test of the packaged extension in a real VS Code (code-server 4.100.3, VS Code 1.100.3)
// driven through Debian's headless Chromium with playwright-core.
//
// It installs the platform .vsix (scripts/build-vsix.sh; $CHECKPOINT_E2E_VSIX, else built here) into
// a fresh code-server profile (user data and extensions), with no `checkpoint` on PATH and no
// `checkpoint.command` setting, opens a workspace whose agent sessions come from
// tests/support/synth.py, and lets the extension install and start the daemon it brings (heuristic
// extractor, its own database; a progress notification meanwhile). Then it checks what a user sees:
//   1. the status bar item names pending (> 0) and captured counts;
//   2. "Checkpoint: Checkpoint Now" is in the palette (F1) and runs;
//   3. the status bar item then shows 0 pending with captured > 0;
//   4. the Checkpoint side panel lists the sessions, and a session's decisions;
//   5. the Problems panel counts the daemon's diagnostics (source "checkpoint"), shown inline too;
//   6. accepting an item in the panel goes through the daemon;
//   6b. "Checkpoint: Search Decisions" lists a seeded decision as the user types;
//   7. a daemon that cannot start is reported with the install command (never a silent nothing);
//   8. in a second fresh profile whose PATH has no Python, the message says what to install;
//   9. the walkthrough "Getting started with Checkpoint" is offered, with its three steps;
//  and issue 38's marks (CodeLens and squiggles), hover cards, Open Turn and held review on a session of
//  its own (marks.mjs); the README's screenshot shows a real public session's items (marks.mjs);
//  and the panel's (panel.mjs): a Team row that says who shared a decision and when and opens its record,
//  a record that cannot be read opened at its line, a session's context menu (Open Transcript, Checkpoint Now,
//  Forget Session…), expansion kept across a reload of the window, scope "all" grouped by repository,
//  the panel's screenshots at the default width in the light theme; and every notification checked here
//  at most two lines, with the action it implies.
// A screenshot is saved at e2e/out/screenshot.png (e2e/out/failure.png when a check fails); with
// --update-screenshot it is copied to docs/screenshot.png, the one in the README.
//
//     node e2e/run.mjs [--update-screenshot] [--keep]
//
// Needs: scripts/install-code-server.sh (run here; idempotent) and the repo's .venv with the daemon.

import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { checkMarks, REAL_TITLE, showRealSession, writeMarksSession, writeRealSession } from './marks.mjs';
import { checkPanel, checkRepositories, panelShot, toastLines, writeTeamRecord } from './panel.mjs';
import { writeRemoteSettings } from './remoteSettings.mjs';

const EXT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPO = path.resolve(EXT, '..');
const OUT = path.join(EXT, 'e2e', 'out');
const args = new Set(process.argv.slice(2));
const CHROMIUM = process.env.CHECKPOINT_E2E_CHROMIUM || '/usr/bin/chromium';
const PYTHON = fs.existsSync(path.join(REPO, '.venv', 'bin', 'python')) ? path.join(REPO, '.venv', 'bin', 'python') : 'python3';

const started = Date.now();
const results = [];
let passed = 0;
let failed = 0;

function log(msg) {
  console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);
}

async function check(name, fn) {
  const t0 = Date.now();
  try {
    const detail = await fn();
    passed += 1;
    results.push(`PASS ${name}${detail ? ` (${detail})` : ''} [${((Date.now() - t0) / 1000).toFixed(1)}s]`);
    log(`PASS ${name}${detail ? `: ${detail}` : ''}`);
  } catch (err) {
    failed += 1;
    results.push(`FAIL ${name}: ${err instanceof Error ? err.message : String(err)}`);
    log(`FAIL ${name}: ${err instanceof Error ? err.stack : String(err)}`);
    throw err;
  }
}

async function waitFor(what, fn, timeoutMs = 60_000, intervalMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) {
        return value;
      }
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function run(cmd, argv, opts = {}) {
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...opts });
}

// -- the workspace: synthetic sessions whose folders are inside it -------------------------------

function makeWorkspace(tmp) {
  const corpus = path.join(tmp, 'transcripts');
  const ws = path.join(tmp, 'workspace');
  fs.mkdirSync(ws, { recursive: true });
  const said = run(PYTHON, ['-m', 'tests.support.synth', corpus, '--sessions', '3', '--turns', '40', '--chars', '12000', '--seed', '7'],
    { cwd: REPO });
  const sources = /CHECKPOINT_SOURCES=([^)\s]+)/.exec(said)?.[1];
  if (!sources) {
    throw new Error(`synth.py did not say where it wrote: ${said}`);
  }
  // synth.py places its sessions in /home/dev/projectN; move them into this workspace, so they are
  // in the daemon's workspace scope and the files they edited can carry diagnostics.
  const edited = new Set();
  const files = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(p);
      } else if (entry.name.endsWith('.jsonl')) {
        files.push(p);
      }
    }
  };
  walk(corpus);
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8').split('/home/dev/project').join(`${ws}/project`);
    fs.writeFileSync(file, text);
    for (const m of text.matchAll(new RegExp(`${ws.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/project\\d+/src/\\w+\\.py`, 'g'))) {
      edited.add(m[0]);
    }
  }
  for (const file of edited) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `"""${path.basename(file)}: touched by a synthetic agent session."""\n\nVALUE = 1\n`);
  }
  // The session of issue 38's checks (marks.mjs): three lines of a long file edited, another rewritten.
  const marks = writeMarksSession(ws, sources.split(':')[0]);
  // A real public session with the plan it wrote, for the README's screenshot.
  writeRealSession(ws, sources.split(':')[0]);
  // The workspace is a git repository with a teammate's decision record (panel.mjs's Team checks).
  const record = writeTeamRecord(ws, PYTHON, REPO);
  log(`workspace ${ws}: ${files.length} transcripts, ${edited.size} edited files, the marks session, a real one, ${path.relative(ws, record)}`);
  return { ws, sources, edited: edited.size, marks };
}

// -- code-server ---------------------------------------------------------------------------------

function installCodeServer() {
  const t0 = Date.now();
  const out = run('bash', [path.join(REPO, 'scripts', 'install-code-server.sh')]);
  const entry = out.trim().split('\n').pop();
  if (!entry || !fs.existsSync(entry)) {
    throw new Error(`install-code-server.sh gave no code-server entry point: ${out}`);
  }
  log(`code-server ready in ${((Date.now() - t0) / 1000).toFixed(1)}s: ${entry}`);
  return entry;
}

function packageExtension() {
  if (process.env.CHECKPOINT_E2E_VSIX) {
    return process.env.CHECKPOINT_E2E_VSIX;
  }
  const t0 = Date.now();
  const vsix = run('bash', [path.join(REPO, 'scripts', 'build-vsix.sh'), 'linux-x64']).trim().split('\n').pop();
  if (!vsix || !fs.existsSync(vsix)) {
    throw new Error(`scripts/build-vsix.sh made no .vsix (${vsix})`);
  }
  log(`packaged ${vsix} in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  return vsix;
}

/** PATH without any folder holding a `checkpoint`: the extension must bring its own. */
function pathWithoutCheckpoint(value) {
  return (value ?? '').split(path.delimiter).filter((dir) => dir && !fs.existsSync(path.join(dir, 'checkpoint'))).join(path.delimiter);
}

/** A fresh profile, the user settings, and the .vsix installed into it with code-server's CLI. */
function makeProfile(root, entry, vsix, settings) {
  const profile = { root, data: path.join(root, 'user-data'), extensions: path.join(root, 'extensions') };
  fs.mkdirSync(path.join(profile.data, 'User'), { recursive: true });
  fs.writeFileSync(path.join(profile.data, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  const t0 = Date.now();
  run(process.execPath, [entry, '--user-data-dir', profile.data, '--extensions-dir', profile.extensions, '--install-extension', vsix], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  log(`installed ${path.basename(vsix)} (${(fs.statSync(vsix).size / 1e6).toFixed(1)} MB) in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  return profile;
}

/** The extension's log in a profile (daemon stderr included), or ''. */
function extensionLog(profile) {
  const logs = path.join(profile.data, 'logs');
  if (!fs.existsSync(logs)) {
    return '';
  }
  // The latest written: a reload of the window starts a log of its own.
  const file = fs
    .readdirSync(logs, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(path.join(EXTENSION_ID, 'Checkpoint.log')))
    .sort((a, b) => fs.statSync(path.join(logs, b)).mtimeMs - fs.statSync(path.join(logs, a)).mtimeMs)[0];
  return file ? fs.readFileSync(path.join(logs, file), 'utf8') : '';
}

const EXTENSION_ID = 'checkpoint-dev.checkpoint-vscode';

const BROWSER_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

async function openWorkbench(browser, server, ws) {
  const page = await browser.newPage({ viewport: { width: 1600, height: 960 } });
  page.on('pageerror', (err) => log(`page error: ${err.message}`));
  await page.goto(`${server.url}?folder=${encodeURIComponent(ws)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
  log('workbench loaded');
  return page;
}

async function startCodeServer(entry, profile, ws, env) {
  const port = await freePort();
  const logFile = path.join(OUT, 'code-server.log');
  const out = fs.openSync(logFile, 'w');
  const child = spawn(
    process.execPath,
    [
      entry,
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--config', path.join(profile.root, 'config.yaml'),
      '--user-data-dir', profile.data,
      '--extensions-dir', profile.extensions,
      ws,
    ],
    { env, stdio: ['ignore', out, out], detached: true },
  );
  const url = `http://127.0.0.1:${port}/`;
  await waitFor('code-server to answer', async () => {
    if (child.exitCode !== null) {
      throw new Error(`code-server exited (${child.exitCode}); see ${logFile}`);
    }
    const res = await fetch(`${url}healthz`).catch(() => undefined);
    return res?.ok;
  }, 60_000, 500);
  log(`code-server listening on ${url} (log ${logFile})`);
  return { child, url };
}

// -- the workbench -------------------------------------------------------------------------------

/** The Checkpoint status bar item's text, e.g. "12 pending · 340 captured", or undefined. */
async function statusText(page) {
  const labels = await page.$$eval('.statusbar-item', (els) =>
    els.map((e) => `${e.getAttribute('aria-label') ?? ''}\n${e.textContent ?? ''}`),
  );
  for (const label of labels) {
    const m = /(\d+) pending · (\d+) captured/.exec(label);
    if (m) {
      return { text: m[0], pending: Number(m[1]), captured: Number(m[2]), raw: label.trim() };
    }
  }
  return undefined;
}

/** Drag the primary side bar's edge so the panel's descriptions fit. */
async function widenSidebar(page, width) {
  const box = await page.locator('.part.sidebar').boundingBox();
  if (!box) {
    return;
  }
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width, y);
  await page.mouse.down();
  await page.mouse.move(box.x + width, y, { steps: 8 });
  await page.mouse.up();
}

async function runFromPalette(page, title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(`>${title}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  await row.waitFor({ state: 'visible', timeout: 15_000 });
  const label = (await row.getAttribute('aria-label')) ?? (await row.textContent()) ?? '';
  await row.click();
  return label;
}

let shotTaken = false;

async function screenshot(page, name) {
  const shot = path.join(OUT, name);
  await page.screenshot({ path: shot }).catch((err) => log(`screenshot failed: ${err.message}`));
  if (!fs.existsSync(shot)) {
    return;
  }
  log(`screenshot: ${shot}`);
  if (name === 'screenshot.png' && args.has('--update-screenshot') && failed === 0) {
    fs.mkdirSync(path.join(REPO, 'docs'), { recursive: true });
    fs.copyFileSync(shot, path.join(REPO, 'docs', 'screenshot.png'));
    fs.copyFileSync(shot, path.join(EXT, 'media', 'screenshot.png')); // the Marketplace README's and the walkthrough's
    log('copied to docs/screenshot.png and vscode-extension/media/screenshot.png');
  }
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'checkpoint-e2e-'));
  let profile;
  let server;
  let browser;
  let page;
  try {
    const entry = installCodeServer();
    const vsix = packageExtension();
    const { ws, sources, marks } = makeWorkspace(tmp);
    const userSettings = {
      'security.workspace.trust.enabled': false,
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.welcomePage.walkthroughs.openOnInstall': false,
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'telemetry.telemetryLevel': 'off',
      'chat.commandCenter.enabled': false,
      'workbench.colorTheme': 'Default Dark Modern',
      // Nothing is extracted until Checkpoint Now, so the test sees pending first.
      'checkpoint.extraction': 'manual',
      // Warnings show in the Problems count of the status bar whatever the VS Code version.
      'checkpoint.diagnostics.severity.decision': 'warning',
    };
    profile = makeProfile(path.join(tmp, 'profile'), entry, vsix, userSettings);

    // An empty config file: the user's own ~/.config/checkpoint never applies (a CHECKPOINT_CONFIG
    // naming no file is an error the daemon refuses to start with).
    const emptyConfig = path.join(tmp, 'empty-config.toml');
    fs.writeFileSync(emptyConfig, '');
    const env = { ...process.env };
    for (const k of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'VSCODE_IPC_HOOK_CLI', 'VIRTUAL_ENV']) {
      delete env[k];
    }
    Object.assign(env, {
      PATH: pathWithoutCheckpoint(env.PATH),
      // The extension host gets this environment as it is: without this, VS Code's server would
      // merge in the PATH of the user's login shell (~/.bashrc), which may hold a checkpoint or a Python.
      VSCODE_CLI: '1',
      CHECKPOINT_DB: path.join(tmp, 'checkpoint.db'),
      CHECKPOINT_SOURCES: sources,
      CHECKPOINT_EXTRACTOR: 'heuristic',
      CHECKPOINT_CONFIG: emptyConfig,
    });
    server = await startCodeServer(entry, profile, ws, env);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
    page = await openWorkbench(browser, server, ws);

    await check('a progress notification shows while the bundled daemon is installed (first start)', async () => {
      const toast = page.locator('.notification-toast', { hasText: 'installing its daemon' }).first();
      await toast.waitFor({ timeout: 60_000 });
      return (await toast.innerText()).replace(/\s+/g, ' ').slice(0, 100);
    });

    let before;
    await check('status bar names pending and captured turns before a checkpoint', async () => {
      before = await waitFor('the Checkpoint status item with pending turns', async () => {
        const s = await statusText(page);
        return s && s.pending > 0 ? s : undefined;
      }, 180_000);
      const made = /environment was created in ([\d.]+)s/.exec(extensionLog(profile));
      if (!made) {
        throw new Error('the extension log does not say it created the bundled daemon\'s environment');
      }
      return `${before.text}; the bundled daemon's environment created in ${made[1]}s on first start`;
    });

    await check('"Checkpoint: Checkpoint Now" is in the palette and runs', async () => {
      const label = await runFromPalette(page, 'Checkpoint Now');
      if (!/Checkpoint: Checkpoint Now/.test(label)) {
        throw new Error(`palette row reads "${label}"`);
      }
      const toast = page.locator('.notification-toast', {
        hasText: /Checkpoint: (Extracted \d+ chunks?|no chunk was extracted|nothing pending)|Checkpoint Now failed/,
      });
      await toast.first().waitFor({ timeout: 120_000 });
      const said = (await toast.first().locator('.notification-list-item-message').innerText()).replace(/\s+/g, ' ');
      if (!/Extracted \d+ chunks? with the \w+ extractor: \d+ captured, 0 failed/.test(said)) {
        throw new Error(`Checkpoint Now said: ${said}`);
      }
      // Two lines at most, with the action it implies.
      const lines = await toastLines(toast.first().locator('.notification-list-item-message'));
      const buttons = (await toast.first().locator('.monaco-button').allInnerTexts()).map((b) => b.trim());
      if (lines > 2 || !buttons.includes('Show Items')) {
        throw new Error(`Checkpoint Now's notification takes ${lines} lines, with ${JSON.stringify(buttons)}: ${said}`);
      }
      return label.split(',')[0];
    });

    await check('status bar shows 0 pending and captured > 0 after the checkpoint', async () => {
      const after = await waitFor('0 pending', async () => {
        const s = await statusText(page);
        return s && s.pending === 0 && s.captured > 0 ? s : undefined;
      }, 120_000);
      if (after.captured < before.pending) {
        throw new Error(`captured ${after.captured} < the ${before.pending} turns pending before`);
      }
      return after.text;
    });

    await check('the Checkpoint side panel lists sessions and their items', async () => {
      await page.locator('.activitybar .action-item a[aria-label^="Checkpoint"]').first().click();
      const view = page.locator('[id="workbench.view.extension.checkpoint"]');
      await view.waitFor({ timeout: 30_000 });
      await widenSidebar(page, 620);
      const rows = view.locator('.monaco-list-row');
      const sessions = await waitFor('session rows', async () => {
        const texts = await rows.allTextContents();
        const withCounts = texts.filter((t) => /\d+ captured · \d+ pending/.test(t));
        return withCounts.length >= 3 ? withCounts : undefined;
      }, 60_000);
      // A synthetic session (its decisions name markers); the marks session is checked in marks.mjs.
      const session = rows.filter({ hasText: /captured · 0 pending/ }).filter({ hasNotText: 'Make the total exact' })
        .filter({ hasNotText: REAL_TITLE }).first();
      const decisionRows = async () => {
        const texts = await rows.allTextContents();
        const groups = texts.filter((t) => /^Decisions\s*\d+/.test(t.trim()));
        const decided = texts.filter((t) => /marker-[0-9a-f]{12}/.test(t));
        return groups.length && decided.length ? { groups, decided } : undefined;
      };
      await session.click();
      let items;
      try {
        items = await waitFor('decision rows', decisionRows, 25_000);
      } catch (err) {
        // Seen once under load (a CI run): the session expanded with no child row at all, not even
        // "no items yet". The panel now says when the daemon does not answer within 20 s; the rows
        // are logged, then the session is collapsed and expanded again, as a user would.
        log(`no decision rows 25s after expanding the session (${err.message}); rows: ${JSON.stringify(await rows.allTextContents())}`);
        await session.click();
        await session.click();
        items = await waitFor('decision rows after expanding again', decisionRows, 30_000);
      }
      return `${sessions.length} sessions; ${items.decided.length} decisions under "${items.groups[0].trim()}"`;
    });

    await check('the Problems panel counts the daemon’s checkpoint diagnostics', async () => {
      // Warnings or Infos: with CodeLens marks, the items left in Problems are those that need action
      // (held, or code changed since the session), at the kind's severity or Information.
      const counts = await waitFor('problems in the status bar', async () => {
        const label = (await page.locator('[id="status.problems"]').getAttribute('aria-label')) ?? '';
        const shown = Number(/Warnings?:\s*(\d+)/i.exec(label)?.[1] ?? 0) + Number(/Infos?:\s*(\d+)/i.exec(label)?.[1] ?? 0);
        return shown > 0 ? { label, shown } : undefined;
      }, 60_000);
      await page.locator('[id="status.problems"]').click();
      const panel = page.locator('.markers-panel');
      await panel.waitFor({ timeout: 15_000 });
      const rows = await waitFor('checkpoint rows in the Problems panel', async () => {
        const texts = await panel.locator('.monaco-list-row').allTextContents();
        const ours = texts.filter((t) => /checkpoint/.test(t) && /Decision:/.test(t));
        return ours.length ? ours : undefined;
      }, 30_000);
      return `${counts.label}; ${rows.length} checkpoint rows visible`;
    });

    await check('a decision shows inline in the file it concerns', async () => {
      await page.locator('.markers-panel .monaco-list-row', { hasText: 'Decision:' }).first().click();
      // A file the session's lines are no longer in gets one quiet mark: an info squiggle, not a warning.
      const squiggle = page.locator('.monaco-editor [class*="squiggly-"]').first();
      await squiggle.waitFor({ state: 'attached', timeout: 30_000 });
      const tab = (await page.locator('.tab.active').first().getAttribute('aria-label')) ?? '';
      return `squiggle in ${tab.split(',')[0]}`;
    });

    await check('accepting an item from the side panel reaches the daemon and shows in the panel', async () => {
      const view = page.locator('[id="workbench.view.extension.checkpoint"]');
      const row = view.locator('.monaco-list-row', { hasText: /marker-[0-9a-f]{12}/ }).first();
      const statement = ((await row.textContent()) ?? '').trim();
      await row.hover();
      await row.locator('.action-label[aria-label="Accept"]').click();
      await waitFor('the item to read "accepted"', async () => {
        const texts = await view.locator('.monaco-list-row').allTextContents();
        return texts.some((t) => t.includes('accepted'));
      }, 30_000);
      return statement.slice(0, 40);
    });
    await checkMarks(page, { check, waitFor, screenshot, runFromPalette, files: marks });

    await check('"Checkpoint: Search Decisions" finds a seeded decision as the user types', async () => {
      await page.keyboard.press('Escape');
      const label = await runFromPalette(page, 'Search Decisions');
      if (!/Checkpoint: Search Decisions/.test(label)) {
        throw new Error(`palette row reads "${label}"`);
      }
      const input = page.locator('.quick-input-widget input');
      await waitFor('the search box', async () => (await input.getAttribute('placeholder'))?.startsWith('Type words'), 15_000);
      await input.fill('marker');
      const found = await waitFor('a search result naming a seeded marker', async () => {
        const texts = await page.locator('.quick-input-list .monaco-list-row').allTextContents();
        const hits = texts.filter((t) => /marker-[0-9a-f]{12}/.test(t));
        return hits.length ? hits : undefined;
      }, 30_000);
      await page.keyboard.press('Escape');
      return `${found.length} results; first: ${found[0].trim().slice(0, 60)}`;
    });

    await check('the README’s screenshot shows a real session’s items', async () => {
      const lenses = await showRealSession(page, { waitFor, screenshot });
      shotTaken = true;
      return lenses;
    });

    // As a user would: the theme picker (the user settings file is not watched for it here).
    const setTheme = async (theme) => {
      await runFromPalette(page, 'Preferences: Color Theme');
      const input = page.locator('.quick-input-widget input');
      await input.fill(theme);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: theme }).first().waitFor({ timeout: 15_000 });
      await page.keyboard.press('Enter');
      await waitFor(`the ${theme} theme`, async () => (await page.locator('.monaco-workbench.vs').count()) > 0, 15_000);
    };
    await checkPanel(page, {
      check, waitFor, runFromPalette, widenSidebar, setTheme,
      shot: async (name, beside) => log(`screenshot: ${await panelShot(page, OUT, name, beside)}`),
    });
    await checkRepositories(page, {
      check, waitFor, runFromPalette, shot: async (name) => log(`screenshot: ${await panelShot(page, OUT, name)}`),
    });

    await check('a daemon that cannot start is said aloud, with the install command', async () => {
      // Through the settings editor, as a user would: VS Code then reports the change to the extension.
      const bad = path.join(tmp, 'no-such-dir', 'checkpoint');
      await writeRemoteSettings(page, runFromPalette, { 'checkpoint.command': [bad, 'serve'] });
      const toast = page.locator('.notification-toast', { hasText: 'is not running' }).first();
      await toast.waitFor({ timeout: 60_000 });
      const shown = toast.locator('.notification-list-item-message');
      const message = (await shown.innerText()).replace(/\s+/g, ' ');
      const buttons = (await toast.locator('.monaco-button').allInnerTexts()).map((b) => b.trim());
      const text = `${message} [${buttons.join(' | ')}]`;
      // Two lines at most: the gist, Show Log and the setting to fix; the whole story is in the log.
      const lines = await toastLines(shown);
      if (lines > 2 || !message.includes('is not running') || !message.includes('was not found')) {
        throw new Error(`the error reads "${text}" (${lines} lines)`);
      }
      if (buttons.join(' | ') !== 'Show Log | Open Settings') {
        throw new Error(`the error offers ${JSON.stringify(buttons)}, not Show Log and Open Settings`);
      }
      await waitFor('the whole message in the log', async () => {
        const logged = extensionLog(profile);
        return [`(${bad} serve)`, 'python3 -m venv .venv && .venv/bin/pip install -e .'].every((t) => logged.includes(t));
      }, 15_000);
      await waitFor('the status item to say the daemon is not running', async () => {
        const labels = await page.$$eval('.statusbar-item', (els) => els.map((e) => e.textContent ?? ''));
        return labels.some((l) => l.includes('Checkpoint: daemon not running'));
      }, 15_000);
      return `"${message}" in ${lines} line(s) [${buttons.join(' | ')}], the rest in the log; status item "daemon not running"`;
    });

    await check('with no usable Python, a fresh profile says what to install', async () => {
      await page.close();
      page = undefined;
      process.kill(-server.child.pid, 'SIGTERM');
      // A PATH with node only: no python3 (and no Python extension) to make the environment with.
      const bin = path.join(tmp, 'bin-without-python');
      fs.mkdirSync(bin);
      fs.symlinkSync(process.execPath, path.join(bin, 'node'));
      const bare = makeProfile(path.join(tmp, 'profile-no-python'), entry, vsix, userSettings);
      profile = bare;
      server = await startCodeServer(entry, bare, ws, { ...env, PATH: bin });
      page = await openWorkbench(browser, server, ws);
      const toast = page.locator('.notification-toast', { hasText: 'needs Python' }).first();
      await toast.waitFor({ timeout: 90_000 });
      const shown = toast.locator('.notification-list-item-message');
      const message = (await shown.innerText()).replace(/\s+/g, ' ');
      const lines = await toastLines(shown);
      const buttons = (await toast.locator('.monaco-button').allInnerTexts()).map((b) => b.trim());
      if (!/needs Python 3\.1\d/.test(message) || lines > 2 || buttons.join(' | ') !== 'Show Log | Restart Daemon') {
        throw new Error(`the message reads "${message}" (${lines} lines) [${buttons.join(' | ')}]`);
      }
      // The rest (what to install, how) is in the log, Show Log away.
      await waitFor('what to install, in the log', async () => {
        const logged = extensionLog(profile);
        return ['no python3 on PATH', 'Install Python 3.', 'sudo apt install python3', 'checkpoint.command'].every((t) => logged.includes(t));
      }, 15_000);
      return `"${message}" in ${lines} line(s) [${buttons.join(' | ')}]`;
    });

    await check('the walkthrough "Getting started with Checkpoint" is offered', async () => {
      await runFromPalette(page, 'Welcome: Open Walkthrough...');
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Getting started with Checkpoint' }).first();
      await row.waitFor({ state: 'visible', timeout: 15_000 });
      await row.click();
      const steps = page.locator('.gettingStartedContainer', { hasText: 'Where the sessions come from' }).first();
      await steps.waitFor({ timeout: 15_000 });
      const text = (await steps.innerText()).replace(/\s+/g, ' ');
      for (const needed of ['An API key, or your subscription', 'The panel, the status bar and Checkpoint Now']) {
        if (!text.includes(needed)) {
          throw new Error(`the walkthrough reads "${text.slice(0, 300)}", without "${needed}"`);
        }
      }
      await page.keyboard.press('Escape');
      return '3 steps';
    });
  } finally {
    if (page && failed) {
      const toasts = await page.locator('.notification-toast .notification-list-item-message').allInnerTexts().catch(() => []);
      for (const t of toasts) {
        log(`notification: ${t.replace(/\s+/g, ' ').slice(0, 400)}`);
      }
      const status = await statusText(page).catch(() => undefined);
      log(`status item: ${status?.raw ?? '(none)'}`);
    }
    if (page && !shotTaken) {
      await screenshot(page, 'screenshot.png');
    } else if (page && failed) {
      await screenshot(page, 'failure.png');
    }
    if (failed && profile) {
      // The extension's log (daemon stderr included) outlives the temporary profile.
      fs.writeFileSync(path.join(OUT, 'Checkpoint.log'), extensionLog(profile));
      log(`extension log: ${path.join(OUT, 'Checkpoint.log')}`);
    }
    await browser?.close().catch(() => undefined);
    if (server) {
      try {
        process.kill(-server.child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    if (!args.has('--keep')) {
      fs.rmSync(tmp, { recursive: true, force: true });
    } else {
      log(`kept ${tmp}`);
    }
  }
}

main()
  .catch((err) => {
    if (failed === 0) {
      failed += 1;
      results.push(`FAIL setup: ${err instanceof Error ? err.message : String(err)}`);
      console.error(err);
    }
  })
  .finally(() => {
    console.log('');
    for (const line of results) {
      console.log(line);
    }
    console.log(`VS Code end-to-end test in code-server took ${((Date.now() - started) / 1000).toFixed(1)}s`);
    console.log(`e2e: ${passed} passed, ${failed} failed`);
    process.exitCode = failed ? 1 : 0;
  });
