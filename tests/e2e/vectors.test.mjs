// The shared VectorIndex behavioural suite (crates/core/src/vector/testing.rs) run in workerd
// against the exact local index in D1 (`local_vectors`), through the test-only route
// POST /__test/vectors/suite (EDGERAG_TEST_ROUTES=1). The same suite runs natively against the
// in-memory index in `cargo test`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { startEdgerag, startHashEmbedder } from './harness.mjs';

let embed;
let er;

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

async function runSuite(prefix) {
  const r = await er.request('POST', '/__test/vectors/suite', { body: { prefix } });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

test('the shared VectorIndex suite passes on the local D1 index', async () => {
  const report = await runSuite('e2e-suite');
  assert.equal(report.implementation, 'local-d1');
  assert.deepEqual(report.failed, [], JSON.stringify(report.failed, null, 2));
  for (const name of [
    'empty_index', 'upsert_replaces_by_id', 'delete_removes_only_given_ids', 'namespaces_are_isolated',
    'ranks_by_cosine', 'ties_in_stable_order', 'top_k_limits', 'filter_by_language', 'filter_by_path_prefix',
    'filter_by_tag', 'filters_combine_and_apply_before_top_k', 'dimension_mismatch_rejected',
    'invalid_records_rejected_whole_batch', 'large_batch_and_exact_ranking',
  ]) {
    assert.ok(report.passed.includes(name), `case ${name} did not run: ${JSON.stringify(report.passed)}`);
  }
  // The suite cleans up after itself: nothing of it is left in D1.
  const [{ n }] = await er.d1("SELECT COUNT(*) AS n FROM local_vectors WHERE namespace LIKE 'e2e-suite:%'");
  assert.equal(n, 0);
});

test('the suite passes again on the same database (idempotent, no leftovers)', async () => {
  const report = await runSuite('e2e-suite');
  assert.deepEqual(report.failed, [], JSON.stringify(report.failed, null, 2));
});

test('vectors are stored as little-endian f32 blobs of the index dimension', async () => {
  const r = await er.request('POST', '/__test/vectors/load', { body: { namespace: 'e2e-blob', count: 3, dims: 8, seed: 7 } });
  assert.equal(r.status, 200, r.text);
  const rows = await er.d1("SELECT id, dims, vector, tags FROM local_vectors WHERE namespace = 'e2e-blob' ORDER BY id");
  assert.equal(rows.length, 3);
  for (const row of rows) {
    assert.equal(row.dims, 8);
    const bytes = Buffer.from(row.vector);
    assert.equal(bytes.length, 8 * 4);
    const v = Array.from({ length: 8 }, (_, i) => bytes.readFloatLE(i * 4));
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-5, `stored vector is not the unit vector loaded (norm ${norm})`);
  }
  assert.equal(rows[0].tags, ',ten,', 'tags stored as ,tag, for exact matching');
  const q = await er.request('POST', '/__test/vectors/query', { body: { namespace: 'e2e-blob', dims: 8, queries: 1, topK: 3 } });
  assert.equal(q.status, 200, q.text);
  assert.equal(q.body.lastMatches.length, 3);
  const wrong = await er.request('POST', '/__test/vectors/query', { body: { namespace: 'e2e-blob', dims: 8, queries: 1, topK: 101 } });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.error.code, 'VECTOR_INVALID');
});
