#!/usr/bin/env node
// The wasm32 memory of the chunk stage without the worker: a tree's files, in listing order, cut
// into messages as the producer cuts them (50 files or 2 MiB), each message chunked in ONE
// instance of the wasm32 build of crates/wasm-check as the stage does it (chunks and graph from
// one parse, the staged chunk JSON, the graph rows and their batches). Prints each message after
// which `memory.buffer.byteLength` grew (wasm memory never shrinks), with the live heap's peak in
// that message and its largest files, then a summary as JSON.
//
//   node scripts/bench/chunk-wasm.mjs <module.wasm> <files.txt>   (scripts/bench/chunk-wasm.sh
//                                                                   makes both)
import { readFileSync, statSync } from 'node:fs';

const [wasmPath, listPath] = process.argv.slice(2);
const maxFiles = Number(process.env.FILES_PER_MESSAGE ?? 50);
const maxBytes = 2 * 1024 * 1024;
const maxFileBytes = 1024 * 1024;
// Chunk and graph JSON a write group holds (the stage's `WRITE_GROUP_BYTES`; 0: the whole message
// at once, as the stage wrote it before).
const groupBytes = Number(process.env.GROUP_BYTES ?? 4 * 1024 * 1024);
const { exports: w } = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmPath)), {});
const mb = (b) => Number((b / 1e6).toFixed(1));
const enc = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: true });
function add(path, bytes) {
  const p = enc.encode(path);
  const len = p.length + bytes.length;
  const ptr = w.ewc_alloc(len);
  const view = new Uint8Array(w.memory.buffer, ptr, len);
  view.set(p);
  view.set(bytes, p.length);
  w.ewc_chunk_stage(0, ptr, len, p.length);
}

// Files as the CLI uploads them: text only, at most 1 MiB.
const files = [];
for (const path of readFileSync(listPath, 'utf8').split('\n').filter(Boolean)) {
  const size = statSync(path).size;
  if (size > maxFileBytes) continue;
  const bytes = readFileSync(path);
  if (bytes.includes(0)) continue;
  try {
    utf8.decode(bytes);
  } catch {
    continue;
  }
  files.push({ path, bytes });
}
const messages = [];
let cur = null;
for (const f of files) {
  if (cur && cur.files.length < maxFiles && cur.bytes + f.bytes.length <= maxBytes) {
    cur.files.push(f);
    cur.bytes += f.bytes.length;
  } else {
    cur = { files: [f], bytes: f.bytes.length };
    messages.push(cur);
  }
}
const start = w.memory.buffer.byteLength;
let last = start;
let peakLive = 0;
const grew = [];
messages.forEach((m, i) => {
  w.ewc_heap(2);
  for (const f of m.files) add(f.path, f.bytes);
  const chunks = w.ewc_chunk_stage(1, 0, 0, groupBytes);
  const held = w.ewc_chunk_stage(2, 0, 0, 0);
  const parts = [0, 1, 2, 3].map((i) => mb(w.ewc_chunk_stage(3 + i, 0, 0, 0)));
  const now = w.memory.buffer.byteLength;
  const peak = w.ewc_heap(1);
  peakLive = Math.max(peakLive, peak);
  if (now > last) {
    const largest = [...m.files].sort((a, b) => b.bytes.length - a.bytes.length).slice(0, 3).map((f) => `${f.path.split('/').slice(-3).join('/')} ${mb(f.bytes.length)} MB`);
    const row = { message: i, files: m.files.length, sourceMB: mb(m.bytes), chunks, heldJsonMB: mb(held), parts, memoryMB: mb(now), grewMB: mb(now - last), peakLiveMB: mb(peak), largest };
    grew.push(row);
    console.log(JSON.stringify(row));
    last = now;
  }
});
console.log(JSON.stringify({ files: files.length, messages: messages.length, startMB: mb(start), endMB: mb(last), grewMB: mb(last - start), peakLiveMB: mb(peakLive), liveAtEndMB: mb(w.ewc_heap(0)) }));
