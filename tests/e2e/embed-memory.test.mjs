// The embed stage's wasm memory in a new isolate: one message of 50 files of 120 small functions
// (6,000 chunks). Embedded at once, a message held every chunk's JSON, its text, its vector and
// the vectors' hex together (a message of 16,500 such chunks took a new isolate from 40 to
// 137 MB); the stage now embeds and writes `EMBED_GROUP_ROWS` chunks at a time
// (src/pipeline/embed.rs) and every chunk still gets its vector. The index stage wrote the same
// message's range at once (its staged chunks and vectors, parsed chunks, vector records and chunk
// rows together: 21.4 MB of wasm memory grown by that invocation alone, to 58.5 MB); it now
// writes it in groups of `INDEX_GROUP_BYTES` (src/pipeline/index.rs).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { LIMITS, ledgerOverBudget, startEdgerag, startHashEmbedder } from './harness.mjs';

const FILES = 50;
const FUNCTIONS = 120;
let er;
let embed;

/** A Python module of `FUNCTIONS` small functions: one chunk each. */
function module(f) {
  const out = [];
  for (let i = 0; i < FUNCTIONS; i++) out.push(`def handler_${f}_${i}(value):\n    return value + ${i} * ${f}\n`);
  return out.join('\n\n');
}

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

/** MB the wasm memory grew by while each invocation of `stage` ran its own work (the worker's
 * `invocation_memory_grew` lines), the largest. */
function grownBy(stage) {
  const lines = er.logs().split('\n').filter((l) => l.includes('"invocation_memory_grew"')).map((l) => JSON.parse(l.slice(l.indexOf('{'))));
  return Math.max(0, ...lines.filter((l) => l.stage === stage).map((l) => Number(l.grownByItself) / 1e6));
}

test('a message of many small chunks is embedded and indexed within the memory budget, every chunk with its vector', async () => {
  const files = Array.from({ length: FILES }, (_, f) => ({ path: `pkg/h${String(f).padStart(2, '0')}.py`, content: module(f) }));
  await er.request('DELETE', '/__test/ledger');
  try {
    const job = await er.indexFiles('acme/handlers', files, { timeoutMs: 300_000 });
    assert.deepEqual(job.warnings ?? [], [], JSON.stringify(job));
    const { stages } = await er.ledger();
    const embedStage = stages.find((s) => s.stage === 'edgerag-embed');
    const budget = LIMITS.limits.find((l) => l.figure === 'memoryBytes').budget;
    assert.ok(embedStage, JSON.stringify(stages.map((s) => s.stage)));
    console.error(`embed stage in a new isolate: ${embedStage.max.memoryBytes} B of wasm memory (budget ${budget})`);
    assert.ok(embedStage.max.memoryBytes <= budget, `the embed stage's wasm memory: ${embedStage.max.memoryBytes} B (budget ${budget})`);
    // The index stage's own growth: a few groups' worth, not the whole range's.
    const indexGrew = grownBy('edgerag-index');
    const indexStage = stages.find((s) => s.stage === 'edgerag-index');
    console.error(`index stage: ${indexStage?.max.memoryBytes} B of wasm memory, grown by its own work by ${indexGrew.toFixed(1)} MB`);
    assert.ok(indexGrew <= 10, `the index stage grew the wasm memory by ${indexGrew.toFixed(1)} MB`);
    assert.deepEqual(ledgerOverBudget(stages), []);
    // Nothing lost between the groups: every function a chunk, every chunk a vector.
    const [chunks] = await er.d1("SELECT COUNT(*) AS n FROM chunks WHERE namespace = 'repo:acme/handlers' AND symbol_name LIKE 'handler_%'");
    assert.equal(chunks.n, FILES * FUNCTIONS);
    const r = await er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'handlers', rawQuery: 'handler_49_119 value' } });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.matches.some((m) => m.path === 'pkg/h49.py'), JSON.stringify(r.body.matches.map((m) => m.path)));
  } finally {
    await er.request('DELETE', '/__test/ledger');
  }
});
