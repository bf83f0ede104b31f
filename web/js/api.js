// api.js - the JSON API of `heapscope view` (docs/json-api.md). Every call
// is a POST of one query object; the token travels in the cookie that the
// first page load set. cancel() aborts every request in flight (they
// reject with a CancelledError); a server that does not answer at all is
// reported as stopped, with how to start it again.

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

// Thrown by a call that cancel() aborted.
export class CancelledError extends Error {
  constructor() {
    super('cancelled');
  }
}

const GONE = 'heapscope view is not answering: it has stopped (or its computer is ' +
  'unreachable). Start it again with `heapscope view FILE...`, then open the URL it prints.';

let inflight = 0;
// the requests in flight for one tab's own view (Stats, Charts, ...), by
// tab: they are a sign of work on that tab only (pending)
const inflightOf = new Map();
let aborter = new AbortController();
// Sent with each call: the server skips what a Cancel made stale (docs/json-api.md).
const client = Array.from(crypto.getRandomValues(new Uint8Array(8)),
  (b) => b.toString(16).padStart(2, '0')).join('');
let generation = 0;
const genHeader = () => ({ 'X-Heapscope-Generation': `${client}:${generation}` });
const listeners = new Set();

// onBusy(fn): fn(count) is called whenever the number of requests in flight changes.
export function onBusy(fn) {
  listeners.add(fn);
}

// The requests in flight that tab @tab waits for: every one but those of
// other tabs' own views.
export function pending(tab) {
  let n = inflight;
  for (const [t, k] of inflightOf) if (t !== tab) n -= k;
  return n;
}

function busy(delta, tab) {
  inflight += delta;
  if (tab) inflightOf.set(tab, (inflightOf.get(tab) || 0) + delta);
  for (const fn of listeners) fn(inflight);
}

// call('view', query) -> the parsed answer; throws ApiError with the server's message.
// @tab: the tab whose own view this is for (null: the view every tab shows).
export async function call(name, query, tab = null) {
  const signal = aborter.signal;
  busy(1, tab);
  try {
    let r;
    try {
      r = await fetch('/api/' + name, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', ...genHeader() },
        body: JSON.stringify(query ?? {}),
        signal,
      });
    } catch (e) {
      if (signal.aborted) throw new CancelledError();
      throw new ApiError(GONE, 0);
    }
    let body;
    try {
      body = await r.json();
    } catch {
      if (signal.aborted) throw new CancelledError();
      throw new ApiError(`${name}: the server sent no JSON (HTTP ${r.status})`, r.status);
    }
    if (!r.ok) throw new ApiError(body.error || `HTTP ${r.status}`, r.status);
    return body;
  } finally {
    busy(-1, tab);
  }
}

// Abort every request in flight; the next calls go ahead as usual.
export function cancel() {
  aborter.abort();
  aborter = new AbortController();
  generation++;
  fetch('/api/info', { credentials: 'same-origin', headers: genHeader() }).catch(() => {});
}

export function isCancel(e) {
  return e instanceof CancelledError;
}

export async function info() {
  let r;
  try {
    r = await fetch('/api/info', { credentials: 'same-origin' });
  } catch {
    throw new ApiError(GONE, 0);
  }
  const body = await r.json();
  if (!r.ok) throw new ApiError(body.error || `HTTP ${r.status}`, r.status);
  return body;
}
