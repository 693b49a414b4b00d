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
  assert.equal(report.passed.length, 13, `every case ran: ${report.passed}`);
  assert.ok(report.passed.includes('keyword_ranks_and_scores_like_the_reference_bm25'));
  assert.ok(report.passed.includes('keyword_filters_languages_paths_and_tags'));
  // It cleans up after itself.
  assert.deepEqual(await er.d1("SELECT COUNT(*) AS n FROM chunks"), [{ n: 0 }]);
  assert.deepEqual(await er.d1("SELECT COUNT(*) AS n FROM namespaces"), [{ n: 0 }]);
});

test('the suite passes again on the same database (idempotent, no leftovers)', async () => {
  const report = await runSuite('e2e');
  assert.deepEqual(report.failed, [], JSON.stringify(report.failed, null, 2));
  assert.equal(report.passed.length, 13);
});

test('the code-graph statements seek what they are asked about: their cost does not grow with the namespace', async () => {
  const r = await er.request('GET', '/__test/search/plans');
  assert.equal(r.status, 200, r.text);
  const expected = {
    uses: ['graph_edges_by_path'],
    usedBy: ['graph_edges_by_dst'],
    symbolsByName: ['graph_nodes_by_name', 'graph_nodes_by_fqn'],
  };
  assert.deepEqual(Object.keys(r.body).sort(), Object.keys(expected).sort());
  for (const [name, indexes] of Object.entries(expected)) {
    const plan = r.body[name];
    const reads = plan.filter((line) => /graph_(edges|nodes)/.test(line) || /^(SCAN|SEARCH) graph_/.test(line));
    assert.ok(reads.length > 0, `${name}: no graph table read in ${JSON.stringify(plan)}`);
    // Every read of a graph table is a seek on the namespace and something narrower (a file, a
    // callee, a node id, a name) or on a rowid, never a walk over all of the namespace's rows.
    for (const line of reads) {
      assert.match(
        line,
        /^SEARCH \S+ USING (?:(?:COVERING )?INDEX \w+ \(namespace=\? AND \w+[=<>]\?|INTEGER PRIMARY KEY \(rowid=\?\))/,
        `${name}: ${line}`,
      );
    }
    for (const index of indexes) assert.ok(reads.some((line) => line.includes(index)), `${name} reads ${index}: ${JSON.stringify(plan)}`);
  }
});
