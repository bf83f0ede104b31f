// harness.mjs - the TAP harness every browser test (tests/browser/*.test.mjs)
// shares: the environment meson sets, the numbered ok/not ok lines and the
// plan, the run's deadline, the `heapscope view` process, Debian's chromium
// launched through playwright-core with the page's errors collected, and
// the cleanup that leaves no process or temporary directory behind.
//
// One test is one node process, so the run's state is this module's: the
// harness owns the view process, the browser context, the temporary
// directory (begin) and the page errors; a test owns its own checks and
// may stop and start the view (stopView, startView) as its parts need.
//
// Environment: HS_BIN, HS_SRC, HS_BUILD (set by meson), HS_CHROMIUM
// (default /usr/bin/chromium), HS_BROWSER_TIMEOUT (seconds for the whole
// run, default 240). Screenshots go to $HS_BUILD/browser-artifacts/.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnView, viewUrl } from './view-server.mjs';

export const BIN = process.env.HS_BIN;
export const SRC = process.env.HS_SRC;
export const BUILD = process.env.HS_BUILD;
const CHROMIUM = process.env.HS_CHROMIUM || '/usr/bin/chromium';
const LIMIT_S = Number(process.env.HS_BROWSER_TIMEOUT || 240);
export const WAIT = 30000;		// ms, the bound of every single wait
export const ART = path.join(BUILD, 'browser-artifacts');

// A check that failed and has already printed its "not ok" line.
class Fail extends Error {}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// What the page reported: uncaught exceptions and console errors.
export const errors = [];

const run = {
  n: 0,			// TAP lines printed
  failed: 0,		// of them "not ok"
  name: '',		// of the test: its temporary directory, failure.png
  shotPrefix: '',	// of every screenshot's file name
  tmp: null,		// removed by cleanup
  view: null,		// the `heapscope view` process
  url: null,		// the address it printed
  context: null,	// chromium's
  page: null,
  deadline: null,
  skipped: false,	// the plan line is printed already
  closers: [],		// more for cleanup, from atCleanup
};

// Start the run: the artifacts directory, a fresh temporary directory
// (returned) and, unless @limitS is null, the deadline after which the
// run says so, takes a screenshot (NAME-timeout.png) and stops.
// @shotPrefix starts the name of every screenshot taken with shot().
export function begin({ name, limitS = LIMIT_S, shotPrefix = '' }) {
  run.name = name;
  run.shotPrefix = shotPrefix;
  mkdirSync(ART, { recursive: true });
  run.tmp = mkdtempSync(path.join(tmpdir(), `hs-browser-${name}-`));
  if (limitS !== null) {
    run.deadline = setTimeout(async () => {
      console.log(`not ok ${++run.n} - the run took more than ${limitS} s`);
      await lastShot('timeout');
      cleanup();
      process.exit(1);
    }, limitS * 1000);
  }
  return run.tmp;
}

// @text as TAP comment lines.
function comment(text) {
  for (const line of String(text).split('\n')) console.log(`# ${line}`);
}

// Print the TAP line of a check; false: count it failed. Returns @cond.
export function check(cond, what, detail) {
  run.n++;
  if (cond) {
    console.log(`ok ${run.n} - ${what}`);
    return true;
  }
  run.failed++;
  console.log(`not ok ${run.n} - ${what}`);
  if (detail !== undefined) console.log('# ' + JSON.stringify(detail).slice(0, 2000));
  return false;
}

// check, and a failure ends the test (or its part, see parts) with Fail.
export function ok(cond, what, detail) {
  if (!check(cond, what, detail)) throw new Fail(what);
}

