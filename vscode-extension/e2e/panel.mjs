// The side panel, end to end (issue 38): the workspace is a git repository with one decision record
// shared by a teammate three days ago and one that cannot be read; in the real VS Code the Team row
// says who shared it and when and opens the record, the broken one opens at its line, a session's context menu offers Open Transcript, Checkpoint Now and Forget
// Session…, and what was expanded stays expanded across a reload of the window. Screenshots of the
// panel at the default side bar width in the light theme: panel.png and panel-team.png.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { writeRemoteSettings } from './remoteSettings.mjs';

export const TEAM = {
  statement: "We'll use marker-postgres for the job store",
  who: 'Dana Lee',
  daysAgo: 3,
};

/** Make `ws` a git repository holding one decision record by TEAM.who, written by the daemon's own renderer. */
export function writeTeamRecord(ws, python, repo) {
  execFileSync('git', ['init', '-q', ws], { stdio: 'ignore' });
  const date = new Date(Date.now() - TEAM.daysAgo * 86400_000).toISOString().slice(0, 10);
  const script = [
    'import sys, pathlib',
    'from checkpoint.model import ItemKind, ItemState, SharedDecision',
    'from checkpoint.team.records import RecordText, file_name, render',
    'ws, date, statement, who = sys.argv[1:5]',
    "d = SharedDecision(id='7e4d2c1b0a99', kind=ItemKind.DECISION, statement=statement, rationale='It is what the team runs.',",
    "                   files=(), state=ItemState.NEW, status='proposed', date=date, supersedes=(), superseded_by=(), path='')",
    "p = pathlib.Path(ws) / 'docs' / 'decisions' / file_name(date, statement, d.id)",
    'p.parent.mkdir(parents=True, exist_ok=True)',
    "p.write_text(render(d, RecordText(f'{who} <dana@example.com>', 'Said in a Claude Code session.')), encoding='utf-8')",
    '# and one that cannot be read: its id is no item id',
    "bad = render(d._replace(id='0b1c2d3e4f50', statement='A record edited by hand'), RecordText(who, 'By hand.'))",
    "(p.parent / '2026-01-01-edited-by-hand.md').write_text(bad.replace('id: 0b1c2d3e4f50', 'id: zz'), encoding='utf-8')",
    'print(p)',
  ].join('\n');
  return execFileSync(python, ['-c', script, ws, date, TEAM.statement, TEAM.who], { cwd: repo, encoding: 'utf8' }).trim();
}

function view(page) {
  return page.locator('[id="workbench.view.extension.checkpoint"]');
}

function row(page, text) {
  return view(page).locator('.monaco-list-row', { hasText: text }).first();
}

/** Open the Checkpoint view (after a reload too). */
async function showPanel(page) {
  if (!(await view(page).isVisible().catch(() => false))) {
    await page.locator('.activitybar .action-item a[aria-label^="Checkpoint"]').first().click();
  }
  await view(page).waitFor({ timeout: 30_000 });
}

async function expand(page, locator) {
  if ((await locator.getAttribute('aria-expanded')) !== 'true') {
    await locator.click();
  }
}

/** The rendered lines a toast's message would take expanded, at its width. */
export async function toastLines(message) {
  return message.evaluate((el) => {
    const doc = el.ownerDocument; // in the page: the browser's document and window
    const style = doc.defaultView.getComputedStyle(el);
    const clone = el.cloneNode(true);
    clone.style.cssText =
      `position:absolute;visibility:hidden;white-space:normal;overflow:visible;height:auto;` +
      `width:${el.getBoundingClientRect().width}px;font:${style.font};line-height:${style.lineHeight}`;
    doc.body.appendChild(clone);
    const lineHeight = Number.parseFloat(style.lineHeight) || Number.parseFloat(style.fontSize) * 1.4;
    const lines = Math.round(clone.getBoundingClientRect().height / lineHeight);
    clone.remove();
    return lines;
  });
}

