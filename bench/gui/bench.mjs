// bench/gui/bench.mjs - issue 17's targets for `heapscope view`, timed in
// the browser (Debian's chromium through playwright-core, as the browser
// tests drive it) for one or more builds, so that a change to the server
// or the GUI is measured as a user meets it.
//
//   node bench/gui/bench.mjs [options] BUILD [BUILD...]
//
// BUILD is a build directory (its heapscope, bench/gen_perf_script). The
// first BUILD is the baseline: every other one gets its ratio to it.
// Options:
//   --heap-iterations N  the python workload's loop count (default 750000:
//                        about 7M allocations)
//   --perf-bytes N       size of the generated perf script (default
//                        6170000000: issue 17's input, about 2.1M samples
//                        of 50,000 functions; 1000000000 makes about 340k)
//   --work DIR           where the inputs are made and kept (default a new
//                        temporary directory, removed at the end); a DIR
//                        given is reused, so a rerun records nothing again
//   --json FILE          also write the results as JSON
//   --only heap|perf     one of the two workloads
//   --repeat N           heap: do the Updates and the cached source
//                        switches N times in the session (other patterns
//                        and Fold% each time, so the server computes
//                        them), and give each step's median (default 1)
//
// Workloads:
// - heap: python3 building dicts under PYTHONMALLOC=malloc, recorded by
//   each BUILD's own `heapscope run` (the trace format may differ between
//   builds; the program and its allocations are the same). Timed: the
//   first open (from starting `heapscope view` to the first screen, and
//   from loading the page), an Update with ExcPats, one with IncPats, a
//   Fold% change, a switch to the peak source (first: computed) and back
//   and to peak again (cached), then an Update while a second tab's Stats
//   computes the trace's stats.
// - perf: `gen_perf_script N 1 50000 20000` of the baseline (the same text
//   for every build: 50,000 functions, 20,000 hot paths). Timed: the open, then each Update
//   (IncPats, ExcPats, GroupPats by module, Fold%, a time range); the
//   server's peak RSS (VmHWM) after them.
// Each step is timed from the action to the GUI's "settled" mark with no
// API request left in flight. Nothing is repeated: on a shared machine
// run it twice and compare. Not part of `make check`.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync,
  openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnView, viewUrl } from '../../tests/browser/view-server.mjs';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = process.env.HS_CHROMIUM || '/usr/bin/chromium';
const WAIT = 600000;		// ms: the bound of one step

