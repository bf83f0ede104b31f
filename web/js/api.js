// api.js - the JSON API of `heapscope view` (docs/json-api.md). Every call
// is a POST of one query object; the token travels in the cookie that the
// first page load set.

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

let inflight = 0;
const listeners = new Set();

// onBusy(fn): fn(count) is called whenever the number of requests in flight changes.
export function onBusy(fn) {
  listeners.add(fn);
}

function busy(delta) {
  inflight += delta;
  for (const fn of listeners) fn(inflight);
}

// call('view', query) -> the parsed answer; throws ApiError with the server's message.
export async function call(name, query) {
  busy(1);
  try {
    const r = await fetch('/api/' + name, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(query ?? {}),
    });
    let body;
    try {
      body = await r.json();
    } catch {
      throw new ApiError(`${name}: the server sent no JSON (HTTP ${r.status})`, r.status);
    }
    if (!r.ok) throw new ApiError(body.error || `HTTP ${r.status}`, r.status);
    return body;
  } finally {
    busy(-1);
  }
}

export async function info() {
  const r = await fetch('/api/info', { credentials: 'same-origin' });
  const body = await r.json();
  if (!r.ok) throw new ApiError(body.error || `HTTP ${r.status}`, r.status);
  return body;
}
