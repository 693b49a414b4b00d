// Per-node chunk plan benchmark (driven by scripts/bench/plans.sh): index a source tree, then time
// a dry run (plans counted, nothing written) and a real run (plans rendered, embedded with the hash
// test embedder, written to D1 + FTS + the local vector index) over its code graph.
//
//   node scripts/bench/plans.mjs [--tree DIR] [--batch-size N]
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { ROOT, sleep, startEdgerag, startHashEmbedder } from '../../tests/e2e/harness.mjs';
import { walk } from './tree.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const tree = opt('--tree', ROOT);
const batchSize = Number(opt('--batch-size', '200'));
const SKIP = new Set(['.git', 'node_modules', 'target', '.edgerag', 'public', 'dist', 'build']);
const CODE = /\.(rs|ts|tsx|js|mjs|py|go|java)$/;


const files = walk(tree, { skip: SKIP, keep: (name, st) => CODE.test(name) && st.size < 1_000_000 }).map((p) => ({ path: relative(tree, p), content: readFileSync(p, 'utf8') }));
console.log(`tree: ${tree}: ${files.length} source files`);
const embed = await startHashEmbedder();
const er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
const repo = 'bench/plans';
try {
  let jobId;
  for (let i = 0; i < files.length; i += 200) {
    const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files: files.slice(i, i + 200) } });
    if (r.status !== 202) throw new Error(`upload → ${r.status} ${r.text.slice(0, 300)}`);
    jobId = r.body.job.id;
  }
  const job = await er.waitForJob(jobId, { timeoutMs: 3600_000 });
  if (job.status !== 'SUCCEEDED') throw new Error(`index job ${job.status}: ${JSON.stringify(job.lastError)}`);
  const [{ n: nodes }] = await er.d1("SELECT COUNT(*) AS n FROM graph_nodes WHERE namespace = 'repo:bench/plans'");
  console.log(`indexed: ${nodes} graph nodes`);

  async function timed(body) {
    const t0 = Date.now();
    const r = await er.request('POST', `/v1/repos/${repo}/plans`, { body });
    if (r.status !== 202) throw new Error(`plans → ${r.status} ${r.text}`);
    for (;;) {
      const g = await er.request('GET', `/v1/repos/${repo}/plans/${r.body.run.id}`);
      if (g.body.run.status === 'READY' || g.body.run.status === 'FAILED') {
        return { run: g.body.run, wallMs: Date.now() - t0 };
      }
      await sleep(100);
    }
  }
  // Where a real page's time goes: the worker logs each page's steps (`plan_page`).
  function breakdown(runId) {
    const sums = {};
    let pages = 0;
    for (const line of er.logs().split('\n')) {
      const at = line.indexOf('{"');
      if (at < 0 || !line.includes('"plan_page"') || !line.includes(runId)) continue;
      let rec;
      try { rec = JSON.parse(line.slice(at)); } catch { continue; }
      pages++;
      for (const [k, v] of Object.entries(rec)) if (k.endsWith('Ms')) sums[k] = (sums[k] ?? 0) + Number(v);
    }
    return pages ? Object.entries(sums).map(([k, v]) => `${k.slice(0, -2)} ${(v / pages).toFixed(0)} ms`).join(', ') + ` per page (${pages} logged)` : 'no page logs';
  }
  for (const [label, body] of [
    ['dry run', { strategy: 'per-node', dryRun: true, batchSize }],
    ['real run (hash embedder)', { strategy: 'per-node', batchSize }],
  ]) {
    const { run, wallMs } = await timed(body);
    if (run.status !== 'READY') throw new Error(`${label}: ${JSON.stringify(run.lastError)}`);
    console.log(
      `${label}: ${run.processedNodes} nodes, ${run.pages} pages of ${batchSize}, written ${run.writtenChunks}, ` +
        `skipped ${run.skippedChunks}; run record ${run.durationMs} ms = ${run.rate} nodes/s; ` +
        `request→READY ${wallMs} ms = ${((run.processedNodes * 1000) / wallMs).toFixed(1)} nodes/s`,
    );
    console.log(`  ${breakdown(run.id)}`);
  }
} finally {
  await er.stop();
  await embed.stop();
}
