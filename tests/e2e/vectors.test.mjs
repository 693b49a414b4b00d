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

async function runSuite(prefix, options = {}) {
  const r = await er.request('POST', '/__test/vectors/suite', { body: { prefix, ...options } });
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
    'many_queries_in_one_call_answer_as_each_alone',
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

// The default run above answers from the isolate's in-memory copy (rebuilt after every write);
// these run the same cases on the plain D1 scan, on a budget too small to cache anything, and on
// pages of 3 rows (several pages per scan, in both paths).
for (const [name, options] of [
  ['scan only (cache off)', { cacheBytes: 0 }],
  ['budget too small to cache', { cacheBytes: 1 }],
  ['pages of 3 rows, cached', { pageRows: 3 }],
  ['pages of 3 rows, scan only', { pageRows: 3, cacheBytes: 0 }],
]) {
  test(`the shared suite passes on the local index: ${name}`, async () => {
    const report = await runSuite('e2e-suite', options);
    assert.deepEqual(report.failed, [], JSON.stringify(report.failed, null, 2));
    assert.ok(report.passed.length >= 15, JSON.stringify(report.passed));
  });
}

test('the in-memory copy answers exactly like the scan and follows every write', async () => {
  const ns = 'e2e-cache';
  const load = async (count, start, seed) => {
    const r = await er.request('POST', '/__test/vectors/load', { body: { namespace: ns, count, dims: 32, start, seed } });
    assert.equal(r.status, 200, r.text);
  };
  const query = async (body) => {
    const r = await er.request('POST', '/__test/vectors/query', { body: { namespace: ns, dims: 32, topK: 10, seed: 5, ...body } });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };
  await load(600, 0, 3);
  for (const filter of [{}, { languages: ['rust', 'go'] }, { pathPrefix: 'dir1' }, { tag: 'ten' }]) {
    const scan = await query({ queries: 3, filter, cacheBytes: 0 });
    const cached = await query({ queries: 3, filter });
    assert.deepEqual(scan.cache, ['scan', 'scan', 'scan']);
    assert.ok(['built', 'hit'].includes(cached.cache[0]), JSON.stringify(cached.cache));
    assert.deepEqual(cached.cache.slice(1), ['hit', 'hit']);
    assert.deepEqual(cached.lastMatches, scan.lastMatches, `filter ${JSON.stringify(filter)}`);
    assert.equal(cached.lastMatches.length, 10);
  }
  // Every write is seen by the next query, which reads only the rows that changed (the triggers
  // log them) and brings the copy up to date: new vectors through the index,
  const sameAsScan = async (what, path) => {
    for (const filter of [{}, { languages: ['go'] }, { tag: 'ten' }]) {
      const after = await query({ queries: 1, filter });
      assert.deepEqual(after.cache, [Object.keys(filter).length === 0 ? path : 'hit'], what);
      assert.deepEqual(after.lastMatches, (await query({ queries: 1, filter, cacheBytes: 0 })).lastMatches, `${what}, filter ${JSON.stringify(filter)}`);
    }
  };
  await load(50, 600, 9);
  await sameAsScan('after new vectors', 'refreshed');
  // replaced ones (the same ids, new values),
  await load(40, 0, 11);
  await sameAsScan('after replaced vectors', 'refreshed');
  // rows deleted, updated and inserted by plain SQL (the triggers see every writer), where the
  // vectors that were best for the query are the ones gone,
  const best = (await query({ queries: 1, cacheBytes: 0 })).lastMatches.slice(0, 3).map((m) => m.id);
  const sql = async (statement, ...params) => {
    const r = await er.request('POST', '/__test/vectors/sql', { body: { namespace: ns, sql: statement, params: [ns, ...params] } });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.changes >= 1, `${statement}: ${r.text}`);
  };
  await sql(`DELETE FROM local_vectors WHERE namespace = ?1 AND id IN (${best.map((_, i) => `?${i + 2}`).join(',')})`, ...best);
  await sql("UPDATE local_vectors SET language = 'go' WHERE namespace = ?1 AND id = 'vec-00000100'");
  await sql("INSERT INTO local_vectors (namespace, id, dims, vector, metadata, path, language, tags) SELECT namespace, 'copied', dims, vector, metadata, path, language, tags FROM local_vectors WHERE namespace = ?1 AND id = 'vec-00000101'");
  await sameAsScan('after plain SQL writes', 'refreshed');
  const now = await query({ queries: 1 });
  for (const id of best) assert.ok(!now.lastMatches.some((m) => m.id === id), `${id} was deleted`);
  // and more changed rows than a refresh reads: the copy is rebuilt.
  await load(2100, 700, 13);
  await sameAsScan('after many new vectors', 'built');
  // The index's writes forget the log past 4,000 generations (a copy older than that rebuilds).
  await load(2000, 2800, 15);
  const [gen] = await er.d1('SELECT generation, logged_from FROM local_vector_generations WHERE namespace = ?', ns);
  assert.ok(gen.generation > 4000, JSON.stringify(gen));
  assert.equal(gen.logged_from, gen.generation - 4000);
  const [{ n: logged, oldest }] = await er.d1('SELECT count(*) AS n, min(generation) AS oldest FROM local_vector_changes WHERE namespace = ?', ns);
  assert.equal(logged, 4000);
  assert.equal(oldest, gen.logged_from + 1);
  await sameAsScan('after 2,000 more (the most a refresh reads)', 'refreshed');
  // A write that bypasses the index (plain SQL) of the whole namespace: rebuilt as well.
  const cleared = await er.request('POST', '/__test/vectors/clear', { body: { namespace: ns } });
  assert.equal(cleared.status, 200, cleared.text);
  const [{ n: left }] = await er.d1('SELECT COUNT(*) AS n FROM local_vectors WHERE namespace = ?', ns);
  assert.equal(left, 0);
  const empty = await query({ queries: 2 });
  assert.deepEqual(empty.cache, ['built', 'hit']);
  assert.deepEqual(empty.lastMatches, []);
});

