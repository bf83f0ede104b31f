// gc.test.mjs - the GC tab in a real browser (web/js/gc.js): playwright-core
// drives Debian's chromium against `heapscope view` of a .nettrace fixture
// and of a perf trace. The tab shows for the .NET trace only; its tables
// and chart hold the fixture's three induced GCs with the numbers of
// `heapscope gcstats --format json`. A screenshot goes to
// $HS_BUILD/browser-artifacts/gc.png. Output is TAP; every wait is bounded.
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM.

import path from 'node:path';
import { SRC, WAIT, begin, cliJson, errors, launchBrowser, ok, runTest, shot, startView }
  from './harness.mjs';

const NETTRACE = path.join(SRC, 'tests/data/dotnet/allocs.nettrace');
const PERF = path.join(SRC, 'tests/data/perf/workload.data.txt');

async function main() {
  begin({ name: 'gc', limitS: 120 });
  const want = cliJson(['gcstats', NETTRACE]);
  const url = await startView([NETTRACE, PERF]);
  const { page } = await launchBrowser();
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
  await shot('gc');

  // the perf trace: no GC tab
  await page.selectOption('#trace', '1');
  await page.waitForFunction(() => document.querySelector('#tabs [data-tab="gc"]').hidden,
    null, { timeout: WAIT });
  ok(true, 'the GC tab hides for a trace that is not .NET');
  ok(errors.length === 0, 'no page errors', errors);
}

await runTest(main);