function usage(msg) {
  if (msg) console.error(`bench.mjs: ${msg}`);
  console.error('usage: node bench/gui/bench.mjs [--heap-iterations N] [--perf-bytes N] ' +
    '[--work DIR] [--json FILE] [--only heap|perf] [--repeat N] BUILD [BUILD...]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { heapIterations: 750000, perfBytes: 6170000000, work: null, json: null, only: null,
    repeat: 1, builds: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    if (a === '--heap-iterations') o.heapIterations = Number(val());
    else if (a === '--perf-bytes') o.perfBytes = Number(val());
    else if (a === '--work') o.work = path.resolve(val());
    else if (a === '--json') o.json = path.resolve(val());
    else if (a === '--only') o.only = val();
    else if (a === '--repeat') o.repeat = Number(val());
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else o.builds.push(path.resolve(a));
  }
  if (!o.builds.length) usage('no BUILD');
  if (!(o.heapIterations > 0) || !(o.perfBytes > 0) || !(o.repeat >= 1))
    usage('counts must be positive');
  if (o.only && !['heap', 'perf'].includes(o.only)) usage('--only takes heap or perf');
  for (const b of o.builds)
    if (!existsSync(path.join(b, 'heapscope'))) usage(`${b}/heapscope does not exist`);
  return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The python workload's script: dicts of lists and strings, a third of
// them deleted again (bench/readside/run.sh's, with the count an argument).
const DICTS = `import sys
n = int(sys.argv[1])
d = {}
for i in range(n):
    d[str(i)] = {"k": i, "v": [i, str(i)]}
    if i % 3 == 0:
        del d[str(i // 2)]
`;

// The heap trace of @build's `heapscope run` of the python workload.
function heapTrace(o, build, i) {
  const file = path.join(o.work, `heap-${i}-${o.heapIterations}.hstrace`);
  if (existsSync(file)) return file;
  const py = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'],
    { encoding: 'utf8' }).trim();
  writeFileSync(path.join(o.work, 'dicts.py'), DICTS);
  const t0 = performance.now();
  execFileSync(path.join(build, 'heapscope'), ['run', '-q', '--no-view', '-o', file, '--', py,
    path.join(o.work, 'dicts.py'), String(o.heapIterations)],
  { stdio: 'ignore', env: { ...process.env, PYTHONMALLOC: 'malloc' } });
  log(`  recorded ${path.basename(file)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return file;
}

// Issue 17's settings of gen_perf_script (`BYTES 1 50000 20000`): seed 1,
// 50,000 functions, 20,000 call paths the samples share, hot ones more
// often (about 2,920 bytes a sample).
const PERF_GEN = ['1', '50000', '20000'];

// The perf script of o.perfBytes bytes.
function perfScript(o) {
  const file = path.join(o.work, `perf-${o.perfBytes}-${PERF_GEN.join('-')}.data.txt`);
  if (existsSync(file)) return file;
  const fd = openSync(file, 'w');
  try {
    execFileSync(path.join(o.builds[0], 'bench/gen_perf_script'),
      [String(o.perfBytes), ...PERF_GEN], { stdio: ['ignore', fd, 'inherit'] });
  } finally {
    closeSync(fd);
  }
  return file;
}

function log(s) {
  process.stderr.write(`${s}\n`);
}

// The CPU time (user + system, all threads) process @pid has used, in ms.
function cpuMs(pid) {
  const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 1000 / CLK_TCK;
}
// The CPU time (ms) of the processes started from the one whose command
// line names @mark (Chromium's: its profile directory) and of that one.
function treeCpuMs(mark) {
  const kids = new Map(), roots = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
      (kids.get(ppid) ?? kids.set(ppid, []).get(ppid)).push(Number(d));
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(mark)) roots.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  const seen = new Set();
  let ms = 0;
  for (const todo = [...roots]; todo.length;) {
    const pid = todo.pop();
    if (seen.has(pid)) continue;
    seen.add(pid);
    try {
      ms += cpuMs(pid);
    } catch {
      // gone meanwhile
    }
    todo.push(...(kids.get(pid) ?? []));
  }
  return ms;
}
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

// The peak and current RSS of process @pid in MB (Linux).
function rssMb(pid) {
  const st = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(st)?.[1] ?? NaN);
  return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
}

// One `heapscope view` of @files in a fresh browser page: its steps timed.
class Session {
  constructor(build, files, profile) {
    this.build = build;
    this.profile = profile;
    this.files = files;
    this.inflight = 0;
    this.lastDone = 0;
    this.started = new Map();	// request -> when it was sent
    this.answers = [];		// [{path, t0, ms}]: the API requests answered
  }

  async open(chromium) {
    const profile = this.profile;
    const t0 = performance.now();
    this.view = spawnView(path.join(this.build, 'heapscope'), this.files);
    this.url = await viewUrl(this.view, WAIT);
    this.context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    this.page = this.context.pages()[0] || await this.context.newPage();
    this.page.setDefaultTimeout(WAIT);
    this.cdp = await this.context.newCDPSession(this.page);
    await this.cdp.send('Performance.enable');
    const api = (r) => new URL(r.url()).pathname.startsWith('/api/');
    this.page.on('request', (r) => {
      if (!api(r)) return;
      this.inflight++;
      this.started.set(r, performance.now());
    });
    const done = (r) => {
      if (!api(r)) return;
      this.inflight--;
      this.lastDone = performance.now();
      const t0 = this.started.get(r);
      this.started.delete(r);
      this.answers.push({ path: new URL(r.url()).pathname.slice(5), t0, ms: this.lastDone - t0 });
    };
    this.page.on('requestfinished', done);
    this.page.on('requestfailed', done);
    const tPage = performance.now();
    await this.page.goto(this.url);
    await this.page.waitForSelector('body[data-ready="1"]');
    await this.quiet(0);
    return { from_start_ms: this.lastEnd - t0, from_page_ms: this.lastEnd - tPage };
  }

  // Wait until the GUI has settled @before loads and no API request is in
  // flight; this.lastEnd: when the last of them finished.
  async quiet(before) {
    await this.page.waitForFunction((b) => Number(document.body.dataset.settled || 0) > b &&
      !document.body.classList.contains('busy'), before, { timeout: WAIT, polling: 20 });
    const settledAt = performance.now();
    while (this.inflight > 0) await sleep(10);
    this.lastEnd = Math.max(settledAt, this.lastDone);
  }

  // Chromium's own time so far in the page's renderer (ms): scripts,
  // layout, style and all its tasks (CDP Performance.getMetrics).
  async chromiumMs() {
    const { metrics } = await this.cdp.send('Performance.getMetrics');
    const m = Object.fromEntries(metrics.map((x) => [x.name, x.value * 1000]));
    return { script: m.ScriptDuration, layout: m.LayoutDuration + m.RecalcStyleDuration,
      task: m.TaskDuration };
  }

  // Time @action: ms from it to the view settled with nothing in flight.
  // this.slowest: the API requests it caused, slowest first ("rows 812");
  // this.cost: the server's CPU and Chromium's script and layout time
  // (ms) from the action to the settled view, and the requests' spans
  // (ms from the action: "rows 3-95").
  async step(action) {
    const before = await this.page.evaluate(() => Number(document.body.dataset.settled || 0));
    const c0 = await this.chromiumMs();
    const s0 = cpuMs(this.view.pid), b0 = treeCpuMs(this.profile);
    const t0 = performance.now();
    await action();
    await this.quiet(before);
    const s1 = cpuMs(this.view.pid), b1 = treeCpuMs(this.profile);
    const c1 = await this.chromiumMs();
    const mine = this.answers.filter((a) => a.t0 >= t0);
    this.slowest = mine.slice().sort((a, b) => b.ms - a.ms)
      .slice(0, 3).map((a) => `${a.path} ${Math.round(a.ms)}`).join(', ');
    this.cost = { server_cpu: s1 - s0, chromium_cpu: b1 - b0, script: c1.script - c0.script,
      layout: c1.layout - c0.layout, task: c1.task - c0.task,
      requests: mine.map((a) => `${a.path} ${Math.round(a.t0 - t0)}-${Math.round(a.t0 - t0 + a.ms)}`)
        .join(', ') };
    return this.lastEnd - t0;
  }

  // Step @name of result @r: its time, and its slowest requests in r.why;
  // a step done again adds to r.runs (medians()).
  async timed(r, name, promise) {
    r[name] = await promise;
    r.why ??= {};
    r.why[name] = this.slowest;
    r.cost ??= {};
    r.cost[name] = this.cost;
    r.runs ??= {};
    (r.runs[name] ??= []).push({ ms: r[name], ...this.cost });
  }

  // Type @value into box @id (not timed), then time its Enter.
  async box(id, value) {
    await this.page.fill(`#${id}`, value);
    return this.step(() => this.page.press(`#${id}`, 'Enter'));
  }

  source(name) {
    return this.step(() => this.page.selectOption('#source', name));
  }

  // The keys of ByName's first rows on screen.
  topKeys(n) {
    return this.page.$$eval('#view-byname .row:not([hidden])', (rs, k) =>
      rs.map((r) => r.dataset.key).filter((x) => x && x !== 'ROOT').slice(0, k), n);
  }

  rss() {
    return rssMb(this.view.pid);
  }

  // Issue 17's "Stats must not block the other tabs": a second tab of the
  // same server opens the Stats tab (the trace's `heapscope stats`, not
  // computed before this step), and once its /api/stats is on its way an
  // Update (Fold% 2) is timed in the first tab. r.update_during_stats_ms:
  // that Update; r.stats_tab_ms: the other tab's Stats, from the click to
  // its answer; r.stats_pending_ms: how long Stats still ran after the
  // Update had settled (0 would mean it did not overlap, and says nothing).
  async duringStats(r) {
    const other = await this.context.newPage();
    other.setDefaultTimeout(WAIT);
    try {
      await other.goto(this.url);
      await other.waitForSelector('body[data-ready="1"]');
      const isStats = (q) => new URL(q.url()).pathname === '/api/stats';
      const sent = other.waitForRequest(isStats);
      const answered = other.waitForResponse(isStats);
      const t0 = performance.now();
      await other.click('#tabs [data-tab="stats"]');
      await sent;
      await this.page.fill('#foldpct', '2');
      await this.timed(r, 'update_during_stats_ms',
        this.step(() => this.page.press('#foldpct', 'Enter')));
      const tUpdate = this.lastEnd;
      await answered;
      const tStats = performance.now();
      r.stats_tab_ms = tStats - t0;
      r.stats_pending_ms = Math.max(0, tStats - tUpdate);
      await this.page.fill('#foldpct', '');
      await this.page.press('#foldpct', 'Enter');
    } finally {
      await other.close();
    }
  }

  async close() {
    await this.context?.close().catch(() => {});
    rmSync(this.profile, { recursive: true, force: true });
    if (this.view && this.view.exitCode === null) {
      const gone = new Promise((r) => this.view.once('exit', r));
      this.view.kill('SIGTERM');
      await gone;
    }
  }
}