export async function checkPanel(page, { check, waitFor, runFromPalette, widenSidebar, setTheme, shot }) {
  const marksSession = () => row(page, 'Make the total exact');

  await check('panel: the Team row says who shared a decision and when, and opens its record', async () => {
    await page.keyboard.press('Escape');
    await showPanel(page);
    const team = row(page, /^Team/);
    await team.waitFor({ timeout: 60_000 });
    await expand(page, team);
    const shared = row(page, TEAM.statement);
    await shared.waitFor({ timeout: 60_000 });
    const text = ((await shared.textContent()) ?? '').replace(/\s+/g, ' ');
    // The record's date, three days back: between three and four days ago.
    if (!text.includes(`${TEAM.who} · ${TEAM.daysAgo} d ago`)) {
      throw new Error(`the Team row reads "${text}", without "${TEAM.who} · ${TEAM.daysAgo} d ago"`);
    }
    await shared.hover();
    const open = shared.locator('.action-label[aria-label="Open Decision Record"]');
    await open.waitFor({ timeout: 15_000 });
    await open.click();
    const tab = page.locator('.tab.active', { hasText: /marker-postgres/ }).first();
    await tab.waitFor({ timeout: 15_000 });
    return `${text.trim()}; opened ${((await tab.getAttribute('aria-label')) ?? '').split(',')[0]}`;
  });

  await check('panel: a record that cannot be read says why and opens at the line at fault', async () => {
    await showPanel(page);
    const broken = row(page, /Cannot be read: 2026-01-01-edited-by-hand\.md:\d+/);
    await broken.waitFor({ timeout: 30_000 });
    const text = ((await broken.textContent()) ?? '').replace(/\s+/g, ' ').trim();
    const line = Number(/\.md:(\d+)/.exec(text)?.[1]);
    await broken.click();
    const tab = page.locator('.tab.active', { hasText: 'edited-by-hand' }).first();
    await tab.waitFor({ timeout: 15_000 });
    const at = await waitFor('the cursor on the line named', async () => {
      const where = (await page.locator('[id="status.editor.selection"]').textContent().catch(() => '')) ?? '';
      return where.includes(`Ln ${line},`) ? where.trim() : undefined;
    }, 15_000);
    return `${text}; opened at ${at}`;
  });

  await check('panel: a session’s context menu offers Open Transcript, Checkpoint Now and Forget Session…', async () => {
    await showPanel(page);
    const session = marksSession();
    await session.waitFor({ timeout: 30_000 });
    await session.click({ button: 'right' });
    const menu = page.locator('.context-view .monaco-menu');
    await menu.waitFor({ timeout: 15_000 });
    const entries = (await menu.locator('.action-label').allInnerTexts()).map((t) => t.trim()).filter(Boolean);
    for (const wanted of ['Open Transcript', 'Checkpoint Now', 'Forget Session…']) {
      if (!entries.includes(wanted)) {
        throw new Error(`the session's menu offers ${JSON.stringify(entries)}, without "${wanted}"`);
      }
    }
    await menu.locator('.action-label', { hasText: 'Open Transcript' }).first().click();
    const tab = page.locator('.tab.active', { hasText: /\.jsonl/ }).first();
    await tab.waitFor({ timeout: 30_000 });
    return `${entries.join(' | ')}; Open Transcript opened ${((await tab.getAttribute('aria-label')) ?? '').split(',')[0]}`;
  });

  await check('panel: what was expanded stays expanded across a reload of the window', async () => {
    await showPanel(page);
    await expand(page, marksSession());
    await row(page, 'Needs review').waitFor({ timeout: 60_000 });
    await expand(page, row(page, /^Team/));
    await row(page, TEAM.statement).waitFor({ timeout: 30_000 });
    await page.waitForTimeout(1_500); // the workbench saves its view state
    const reloaded = page.waitForEvent('load', { timeout: 120_000 });
    await runFromPalette(page, 'Developer: Reload Window');
    await reloaded;
    await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
    await showPanel(page);
    // The daemon starts again in the new window; then the rows come back as they were.
    await waitFor('the marks session expanded again, its items listed', async () =>
      (await marksSession().getAttribute('aria-expanded').catch(() => null)) === 'true' &&
      (await row(page, 'Needs review').isVisible().catch(() => false)), 180_000, 1_000);
    await waitFor('the Team node expanded again', async () =>
      (await row(page, TEAM.statement).isVisible().catch(() => false)), 60_000, 1_000);
    return 'the session and the Team node open, their rows listed';
  });

  await check('panel: screenshots at the default side bar width, light theme', async () => {
    await setTheme('Light Modern');
    await page.waitForTimeout(2_000);
    await showPanel(page);
    await widenSidebar(page, 300);
    // The marks session open (its held item under "Needs review"), the Team node open.
    await marksSession().scrollIntoViewIfNeeded();
    await page.mouse.move(5, 5);
    await page.waitForTimeout(800);
    await shot('panel.png');
    await row(page, /^Team/).hover();
    await row(page, TEAM.statement).hover();
    await page.waitForTimeout(1_500); // the row's tooltip
    await shot('panel-team.png', 440);
    const width = (await page.locator('.part.sidebar').boundingBox())?.width;
    return `side bar ${Math.round(width ?? 0)} px`;
  });
}

/** Scope "all", as a user sets it: the sessions under their repository (the workspace, a git repository). */
export async function checkRepositories(page, { check, waitFor, runFromPalette, shot }) {
  await check('panel: with scope "all", the sessions are grouped under their repository', async () => {
    await writeRemoteSettings(page, runFromPalette, { 'checkpoint.scope': 'all' });
    await showPanel(page);
    const repo = row(page, /^workspace\s*\d+ sessions · shared decisions/);
    await repo.waitFor({ timeout: 60_000 });
    const levels = await waitFor('the Team node and the sessions one level below the repository', async () => {
      const rows = view(page).locator('.monaco-list-row');
      const seen = await rows.evaluateAll((els) => els.map((e) => [e.getAttribute('aria-level'), (e.textContent ?? '').trim()]));
      const team = seen.find(([, t]) => t.startsWith('Team'));
      const session = seen.find(([, t]) => t.startsWith('Make the total exact'));
      return team?.[0] === '2' && session?.[0] === '2' ? seen : undefined;
    }, 60_000);
    await page.mouse.move(5, 5);
    await page.waitForTimeout(800);
    await shot('panel-repositories.png');
    return `${((await repo.textContent()) ?? '').trim()}; ${levels.filter(([l]) => l === '2').length} rows under it`;
  });
}

/** Write the panel's screenshot: the side bar (and `beside` pixels right of it, for a tooltip), the status bar below. */
export async function panelShot(page, out, name, beside = 0) {
  const bar = await page.locator('.part.sidebar').boundingBox();
  const file = path.join(out, name);
  if (bar) {
    await page.screenshot({ path: file, clip: { x: 0, y: 0, width: bar.x + bar.width + beside, height: bar.y + bar.height + 24 } });
  }
  return fs.existsSync(file) ? file : undefined;
}
