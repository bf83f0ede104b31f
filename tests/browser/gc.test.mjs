// gc.test.mjs - the GC tab in a real browser (web/js/gc.js): playwright-core
// drives Debian's chromium against `heapscope view` of a .nettrace fixture
// and of a perf trace. The tab shows for the .NET trace only; its tables
// and chart hold the fixture's three induced GCs with the numbers of
// `heapscope gcstats --format json`. A screenshot goes to
// $HS_BUILD/browser-artifacts/gc.png. Output is TAP; every wait is bounded.
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
const NETTRACE = path.join(SRC, 'tests/data/dotnet/allocs.nettrace');
const PERF = path.join(SRC, 'tests/data/perf/workload.data.txt');

let server = null, context = null, tmp = null, n = 0;
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

function startServer(files) {
  server = spawnView(BIN, files);
  return viewUrl(server, WAIT);
}

async function main() {
  mkdirSync(ART, { recursive: true });
  tmp = mkdtempSync(path.join(tmpdir(), 'hs-browser-gc-'));
  const want = JSON.parse(execFileSync(BIN, ['gcstats', NETTRACE, '--format', 'json'],
    { encoding: 'utf8' }));
  const url = await startServer([NETTRACE, PERF]);
  const { chromium } = await import(path.join(SRC, 'node_modules/playwright-core/index.mjs'));
  context = await chromium.launchPersistentContext(path.join(tmp, 'profile'), {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]');

  ok(!(await page.isHidden('#tabs [data-tab="gc"]')), 'the GC tab shows for a .nettrace');
  await page.click('#tabs [data-tab="gc"]');
  await page.waitForSelector('#view-gc.active table');
  const seen = await page.evaluate(() => {
    const v = document.getElementById('view-gc');
    const tables = [...v.querySelectorAll('table')];
    return {
      heads: [...v.querySelectorAll('h3')].map((h) => h.textContent),
      rows: tables[2] ? [...tables[2].querySelectorAll('tbody tr')].map((r) =>
        [...r.children].map((c) => c.textContent)) : [],
      rollupAll: tables[1] ? [...tables[1].querySelector('tbody tr').children].map((c) => c.textContent) : [],
      bars: v.querySelectorAll('svg.gc-chart rect.gc-pause').length,
      after: v.querySelectorAll('svg.gc-chart polyline.gc-after').length,
    };
  });
  ok(seen.heads.some((h) => h === 'GC Rollup By Generation') &&
    seen.heads.some((h) => h === 'GC Events by Time'), 'both tables are titled as in PerfView', seen.heads);
  ok(seen.rows.length === want.gcs.length && want.gcs.length === 3, 'one row per GC: 3', seen.rows);
  ok(seen.rows.every((r, i) => r[0] === String(i + 1) && r[2] === 'Induced' && r[3] === '2N' &&
    r[6] === want.gcs[i].pause_ms.toFixed(3)), 'index, reason, gen and pause as gcstats says', seen.rows);
  ok(seen.rollupAll[0] === 'ALL' && seen.rollupAll[1] === '3', 'the rollup counts all three', seen.rollupAll);
  ok(seen.bars === 3 && seen.after === 1, 'the chart has a pause bar per GC and the heap line', seen);
  await page.screenshot({ path: path.join(ART, 'gc.png') });

  // the perf trace: no GC tab
  await page.selectOption('#trace', '1');
  await page.waitForFunction(() => document.querySelector('#tabs [data-tab="gc"]').hidden,
    null, { timeout: WAIT });
  ok(true, 'the GC tab hides for a trace that is not .NET');
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