// A pattern that matches name @key (the part before the first character
// PerfView's patterns give a meaning: wildcards, captures, separators).
function literal(key) {
  return key.replace(/[%*;|{}^$@\\].*$/, '') || key;
}

const median = (xs) => {
  const v = xs.slice().sort((a, b) => a - b), h = v.length >> 1;
  return v.length % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
};

// Each step of @r done more than once: its median time and costs.
function medians(r) {
  for (const [name, runs] of Object.entries(r.runs || {})) {
    if (runs.length < 2) continue;
    r[name] = median(runs.map((x) => x.ms));
    for (const k of ['server_cpu', 'chromium_cpu', 'script', 'layout', 'task'])
      r.cost[name][k] = median(runs.map((x) => x[k]));
  }
}

async function benchHeap(o, chromium, build, i) {
  const file = heapTrace(o, build, i);
  const s = new Session(build, [file], path.join(o.work, `profile-${process.pid}-h${i}`));
  const r = {};
  try {
    const open = await s.open(chromium);
    r.open_ms = open.from_start_ms;
    r.open_page_ms = open.from_page_ms;
    r.why = { open_ms: s.answers.sort((a, b) => b.ms - a.ms).slice(0, 3)
      .map((a) => `${a.path} ${Math.round(a.ms)}`).join(', ') };
    const keys = await s.topKeys(4 + 2 * o.repeat);
    await s.timed(r, 'update_exc_ms', s.box('exc', literal(keys[1] ?? keys[0])));
    await s.timed(r, 'update_inc_ms', s.box('inc', literal(keys[0])));
    await s.box('exc', '');
    await s.box('inc', '');
    await s.timed(r, 'fold_pct_ms', s.box('foldpct', '3'));
    await s.box('foldpct', '');
    const first = await s.page.$eval('#source', (e) => e.value);
    await s.timed(r, 'source_first_ms', s.source('peak'));
    await s.timed(r, 'source_back_ms', s.source(first));
    await s.timed(r, 'source_cached_ms', s.source('peak'));
    // again, with names and a Fold% not asked before
    for (let k = 1; k < o.repeat; k++) {
      const name = (j) => literal(keys[Math.min(keys.length - 1, 2 * k + j)]);
      await s.timed(r, 'source_back_ms', s.source(first));
      await s.timed(r, 'update_exc_ms', s.box('exc', name(1)));
      await s.timed(r, 'update_inc_ms', s.box('inc', name(0)));
      await s.box('exc', '');
      await s.box('inc', '');
      await s.timed(r, 'fold_pct_ms', s.box('foldpct', String(3 + k)));
      await s.box('foldpct', '');
      await s.timed(r, 'source_cached_ms', s.source('peak'));
    }
    medians(r);
    await s.duringStats(r);
    r.rss_peak_mb = s.rss().peak;
  } finally {
    await s.close();
  }
  return r;
}

