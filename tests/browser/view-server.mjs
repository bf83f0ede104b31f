// view-server.mjs - start `heapscope view` on loopback at a free port and
// learn its URL from what it prints; the browser tests reach it through
// harness.mjs (startView, stopView), which owns the process.
import { spawn } from 'node:child_process';

// The `heapscope view` process of FILES (its stdout is read for the URL),
// on PORT (0: a free one), with more options ARGS (['--merge']).
export function spawnView(bin, files, port = 0, args = []) {
  return spawn(bin, ['view', ...files, ...args, '--no-browser', '--bind', '127.0.0.1', '--port', String(port)],
    { stdio: ['ignore', 'pipe', 'inherit'] });
}

// The URL PROC prints, or an error after WAIT ms or when it exits first.
export function viewUrl(proc, wait) {
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('heapscope view printed no URL')), wait);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]);
      }
    });
    proc.on('exit', (code) => reject(new Error(`heapscope view exited (${code})`)));
  });
}
