// The embed stage's wasm memory in a new isolate: one message of 50 files of 120 small functions
// (6,000 chunks). Embedded at once, a message held every chunk's JSON, its text, its vector and
// the vectors' hex together (a message of 16,500 such chunks took a new isolate from 40 to
// 137 MB); the stage now embeds and writes `EMBED_GROUP_ROWS` chunks at a time
// (src/pipeline/embed.rs) and every chunk still gets its vector.
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

test('a message of many small chunks is embedded within the memory budget, every chunk with its vector', async () => {
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
