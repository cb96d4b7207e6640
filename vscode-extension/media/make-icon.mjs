// Renders media/icon.png (the Marketplace icon, 128x128) from media/icon.svg with headless Chromium:
//     node media/make-icon.mjs
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const svg = fs.readFileSync(path.join(here, 'icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: process.env.CHECKPOINT_E2E_CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
await page.locator('svg').screenshot({ path: path.join(here, 'icon.png'), omitBackground: true });
await browser.close();
