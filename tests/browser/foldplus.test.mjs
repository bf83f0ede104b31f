// foldplus.test.mjs - `+PATS` in the GUI's pattern boxes (web/js/main.js):
// playwright-core drives Debian's chromium against `heapscope view` of a
// heap trace of tests/targets/memtest, whose FoldPats box opens with the
// heap views' default. Typing `+site_temp` there and updating gives the
// default followed by `site_temp` in the box, and ByName as
// `heapscope report --fold +site_temp` has it (site_temp folded into its
// caller, the allocator still folded). A screenshot goes to
// $HS_BUILD/browser-artifacts/foldplus.png. Output is TAP; every wait is
// bounded.
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM.

import { execFileSync } from 'node:child_process';
import { spawnView, viewUrl } from './view-server.mjs';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const BIN = process.env.HS_BIN;
const SRC = process.env.HS_SRC;
const BUILD = process.env.HS_BUILD;
const CHROMIUM = process.env.HS_CHROMIUM || '/usr/bin/chromium';
const WAIT = 30000;
const ART = path.join(BUILD, 'browser-artifacts');
const MEMTEST = path.join(BUILD, 'tests/targets/memtest');

let server = null, context = null, page = null, tmp = null, n = 0;
const errors = [];

function ok(cond, what, detail) {
  n++;
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${what}`);
  if (!cond) {
    if (detail !== undefined) console.log('# ' + JSON.stringify(detail).slice(0, 2000));
    throw new Error(`failed: ${what}`);
  }
}

function cleanup() {
  if (server) server.kill('SIGKILL');
  server = null;
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}

const deadline = setTimeout(() => {
  console.log(`not ok ${++n} - the run took more than 120 s`);
  cleanup();
  process.exit(1);
}, 120000);

// `heapscope report FILE ARGS --format json`, parsed.
function report(file, args = []) {
  return JSON.parse(execFileSync(BIN, ['report', file, ...args, '--format', 'json'],
    { encoding: 'utf8', maxBuffer: 1 << 26 }));
}

// Do @action and wait until the page has finished loading what it causes.
async function settled(action) {
  const before = await page.evaluate(() => Number(document.body.dataset.settled || 0));
  await action();
  await page.waitForFunction((b) => Number(document.body.dataset.settled || 0) > b &&
    !document.body.classList.contains('busy'), before, { timeout: WAIT });
}

// ByName's rows as shown: name and exact Exc (the tooltip of the Exc cell).
async function byName() {
  return page.$$eval('#view-byname .row:not([hidden]):not(.pending)', (rows) => rows.map((r) => ({
    key: r.dataset.key, index: Number(r.dataset.index), exc: r.children[2].title,
  })));
}

const exact = (v) => `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }).format(v)} bytes`;

async function main() {
  mkdirSync(ART, { recursive: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'hs-browser-foldplus-'));
  const trace = path.join(tmp, 'm.heapscope');
  execFileSync(BIN, ['run', '-q', '-o', trace, '--', MEMTEST], { stdio: ['ignore', 'ignore', 'inherit'] });
  const want = report(trace, ['--fold', '+site_temp']);
  const plain = report(trace);
  server = spawnView(BIN, [trace]);
  const url = await viewUrl(server, WAIT);
  const { chromium } = await import(path.join(SRC, 'node_modules/playwright-core/index.mjs'));
  context = await chromium.launchPersistentContext(path.join(tmp, 'profile'), {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');
  await page.waitForSelector('#view-byname .row[data-key="memtest!site_temp"]');

  const dflt = await page.inputValue('#fold');
  ok(dflt.includes('malloc') && plain.rows.some((r) => r.name === 'memtest!site_temp'),
    'the FoldPats box opens with the heap default, site_temp has a row', dflt.slice(0, 200));

  await page.fill('#fold', '+site_temp');
  await settled(() => page.press('#fold', 'Enter'));
  const now = await page.inputValue('#fold');
  ok(now === `${dflt.replace(/[\s;]+$/, '')};site_temp`, 'the box shows the default, then site_temp',
    now.slice(-200));
  const rows = await byName();
  ok(rows.length > 0 && !rows.some((r) => r.key === 'memtest!site_temp'),
    'site_temp is folded away', rows.map((r) => r.key));
  ok(!rows.some((r) => /!(malloc|calloc|realloc)$/.test(r.key)), 'the allocator is still folded',
    rows.map((r) => r.key));
  const bad = rows.filter((r) => want.rows[r.index]?.name !== r.key ||
    exact(want.rows[r.index].exc) !== r.exc);
  ok(!bad.length, 'ByName equals report --fold +site_temp', { bad: bad.slice(0, 3),
    want: bad.slice(0, 3).map((r) => want.rows[r.index]) });
  await page.screenshot({ path: path.join(ART, 'foldplus.png') });
  ok(errors.length === 0, 'no page errors', errors);
}

try {
  await main();
  console.log(`1..${n}`);
  clearTimeout(deadline);
  await context?.close();
  cleanup();
} catch (e) {
  console.log(`# ${e.stack}`);
  for (const x of errors) console.log(`# page: ${x.split('\n')[0]}`);
  console.log(`1..${n}`);
  await context?.close().catch(() => {});
  cleanup();
  process.exit(1);
}
