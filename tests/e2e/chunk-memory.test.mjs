// The chunk stage's wasm memory in a new isolate: one message of 30 files of 1,000 constants each
// (1.8 MB of source, 30,000 code-graph nodes, about 45 MB of chunk, graph, node and edge rows to
// write). Written at once, the message took a new isolate's wasm memory to 67.2 MB, over the
// 64 MB budget; the stage now writes it in groups of `WRITE_GROUP_BYTES` of chunk and graph JSON
// (src/pipeline/chunk.rs), each group in one transaction (34.7 MB), and stores every file's
// chunks and graph.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { LIMITS, ledgerOverBudget, startEdgerag, startHashEmbedder } from './harness.mjs';

const FILES = 30;
const CONSTANTS = 1000;
let er;
let embed;

/** A Rust module of `CONSTANTS` documented constants: few chunks, a large code graph. */
function constants(f) {
  const out = [];
  for (let i = 0; i < CONSTANTS; i++) out.push(`/// Flag ${i} of table ${f}.\npub const FLAG_${f}_${i}: u32 = ${i};`);
  return `${out.join('\n')}\n`;
}

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

test('a message of files with large code graphs is chunked within the memory budget, every graph stored', async () => {
  const files = Array.from({ length: FILES }, (_, f) => ({ path: `src/flags/t${String(f).padStart(2, '0')}.rs`, content: constants(f) }));
  await er.request('DELETE', '/__test/ledger');
  try {
    const job = await er.indexFiles('acme/flags', files, { timeoutMs: 240_000 });
    const { stages } = await er.ledger();
    const chunk = stages.find((s) => s.stage === 'edgerag-chunk');
    const budget = LIMITS.limits.find((l) => l.figure === 'memoryBytes').budget;
    assert.ok(chunk, JSON.stringify(stages.map((s) => s.stage)));
    console.error(`chunk stage in a new isolate: ${chunk.max.memoryBytes} B of wasm memory (budget ${budget})`);
    assert.ok(chunk.max.memoryBytes <= budget, `the chunk stage's wasm memory: ${chunk.max.memoryBytes} B (budget ${budget})`);
    assert.deepEqual(ledgerOverBudget(stages), []);
    assert.deepEqual(job.warnings ?? [], [], JSON.stringify(job));
    // Nothing lost between the groups: every file's graph, nodes and chunks.
    const [graphs] = await er.d1("SELECT COUNT(*) AS n FROM graph_files WHERE namespace = 'repo:acme/flags'");
    assert.equal(graphs.n, FILES);
    const [nodes] = await er.d1("SELECT COUNT(DISTINCT path) AS files, COUNT(*) AS n FROM graph_nodes WHERE namespace = 'repo:acme/flags' AND upper(kind) = 'CONSTANT'");
    assert.deepEqual([nodes.files, nodes.n], [FILES, FILES * CONSTANTS]);
    const [chunked] = await er.d1("SELECT COUNT(DISTINCT path) AS n FROM chunks WHERE namespace = 'repo:acme/flags'");
    assert.equal(chunked.n, FILES);
  } finally {
    // An overflow is reported here, not again by the harness when the worker stops.
    await er.request('DELETE', '/__test/ledger');
  }
});
