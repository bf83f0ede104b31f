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
import path from 'node:path';
import { BIN, BUILD, begin, errors, launchBrowser, ok, report, runTest, settled, shot, startView }
  from './harness.mjs';

const MEMTEST = path.join(BUILD, 'tests/targets/memtest');

let page = null;

// ByName's rows as shown: name and exact Exc (the tooltip of the Exc cell).
async function byName() {
  return page.$$eval('#view-byname .row:not([hidden]):not(.pending)', (rows) => rows.map((r) => ({
    key: r.dataset.key, index: Number(r.dataset.index), exc: r.children[2].title,
  })));
}

const exact = (v) => `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }).format(v)} bytes`;

async function main() {
  const tmp = begin({ name: 'foldplus', limitS: 120 });
  const trace = path.join(tmp, 'm.heapscope');
  execFileSync(BIN, ['run', '-q', '-o', trace, '--', MEMTEST], { stdio: ['ignore', 'ignore', 'inherit'] });
  const want = report(trace, ['--fold', '+site_temp']);
  const plain = report(trace);
  const url = await startView([trace]);
  ({ page } = await launchBrowser());
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
  await shot('foldplus');
  ok(errors.length === 0, 'no page errors', errors);
}

await runTest(main);
