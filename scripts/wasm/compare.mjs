#!/usr/bin/env node
// Determinism check: chunks (and extracts the code graph of) every file through the wasm32 build
// of crates/wasm-check and compares the JSON byte for byte with the native build's output (one
// line per file, same order).
//
//   node compare.mjs <module.wasm> <native-output.jsonl> <file>...   compare
//   node compare.mjs --time <module.wasm> <file>...                  throughput (MB/s) as JSON
//   node compare.mjs --graph-ratio <module.wasm> <file>...           chunk + graph vs chunk alone
//
// Files are passed as raw bytes; both sides decode them with the same Rust code.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const timing = args[0] === "--time";
const graphRatio = args[0] === "--graph-ratio";
if (timing || graphRatio) args.shift();
const [wasmPath, ...rest] = args;
const nativeOut = timing || graphRatio ? null : rest.shift();
const files = rest.length ? rest : readFileSync(0, "utf8").split("\n").filter(Boolean);

const module = new WebAssembly.Module(readFileSync(wasmPath));
// No imports at all: anything the module asks for is a build error (see check-imports.mjs).
const { exports: w } = new WebAssembly.Instance(module, {});
const config = new TextEncoder().encode(process.env.EDGERAG_CHUNK_CONFIG ?? "");

function put(bytes) {
  const ptr = w.ewc_alloc(bytes.length);
  new Uint8Array(w.memory.buffer, ptr, bytes.length).set(bytes);
  return ptr;
}

function chunk(path, bytes, mode) {
  const p = new TextEncoder().encode(path);
  const r = w.ewc_chunk(put(p), p.length, put(bytes), bytes.length, put(config), config.length, mode);
  if (mode !== 0) return r;
  return Buffer.from(new Uint8Array(w.memory.buffer, w.ewc_output_ptr(), r)).toString("utf8");
}

const inputs = files.map((f) => [f, readFileSync(f)]);

if (timing) {
  const bytes = inputs.reduce((n, [, b]) => n + b.length, 0);
  const rounds = Number(process.env.ROUNDS ?? 3);
  let best = Infinity;
  let chunks = 0;
  for (let round = 0; round <= rounds; round++) {
    const start = process.hrtime.bigint();
    chunks = 0;
    for (const [f, b] of inputs) chunks += chunk(f, b, 1);
    const secs = Number(process.hrtime.bigint() - start) / 1e9;
    if (round > 0) best = Math.min(best, secs); // round 0 warms up V8's tiers
  }
  console.log(JSON.stringify({ files: inputs.length, bytes, chunks, seconds: best, mbPerSec: bytes / best / 1e6 }));
  process.exit(0);
}

if (graphRatio) {
  // Chunking alone (mode 1) and chunking with the graph (mode 2) over the same files, interleaved
  // round by round with the side that runs first alternating; the median of the per-round ratios.
  const bytes = inputs.reduce((n, [, b]) => n + b.length, 0);
  const rounds = Number(process.env.ROUNDS ?? 11);
  const pass = (mode) => {
    const start = process.hrtime.bigint();
    for (const [f, b] of inputs) chunk(f, b, mode);
    return Number(process.hrtime.bigint() - start) / 1e9;
  };
  pass(1);
  pass(2); // warm V8's tiers on both paths
  const ratios = [];
  let bestChunk = Infinity;
  let bestGraph = Infinity;
  for (let round = 0; round < rounds; round++) {
    let c;
    let g;
    if (round % 2 === 0) {
      c = pass(1);
      g = pass(2);
    } else {
      g = pass(2);
      c = pass(1);
    }
    bestChunk = Math.min(bestChunk, c);
    bestGraph = Math.min(bestGraph, g);
    ratios.push(g / c);
  }
  ratios.sort((a, b) => a - b);
  console.log(JSON.stringify({
    files: inputs.length,
    bytes,
    rounds,
    chunkMbPerSec: bytes / bestChunk / 1e6,
    graphMbPerSec: bytes / bestGraph / 1e6,
    ratio: ratios[Math.floor(ratios.length / 2)],
    min: ratios[0],
    max: ratios[ratios.length - 1],
  }));
  process.exit(0);
}

const expected = readFileSync(nativeOut, "utf8").split("\n");
let failures = 0;
inputs.forEach(([f, b], i) => {
  const got = chunk(f, b, 0);
  if (got !== expected[i]) {
    failures++;
    let at = 0;
    while (at < got.length && got[at] === expected[i][at]) at++;
    console.error(`DIFFERENT: ${f} (first difference at char ${at})`);
    console.error(`  native: ${expected[i].slice(Math.max(0, at - 80), at + 80)}`);
    console.error(`  wasm:   ${got.slice(Math.max(0, at - 80), at + 80)}`);
  }
});
if (expected.length - 1 !== inputs.length) {
  console.error(`native output has ${expected.length - 1} lines for ${inputs.length} files`);
  failures++;
}
console.log(`${inputs.length - failures}/${inputs.length} files chunk identically in wasm32 and native`);
process.exit(failures ? 1 : 0);