test("the in-memory copy is built from each row's stored 8-bit copy; rows without one are encoded and written back", async () => {
  const ns = 'e2e-stored';
  const plain = 'e2e-stored-plain';
  const r = await er.request('POST', '/__test/vectors/load', { body: { namespace: ns, count: 400, dims: 32, seed: 21 } });
  assert.equal(r.status, 200, r.text);
  const sql = async (statement, ...params) => {
    const w = await er.request('POST', '/__test/vectors/sql', { body: { namespace: ns, sql: statement, params: [ns, ...params] } });
    assert.equal(w.status, 200, w.text);
    return w.body.changes;
  };
  const stored = async (namespace) =>
    Object.fromEntries(
      (await er.d1(
        'SELECT v.id AS id, c.quantized_v1 AS q FROM local_vectors v LEFT JOIN local_vector_copies c ON c.row = v.rowid WHERE v.namespace = ? ORDER BY v.id',
        namespace,
      )).map((x) => [x.id, x.q]),
    );
  const missing = async (namespace) => Object.values(await stored(namespace)).filter((q) => q === null).length;
  // Every vector the index writes gets its copy: base64 of a 24-byte header and 32 codes (56 bytes).
  const written = await stored(ns);
  assert.equal(Object.keys(written).length, 400);
  for (const q of Object.values(written)) assert.match(q ?? '', /^[A-Za-z0-9+/]{75}=$/);
  // Replaced vectors get their new copy (and an unchanged one keeps its own).
  const again = await er.request('POST', '/__test/vectors/load', { body: { namespace: ns, count: 400, dims: 32, seed: 22 } });
  assert.equal(again.status, 200, again.text);
  const replaced = await stored(ns);
  assert.equal(await missing(ns), 0);
  assert.ok(Object.keys(written).every((id) => replaced[id] !== written[id]), 'new values, new copies');
  // The same rows written by plain SQL into another namespace, every other one with its copy.
  await sql(
    `INSERT INTO local_vectors (namespace, id, dims, vector, metadata, path, language, tags)
     SELECT '${plain}', id, dims, vector, metadata, path, language, tags FROM local_vectors WHERE namespace = ?1`,
  );
  await sql(
    `INSERT INTO local_vector_copies (row, quantized_v1)
     SELECT p.rowid, c.quantized_v1 FROM local_vectors p
     JOIN local_vectors o ON o.namespace = ?1 AND o.id = p.id JOIN local_vector_copies c ON c.row = o.rowid
     WHERE p.namespace = '${plain}' AND p.rowid % 2 = 0`,
  );
  assert.equal(Object.keys(await stored(plain)).length, 400);
  assert.ok((await missing(plain)) >= 150, 'about half the copied rows have no stored copy');
  const generation = async (namespace) =>
    (await er.d1('SELECT generation FROM local_vector_generations WHERE namespace = ?', namespace))[0].generation;
  const before = await generation(plain);
  const query = async (namespace, body) => {
    const q = await er.request('POST', '/__test/vectors/query', { body: { namespace, dims: 32, topK: 10, seed: 8, ...body } });
    assert.equal(q.status, 200, q.text);
    return q.body;
  };
  for (const filter of [{}, { languages: ['go'] }, { tag: 'ten' }]) {
    const cached = await query(plain, { queries: 2, filter });
    assert.deepEqual(cached.cache, Object.keys(filter).length === 0 ? ['built', 'hit'] : ['hit', 'hit']);
    assert.deepEqual(cached.lastMatches, (await query(plain, { queries: 2, filter, cacheBytes: 0 })).lastMatches, JSON.stringify(filter));
    assert.equal(cached.lastMatches.length, 10);
  }
  // The build stored what it encoded — exactly what the index writes for the same vector — and
  // moved no generation (the copy in memory is still current).
  assert.equal(await missing(plain), 0);
  assert.deepEqual(await stored(plain), replaced);
  assert.equal(await generation(plain), before);
  // A vector rewritten by SQL that does not write its copy loses the copy (never a stale one) and
  // is read from its f32 value; rewriting the same vector keeps it.
  await sql(
    "UPDATE local_vectors SET vector = (SELECT vector FROM local_vectors WHERE namespace = ?1 AND id = 'vec-00000002') WHERE namespace = ?1 AND id = 'vec-00000001'",
  );
  assert.equal((await stored(ns))['vec-00000001'], null);
  assert.equal(await missing(ns), 1);
  await sql("UPDATE local_vectors SET vector = vector WHERE namespace = ?1 AND id = 'vec-00000003'");
  assert.equal(await missing(ns), 1);
  const first = await query(ns, { queries: 1 });
  assert.equal(first.cache[0], 'built');
  assert.deepEqual(first.lastMatches, (await query(ns, { queries: 1, cacheBytes: 0 })).lastMatches);
  assert.equal(await missing(ns), 0, 'the build wrote the copy of the rewritten vector');
  assert.equal((await stored(ns))['vec-00000001'], (await stored(ns))['vec-00000002'], 'the same vector, the same copy');
  // Deleting vectors deletes their copies.
  const [{ n: copiesBefore }] = await er.d1('SELECT count(*) AS n FROM local_vector_copies');
  await sql("DELETE FROM local_vectors WHERE namespace = ?1");
  const [{ n: copiesAfter }] = await er.d1('SELECT count(*) AS n FROM local_vector_copies');
  assert.equal(copiesBefore - copiesAfter, 400);
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
