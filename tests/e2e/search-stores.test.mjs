// The search store ports' shared behavioural suite (crates/search/src/testing.rs: keyword index,
// chunk store, namespace catalog — BM25 parity with the reference formula included) run in workerd
// against D1 (FTS5 + chunks + namespaces) through the test-only route POST /__test/search/suite.
// The same suite runs natively against the in-memory stores in `cargo test`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { startEdgerag } from './harness.mjs';

let er;

before(async () => {
  er = await startEdgerag();
});

after(async () => {
  await er?.stop();
});

async function runSuite(prefix) {
  const r = await er.request('POST', '/__test/search/suite', { body: { prefix } });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

test('the shared search store suite passes on D1', async () => {
  const report = await runSuite('e2e');
  assert.deepEqual(report.failed, [], JSON.stringify(report.failed, null, 2));
  assert.equal(report.passed.length, 12, `every case ran: ${report.passed}`);
  assert.ok(report.passed.includes('keyword_ranks_and_scores_like_the_reference_bm25'));
  assert.ok(report.passed.includes('keyword_filters_languages_paths_and_tags'));
  // It cleans up after itself.
  assert.deepEqual(await er.d1("SELECT COUNT(*) AS n FROM chunks"), [{ n: 0 }]);
  assert.deepEqual(await er.d1("SELECT COUNT(*) AS n FROM namespaces"), [{ n: 0 }]);
});

test('the suite passes again on the same database (idempotent, no leftovers)', async () => {
  const report = await runSuite('e2e');
  assert.deepEqual(report.failed, [], JSON.stringify(report.failed, null, 2));
  assert.equal(report.passed.length, 12);
});

test('the code-graph link statements seek the chunk\'s edges: their cost does not grow with the namespace', async () => {
  const r = await er.request('GET', '/__test/search/plans');
  assert.equal(r.status, 200, r.text);
  for (const [name, index] of [['uses', 'graph_edges_by_path'], ['usedBy', 'graph_edges_by_dst']]) {
    const plan = r.body[name];
    const edges = plan.filter((line) => line.includes('graph_edges'));
    assert.ok(edges.length > 0, `${name}: no graph_edges step in ${JSON.stringify(plan)}`);
    // Every read of the edges is a seek on the namespace and something narrower (a file, a
    // callee), never a walk over all of the namespace's edges.
    for (const line of edges) {
      assert.match(line, /^SEARCH \S+ USING (COVERING )?INDEX graph_edges_\w+ \(namespace=\? AND \w+=\?/, `${name}: ${line}`);
    }
    assert.ok(edges.some((line) => line.includes(index)), `${name} reads ${index}: ${JSON.stringify(plan)}`);
  }
});