async function benchPerf(o, chromium, build, i, file) {
  const s = new Session(build, [file], path.join(o.work, `profile-${process.pid}-p${i}`));
  const r = {};
  try {
    const open = await s.open(chromium);
    r.open_ms = open.from_start_ms;
    r.open_page_ms = open.from_page_ms;
    r.why = { open_ms: s.answers.sort((a, b) => b.ms - a.ms).slice(0, 3)
      .map((a) => `${a.path} ${Math.round(a.ms)}`).join(', ') };
    r.rss_open_mb = s.rss().peak;
    const keys = await s.topKeys(4);
    await s.timed(r, 'update_inc_ms', s.box('inc', literal(keys[0])));
    await s.box('inc', '');
    await s.timed(r, 'update_exc_ms', s.box('exc', literal(keys[1] ?? keys[0])));
    await s.box('exc', '');
    await s.timed(r, 'update_group_ms', s.box('group', '{%}!->module $1'));
    await s.box('group', '');
    await s.timed(r, 'update_fold_pct_ms', s.box('foldpct', '3'));
    await s.box('foldpct', '');
    const sum = await s.page.$eval('#summary', (e) => e.textContent);
    const last = Number(/Last: ([\d.]+)/.exec(sum)?.[1] ?? 0);
    await s.timed(r, 'update_range_ms', s.box('end', String(Math.round(last / 2))));
    r.rss_peak_mb = s.rss().peak;
  } finally {
    await s.close();
  }
  return r;
}

