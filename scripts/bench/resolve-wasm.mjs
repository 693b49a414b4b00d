#!/usr/bin/env node
// The wasm32 memory of a job end's code-graph resolution, as the worker runs it, without the
// worker: stored graphs (`path\tjson` lines, `edgerag-wasm-check graphs`) fed to the wasm32
// build of crates/wasm-check (the core's `SymbolTable`, in pages of PAGE_BYTES of JSON, default
// 4 MB as `GRAPH_PAGE_BYTES`): every graph's definitions, the graphs with base types again, then
// each page's graphs resolved and voted one at a time (as the worker does when their cross-file
// edges did not change), then the ranks. Prints `memory.buffer.byteLength` after each step as JSON (wasm memory never shrinks:
// the last figure is the peak), the live heap and its peak (the module's counting allocator), and
// each step's milliseconds.
// The table is made for NODES nodes (the worker counts its stored nodes; 0: grown as needed).
//
//   node scripts/bench/resolve-wasm.mjs <module.wasm> <graphs.tsv>   (scripts/bench/resolve-wasm.sh
//                                                                     makes both)
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [wasmPath, graphsPath] = process.argv.slice(2);
const pageBytes = Number(process.env.PAGE_BYTES ?? 4_000_000);
const { exports: w } = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmPath)), {});
const mb = () => Number((w.memory.buffer.byteLength / 1e6).toFixed(1));
// Live heap and its peak since the last mark (the module's counting allocator).
const heap = () => ({ live: Number((w.ewc_heap(0) / 1e6).toFixed(1)), peak: Number((w.ewc_heap(1) / 1e6).toFixed(1)) });
const marks = {};
let lastMark = performance.now();
const mark = (name) => {
  const now = performance.now();
  marks[name] = { memory: mb(), ...heap(), ms: Math.round(now - lastMark) };
  lastMark = now;
  w.ewc_heap(2);
};
const enc = new TextEncoder();
function call(step, text = '', first = 0) {
  const bytes = enc.encode(text);
  const ptr = bytes.length ? w.ewc_alloc(bytes.length) : 0;
  if (bytes.length) new Uint8Array(w.memory.buffer, ptr, bytes.length).set(bytes);
  return w.ewc_resolve(step, ptr, bytes.length, first);
}
async function* rows() {
  const lines = createInterface({ input: createReadStream(graphsPath), crlfDelay: Infinity });
  for await (const line of lines) {
    const tab = line.indexOf('\t');
    if (tab > 0) yield line.slice(tab + 1);
  }
}

/** Calls `f` with each page of rows: consecutive graphs up to `pageBytes` of JSON (a larger one alone). */
async function pages(f) {
  let held = [];
  let bytes = 0;
  for await (const g of rows()) {
    const n = Buffer.byteLength(g);
    if (held.length && bytes + n > pageBytes) {
      f(held);
      held = [];
      bytes = 0;
    }
    held.push(g);
    bytes += n;
  }
  if (held.length) f(held);
}

const start = mb();
mark('start');
call(0, '', Number(process.env.NODES ?? 0));
let files = 0;
let definitions = 0;
let json = 0;
// Step 1 one row at a time, as the worker reads each page's rows.
for await (const g of rows()) {
  definitions += call(1, g);
  files += 1;
  json += Buffer.byteLength(g);
}
const afterTable = mb();
mark('table');
call(5);
mark('sealed');
// The graphs with `EXTENDS` / `IMPLEMENTS` edges again, for their base types (the others are
// passed over unread, as the worker does not read them).
let typedFiles = 0;
let fi = 0;
for await (const g of rows()) typedFiles += call(7, g, fi++);
mark('bases');
let first = 0;
let edges = 0;
let pages_ = 0;
await pages((held) => {
  for (const [i, g] of held.entries()) call(2, g, first + i);
  edges += call(3);
  first += held.length;
  pages_ += 1;
});
const afterPages = mb();
mark('pages');
const votes = call(6);
const ranked = call(4);
const end = mb();
mark('ranks');
console.log(JSON.stringify({ files, typedFiles, definitions, jsonMB: Number((json / 1e6).toFixed(1)), pages: pages_, edges, votes, ranked, memoryMB: { start, afterTable, afterPages, afterRanks: end }, grewMB: Number((end - start).toFixed(1)), marks }));