// `heapscope ARGS --format json`, parsed.
export function cliJson(args) {
  return JSON.parse(execFileSync(BIN, [...args, '--format', 'json'],
    { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

// `heapscope report FILE ARGS --format json`, parsed.
export function report(file, args = []) {
  return cliJson(['report', file, ...args]);
}

// The whole test is skipped for @reason (its plan says so).
export function skip(reason) {
  console.log(`1..0 # SKIP ${reason}`);
  run.skipped = true;
}

// Also do @fn at cleanup (a server of the test's own to close).
export function atCleanup(fn) {
  run.closers.push(fn);
}

// Stop everything at once; safe to call from the deadline.
function cleanup() {
  if (run.view) run.view.kill('SIGKILL');
  run.view = null;
  for (const fn of run.closers.splice(0)) fn();
  if (run.tmp) rmSync(run.tmp, { recursive: true, force: true });
  run.tmp = null;
}

// `heapscope view FILES` on a free port (or @port), with the options
// @args; its URL.
export async function startView(files, port = 0, args = []) {
  run.view = spawnView(BIN, files, port, args);
  run.url = await viewUrl(run.view, WAIT);
  return run.url;
}

// Stop the view with SIGTERM and wait until it has exited.
export async function stopView() {
  const view = run.view;
  if (!view) return;
  const gone = new Promise((r) => view.once('exit', r));
  view.kill('SIGTERM');
  await gone;
  run.view = null;
}

// Chromium, headless with a fresh profile in the temporary directory and
// no network but loopback; its context and page, whose exceptions and
// console errors go to `errors`. @gpu: leave the GPU on (speedscope draws
// with WebGL). @clipboard: allow the page to read and write it.
// @consoleErrors: collect console errors at all; @ignoreConsole: those
// that match are expected (the GUI shows them itself).
export async function launchBrowser({ gpu = false, clipboard = false, consoleErrors = true,
  ignoreConsole = null } = {}) {
  const { chromium } = await import(path.join(SRC, 'node_modules/playwright-core/index.mjs'));
  run.context = await chromium.launchPersistentContext(path.join(run.tmp, 'profile'), {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', ...(gpu ? [] : ['--disable-gpu']), '--disable-quic',
      '--no-first-run', '--disable-background-networking', '--disable-component-update',
      '--disable-sync'],
  });
  if (clipboard) await run.context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = run.context.pages()[0] || await run.context.newPage();
  run.page = page;
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (e) => errors.push(e.message));
  if (consoleErrors) {
    page.on('console', (m) => {
      if (m.type() === 'error' && !(ignoreConsole && ignoreConsole.test(m.text())))
        errors.push(m.text());
    });
  }
  return { context: run.context, page };
}

// Do @action and wait until the page has finished loading what it causes.
export async function settled(action) {
  const page = run.page;
  const before = await page.evaluate(() => Number(document.body.dataset.settled || 0));
  await action();
  await page.waitForFunction((b) => Number(document.body.dataset.settled || 0) > b &&
    !document.body.classList.contains('busy'), before, { timeout: WAIT });
}

// Type @value into the text box @id and press Enter.
export async function setBox(id, value) {
  await run.page.fill(`#${id}`, value);
  await settled(() => run.page.press(`#${id}`, 'Enter'));
}

// Switch to the tab @name and wait for its view.
export async function tab(name) {
  await settled(() => run.page.click(`#tabs [data-tab="${name}"]`));
  await run.page.waitForSelector(`#view-${name}.active`, { timeout: WAIT });
}

// Open trace @i of the view afresh (its first screen, as a new user
// sees it), from the view's address without its token.
export async function openTrace(i) {
  await run.page.goto('about:blank');
  await run.page.goto(run.url.replace(/\?token=.*/, ''));
  await run.page.waitForSelector('body[data-ready="1"]');
  if (i !== 0) await settled(() => run.page.selectOption('#trace', String(i)));
}

// A screenshot of the page (or of the element @el) as NAME.png, after the
// run's prefix.
export async function shot(name, el) {
  const file = path.join(ART, `${run.shotPrefix}${name}.png`);
  if (el) await run.page.locator(el).screenshot({ path: file });
  else await run.page.screenshot({ path: file });
}

// The page as it was when the run ended for @why, as NAME-WHY.png (the
// tests run in parallel: each has its own).
async function lastShot(why) {
  if (!run.page) return;
  await run.page.screenshot({ path: path.join(ART, `${run.name}-${why}.png`) }).catch(() => {});
}

// Run each [name, fn] of @list on its own: a failure is reported, a
// screenshot taken, and the next part goes on. @only: the names to run
// (all when empty).
export async function parts(list, only = '') {
  for (const [name, fn] of list) {
    if (only && !only.split(',').includes(name)) continue;
    try {
      await fn();
    } catch (e) {
      if (!(e instanceof Fail)) {
        run.failed++;
        console.log(`not ok ${++run.n} - ${name}: ${e.message.split('\n')[0]}`);
        comment(e.stack);
      }
      await shot(`failure-${name.replace(/ /g, '-')}`).catch(() => {});
      await run.page?.unrouteAll?.().catch(() => {});
    }
  }
}

// Run the test's @main, then print the plan, close the browser, clean up
// and exit: 1 when a check failed or @main threw. @onFailure prints more
// about a failure (its errors are ignored).
export async function runTest(main, { onFailure = null } = {}) {
  try {
    await main();
  } catch (e) {
    if (!(e instanceof Fail)) {
      run.failed++;
      console.log(`not ok ${++run.n} - ${e.message.split('\n')[0]}`);
      comment(e.stack);
    }
    for (const x of errors) console.log(`# page: ${x.split('\n')[0]}`);
    if (onFailure) await onFailure().catch(() => {});
    await lastShot('failure');
  }
  if (!run.skipped) console.log(`1..${run.n}`);
  clearTimeout(run.deadline);
  await run.context?.close().catch(() => {});
  cleanup();
  process.exit(run.failed ? 1 : 0);
}