// A Markdown table of the numbers of @rows (one per build) with the
// ratios to the first, then each build's slowest requests per step.
function table(title, builds, rows) {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((k) => k !== 'why' &&
    k !== 'cost' && k !== 'runs');
  const base = rows[0];
  const head = ['', ...builds.map((b, i) => (i ? `build ${i}` : 'baseline')),
    ...builds.slice(1).map((b, i) => `ratio ${i + 1}`)];
  const lines = [`## ${title}`, '', `| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const k of keys) {
    const v = rows.map((r) => r[k]);
    const ratio = v.slice(1).map((x) => (base[k] > 0 && x >= 0 ? `${(x / base[k]).toFixed(2)}x` : ''));
    lines.push(`| ${[k, ...v.map((x) => (x === undefined ? '' : x.toFixed(0))), ...ratio].join(' | ')} |`);
  }
  const costs = [...new Set(rows.flatMap((r) => Object.keys(r.cost || {})))];
  if (costs.length) {
    lines.push('', 'CPU of each step (ms): the server\'s, all of Chromium\'s processes\', ' +
      'then the time of its scripts and of its layout (with style) in the page, per build:', '',
    `| | ${builds.map((b, i) => (i ? `build ${i}` : 'baseline')).join(' | ')} |`,
    `|---|${builds.map(() => '---:').join('|')}|`);
    for (const k of costs) {
      lines.push(`| ${k} | ${rows.map((r) => {
        const c = r.cost?.[k];
        return c ? `${c.server_cpu.toFixed(0)} / ${c.chromium_cpu.toFixed(0)} / ` +
          `${c.script.toFixed(0)} / ${c.layout.toFixed(0)}` : '';
      }).join(' | ')} |`);
    }
  }
  lines.push('', 'Slowest API requests of each step (ms):');
  for (const [i, r] of rows.entries())
    for (const [k, w] of Object.entries(r.why || {})) lines.push(`- ${i ? `build ${i}` : 'baseline'} ${k}: ${w}`);
  lines.push('', 'The requests of each step (ms from the action to the sending and the answer):');
  for (const [i, r] of rows.entries())
    for (const [k, c] of Object.entries(r.cost || {}))
      lines.push(`- ${i ? `build ${i}` : 'baseline'} ${k}: ${c.requests}`);
  return lines.join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const own = !o.work;
  o.work ??= mkdtempSync(path.join(tmpdir(), 'hs-gui-bench.'));
  mkdirSync(o.work, { recursive: true });
  const { chromium } = await import(path.join(SRC, 'node_modules/playwright-core/index.mjs'));
  const out = { builds: o.builds, heap_iterations: o.heapIterations, perf_bytes: o.perfBytes,
    perf_gen: PERF_GEN,
    heap: [], perf: [] };
  try {
    if (o.only !== 'perf') {
      for (const [i, b] of o.builds.entries()) {
        log(`heap: ${b}`);
        out.heap.push(await benchHeap(o, chromium, b, i));
        log(`  ${JSON.stringify(out.heap.at(-1))}`);
      }
    }
    if (o.only !== 'heap') {
      const file = perfScript(o);
      for (const [i, b] of o.builds.entries()) {
        log(`perf: ${b}`);
        out.perf.push(await benchPerf(o, chromium, b, i, file));
        log(`  ${JSON.stringify(out.perf.at(-1))}`);
      }
    }
  } finally {
    if (own) rmSync(o.work, { recursive: true, force: true });
  }
  console.log(o.builds.map((b, i) => `- ${i ? `build ${i}` : 'baseline'}: ${b}`).join('\n') + '\n');
  if (out.heap.length)
    console.log(table(`heap trace, python dicts x ${o.heapIterations} (ms, MB${o.repeat > 1
      ? `; Updates and cached switches: medians of ${o.repeat}` : ''})`, o.builds, out.heap) + '\n');
  if (out.perf.length)
    console.log(table(`perf script, gen_perf_script ${o.perfBytes} ${PERF_GEN.join(' ')} (ms, MB)`,
      o.builds, out.perf));
  if (o.json) writeFileSync(o.json, JSON.stringify(out, null, 1) + '\n');
}

await main();
