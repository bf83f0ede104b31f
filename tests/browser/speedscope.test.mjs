// speedscope.test.mjs - heapscope's speedscope export, loaded into the
// real speedscope (its npm package's built files, served from a loopback
// server) in Debian's chromium through playwright-core: the profile opens
// under its view's name, with heapscope's frames, and speedscope's own
// totals (the Sandwich view's Total of the outermost frame) are those of
// `heapscope report`, for a memory view (bytes) and a CPU source (ms).
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM
// (default /usr/bin/chromium). Output is TAP.

import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { BIN, BUILD, SRC, WAIT, atCleanup, begin, check, errors, launchBrowser, report, runTest,
  skip } from './harness.mjs';

const RELEASE = path.join(SRC, 'node_modules/speedscope/dist/release');

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png',
  '.woff2': 'font/woff2', '.ico': 'image/x-icon', '.txt': 'text/plain' };

// Serve speedscope's files and the profiles in @dir on 127.0.0.1.
function serve(dir) {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      const name = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '');
      const file = [path.join(dir, name), path.join(RELEASE, name || 'index.html')]
        .find((p) => !name.includes('..') && existsSync(p) && !p.endsWith('/'));
      if (!file) {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream' });
      res.end(readFileSync(file));
    });
    atCleanup(() => server.close());
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`));
  });
}

// The total `heapscope report` gives @file (from @source), nothing excluded.
function reportTotal(file, source) {
  return report(file, ['--exc', '', ...(source ? ['--source', source] : [])]).summary.metric;
}

// speedscope's own spelling of a total (its ByteFormatter and TimeFormatter)
function bytesText(v) {
  const units = [['GB', 1024 ** 3], ['MB', 1024 ** 2], ['KB', 1024]];
  for (const [u, m] of units) if (v >= m) return `${(v / m).toFixed(2)} ${u}`;
  return `${v.toFixed(0)} B`;
}
function msText(v) {
  if (v >= 1000) return `${(v / 1000).toFixed(2)}s`;
  return `${v.toFixed(2)}ms`;
}

// Open @file in speedscope; the Sandwich view's rows as [name, total, self].
async function open(page, base, file, title) {
  await page.goto(`${base}/index.html?f=${file}#profileURL=${encodeURIComponent(`${base}/${file}`)}`);
  await page.waitForFunction((t) => document.title.startsWith(t), title, { timeout: WAIT });
  await page.keyboard.press('3');		// the Sandwich view: a table of every frame
  await page.waitForFunction(() => document.querySelectorAll('tr').length > 2, null,
    { timeout: WAIT });
  return page.$$eval('tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')]
    .map((td) => td.textContent.trim())));
}

async function main() {
  if (!existsSync(path.join(RELEASE, 'index.html'))) {
    skip('speedscope is not installed (scripts/npm-deps.sh)');
    return;
  }
  const tmp = begin({ name: 'speedscope', limitS: null });
  const heap = path.join(tmp, 'm.heapscope');
  execFileSync(BIN, ['run', '-q', '-o', heap, '--', path.join(BUILD, 'tests/targets/memtest')],
    { stdio: 'ignore' });
  execFileSync(BIN, ['convert', heap, '-o', path.join(tmp, 'alloc.speedscope.json')]);
  execFileSync(BIN, ['convert', heap, '--source', 'leaks', '-o', path.join(tmp, 'leaks.speedscope.json')]);
  const perf = path.join(SRC, 'tests/data/perf/hotloop.data.txt');
  execFileSync(BIN, ['convert', perf, '-o', path.join(tmp, 'cpu.speedscope.json')]);
  const base = await serve(tmp);

  // speedscope draws with WebGL, and logs what it cannot load itself
  const { page } = await launchBrowser({ gpu: true, consoleErrors: false });

  const cases = [
    ['alloc.speedscope.json', 'alloc', bytesText(reportTotal(heap)), 'memtest!site_large'],
    ['leaks.speedscope.json', 'leaks', bytesText(reportTotal(heap, 'leaks')), 'memtest!site_leak'],
    ['cpu.speedscope.json', 'heapscope', msText(reportTotal(perf)), 'hotloop!hot_function'],
  ];
  for (const [file, title, total, name] of cases) {
    let rows = [];
    try {
      rows = await open(page, base, file, title);
    } catch (e) {
      check(false, `speedscope opens ${file}`, String(e));
      continue;
    }
    check(rows.length > 2, `speedscope opens ${file} as "${title}"`);
    const names = rows.map((r) => r.find((c) => /!|Process|Thread/.test(c)) || '');
    check(names.some((c) => c.includes(name)), `${file} shows ${name}`, rows.slice(0, 5));
    // the outermost frame holds everything: its Total is the report's
    check(rows.some((r) => r[0] === `${total} (100%)`),
      `${file}: speedscope's total is report's ${total}`, rows.slice(0, 4));
  }
  check(errors.length === 0, 'speedscope raised no page error', errors);
}

await runTest(main);
