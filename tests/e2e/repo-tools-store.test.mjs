// The repository tools' shared behaviour suite (crates/search/src/repo_tools/testing.rs: find a
// symbol, follow its references, read a line range, list files, outline, grep, map — personalized
// PageRank included —, impact) run in workerd over D1
// (files, chunks and their trigram index, the code graph, the ranks) through the test-only route
// POST /__test/repo-tools/suite. The same suite runs natively over the in-memory store in
// `cargo test`.
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
  const r = await er.request('POST', '/__test/repo-tools/suite', { body: { prefix } });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

test('the shared repository tools suite passes on D1', async () => {
  const report = await runSuite('e2e');
  assert.deepEqual(report.failed, [], JSON.stringify(report.failed, null, 2));
  assert.equal(report.passed.length, 8, `every case ran: ${report.passed}`);
  assert.ok(report.passed.includes('symbol_references_both_ways_to_depth_two_paged'));
  assert.ok(report.passed.includes('read_file_range_rebuilds_lines_from_overlapping_chunks'));
  assert.ok(report.passed.includes('grep_literal_regex_case_context_paths_limit_and_cursor'));
  assert.ok(report.passed.includes('map_ranks_fits_its_budget_is_deterministic_and_personalizes'));
  // It cleans up after itself.
  for (const table of ['files', 'chunks', 'graph_nodes', 'graph_edges', 'graph_files']) {
    assert.deepEqual(await er.d1(`SELECT COUNT(*) AS n FROM ${table}`), [{ n: 0 }], table);
  }
});

test('the suite passes again on the same database (no leftovers)', async () => {
  const report = await runSuite('e2e');
  assert.deepEqual(report.failed, [], JSON.stringify(report.failed, null, 2));
  assert.equal(report.passed.length, 8);
});
