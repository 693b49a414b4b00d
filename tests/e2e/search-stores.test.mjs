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

async function runSuite(prefix, copies = false) {
  const r = await er.request('POST', '/__test/search/suite', { body: { prefix, copies } });
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

test('in-memory BM25 copies answer the suite with exactly FTS5\'s ids and scores', async () => {
  // Every keyword query of the suite is answered from the namespaces' copies (rebuilt by the first
  // query after each change) and, beside it, by FTS5: the two answers must be equal, bit for bit.
  const report = await runSuite('copies', true);
  assert.deepEqual(report.failed, [], JSON.stringify(report.failed, null, 2));
  assert.equal(report.passed.length, 13);
  assert.deepEqual(report.copies.mismatches, []);
  assert.ok(report.copies.answered >= 10, `the copies answered ${report.copies.answered} queries`);
  assert.deepEqual(await er.d1("SELECT COUNT(*) AS n FROM chunks"), [{ n: 0 }]);
});

test('the in-memory index tokenizes every character up to U+3FFFF as FTS5 in D1 does', async () => {
  // The table the tokenizer reads was measured against node:sqlite's SQLite; this checks it against
  // the SQLite of workerd's D1, which the copies must agree with.
  let checked = 0;
  let uncertain = 0;
  for (let from = 1; from <= 0x3ffff; from += 40_000) {
    const to = Math.min(0x3ffff, from + 39_999);
    const r = await er.request('POST', '/__test/search/tokenizer', { body: { from, to } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.differ, 0, `U+${from.toString(16)}–U+${to.toString(16)}: ${r.body.examples.join('\n')}`);
    checked += r.body.checked;
    uncertain += r.body.uncertain;
  }
  assert.ok(checked > 0x3ffff - 0x800 - 1, `checked ${checked}`);
  assert.equal(uncertain, 0);
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
