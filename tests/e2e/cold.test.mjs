// A new isolate reads a namespace's in-memory vector and keyword copies ready-made and answers
// exactly what a warm one does. The job's end stores the copy as a snapshot (`local_vector_snapshots`, versioned
// by the namespace's vector generation); the first search of a restarted worker loads it instead
// of building the copy from every row. Through the test routes: a snapshot of an older generation
// is brought up to date from the logged changes, an unreadable one is ignored and rewritten by the
// build, a job's end is idempotent, deleting every vector deletes the snapshot, and a snapshot
// written a part at a time within a statement budget (as a job's end spreads it over queue
// messages) is the one written at once. The keyword copy
// the same way (`keyword_snapshots`, versioned by the namespace's keyword generation): written by
// the job's end before the first search, read by every isolate, refused when unreadable or of
// another generation (then built from the rows and rewritten), deleted with the namespace's last
// chunk.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { ROOT, readTree, sleep, startEdgerag, startHashEmbedder } from './harness.mjs';

const FIXTURES = join(ROOT, 'tests', 'e2e', 'fixtures');
const SHOP = 'repo:acme/shop';
// Keyword copies are built as soon as a search finds one missing (not only 2 s after the last write).
const VARS = () => ({ OPENAI_BASE_URL: embed.url, KEYWORD_INDEX_QUIET_MS: '0' });
const QUERIES = ['refresh the access token', 'retry with backoff', 'hash the session key', 'invoice total', 'cache'];

let embed;
let er;
const cleanup = [];

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: VARS() });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

const generation = async (ns) =>
  (await er.d1('SELECT generation FROM local_vector_generations WHERE namespace = ?', ns))[0]?.generation;
const snapshot = async (ns) =>
  er.d1('SELECT part, parts, generation, length(data) AS chars FROM local_vector_snapshots WHERE namespace = ? ORDER BY part', ns);

const keywordGeneration = async (ns) =>
  (await er.d1('SELECT generation FROM keyword_generations WHERE namespace = ?', ns))[0]?.generation ?? 0;
const keywordSnapshot = async (ns) =>
  er.d1('SELECT part, parts, generation, length(data) AS chars FROM keyword_snapshots WHERE namespace = ? ORDER BY part', ns);

async function keywordState(namespace, body = {}) {
  const r = await er.request('POST', '/__test/search/keyword-copies/state', { body: { namespace, ...body } });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function waitFor(check, what = 'condition') {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await sleep(50);
  }
  assert.fail(`timed out waiting for ${what}`);
}

const waitForLog = (pattern) => waitFor(async () => pattern.test(er.logs()), String(pattern));

async function search(rawQuery, filters) {
  const r = await er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'shop', rawQuery, filters, profile: 'balanced' } });
  assert.equal(r.status, 200, r.text);
  return r.body.matches;
}

async function answers() {
  const out = [];
  for (const q of QUERIES) out.push(await search(q));
  out.push(await search('retry with backoff', { languages: ['python'] }));
  return out;
}

test('a restarted worker loads the snapshot the job stored and answers exactly as a warm one', async () => {
  await er.indexFiles('acme/shop', readTree(join(FIXTURES, 'search-repo')));
  // The job's end wrote the snapshot at the namespace's current generation (just after READY).
  let stored = [];
  for (let i = 0; i < 100; i++) {
    stored = await snapshot(SHOP);
    if (stored.length && stored[0].generation === (await generation(SHOP))) break;
    await sleep(100);
  }
  assert.equal(stored.length, 1, JSON.stringify(stored));
  assert.equal(stored[0].parts, 1);
  assert.equal(stored[0].generation, await generation(SHOP));
  // The row is committed before the worker's log line reaches its output: wait for the line.
  await waitForLog(/"event":"vector_snapshot_prepared"[^\n]*"state":"Written"/);

  // So did the keyword copy's, before any search: the first search after the job reads it.
  await waitForLog(/"event":"keyword_snapshot_prepared"[^\n]*"state":"Written"/);
  const keywordStored = await keywordSnapshot(SHOP);
  assert.ok(keywordStored.length >= 1, JSON.stringify(keywordStored));
  assert.equal(keywordStored[0].generation, await keywordGeneration(SHOP));
  await answers(); // the first round reads this isolate's keyword copy ready-made
  await waitForLog(/"event":"keyword_copy_loaded"[^\n]*repo:acme\/shop/);
  assert.doesNotMatch(er.logs(), /"event":"keyword_copy_built"/, 'the job stored it: no search built it');
  const warm = await answers();
  assert.ok(warm.every((m) => m.length > 0), 'every query finds something');
  assert.deepEqual(await answers(), warm, 'warm answers are stable');

  // A new isolate on the same state.
  const dir = er.persistDir;
  const keep = process.env.EDGERAG_E2E_KEEP;
  process.env.EDGERAG_E2E_KEEP = '1';
  await er.stop();
  if (keep === undefined) delete process.env.EDGERAG_E2E_KEEP;
  else process.env.EDGERAG_E2E_KEEP = keep;
  cleanup.push(dir);
  er = await startEdgerag({ persistDir: dir, vars: VARS() });
  const cold = await answers();
  assert.deepEqual(cold, warm, 'a cold isolate answers exactly what a warm one does');
  // Its keyword copy was read from the snapshot after the first response, not built.
  await waitForLog(/"event":"keyword_copy_loaded"[^\n]*repo:acme\/shop/);
  assert.deepEqual(await keywordState(SHOP), { held: true, building: false });
  assert.deepEqual(await answers(), warm, 'answered from the keyword copy read back: the same');
  const logs = er.logs();
  assert.match(logs, /"event":"vector_snapshot_loaded"[^\n]*repo:acme\/shop/);
  assert.doesNotMatch(logs, /"event":"vector_snapshot_written"/, 'the copy was read, not built');
  assert.doesNotMatch(logs, /"event":"keyword_copy_built"/, 'the keyword copy was read, not built');
});

test('keyword snapshots: unreadable or of another generation are rebuilt, deleted with the chunks', async () => {
  // (After the first test: the shop repository is indexed and its keyword snapshot current.)
  const warm = await answers();
  const write = (sql) => vectors('sql', { namespace: SHOP, sql, params: [SHOP] });
  const built = () => er.logs().split('\n').filter((l) => l.includes('"keyword_copy_built"') && l.includes(SHOP)).length;
  const loaded = () => er.logs().split('\n').filter((l) => l.includes('"keyword_copy_loaded"') && l.includes(SHOP)).length;
  // A new isolate's keyword copies: forgotten, then the next search reads or builds them.
  const coldRound = async () => {
    await keywordState(SHOP, { forget: true });
    assert.deepEqual(await keywordState(SHOP), { held: false, building: false });
    const first = await answers(); // FTS5 answers; the copy comes after the response
    for (let i = 0; i < 200 && !(await keywordState(SHOP)).held; i++) await sleep(50);
    assert.deepEqual(await keywordState(SHOP), { held: true, building: false });
    assert.deepEqual(first, warm, 'answered by FTS5: the same');
    assert.deepEqual(await answers(), warm, 'answered by the copy: the same');
  };
  const [b0, l0] = [built(), loaded()];
  await coldRound();
  assert.deepEqual([built(), loaded()], [b0, l0 + 1], 'read from the snapshot');

  // Unreadable: logged, built from the rows, and the snapshot rewritten.
  await write("UPDATE keyword_snapshots SET data = 'not base64!' WHERE namespace = ?1");
  await coldRound();
  assert.deepEqual([built(), loaded()], [b0 + 1, l0 + 1]);
  assert.match(er.logs(), /"event":"keyword_snapshot_unreadable"/);
  await waitFor(async () => (await keywordSnapshot(SHOP))[0]?.chars > 'not base64!'.length);
  await coldRound();
  assert.deepEqual([built(), loaded()], [b0 + 1, l0 + 2], 'the rewritten snapshot is read');

  // Bytes that decode but are not a copy: refused the same way.
  await write("UPDATE keyword_snapshots SET data = 'RUJNMQAAAAA=' WHERE namespace = ?1 AND part = 0");
  await coldRound();
  assert.deepEqual([built(), loaded()], [b0 + 2, l0 + 2]);

  // Of another generation (the namespace changed since): not used; the build stores the current one.
  await waitFor(async () => (await keywordSnapshot(SHOP))[0]?.generation === (await keywordGeneration(SHOP)));
  await write('UPDATE keyword_snapshots SET generation = generation - 1 WHERE namespace = ?1');
  await coldRound();
  assert.deepEqual([built(), loaded()], [b0 + 3, l0 + 2]);
  await waitFor(async () => (await keywordSnapshot(SHOP))[0]?.generation === (await keywordGeneration(SHOP)));

  // The namespace's last chunk deleted: its keyword snapshot goes too.
  const r = await er.request('DELETE', '/v1/repos/acme/shop');
  assert.ok(r.status < 300, r.text);
  await waitFor(async () => (await er.d1('SELECT count(*) AS n FROM chunks WHERE namespace = ?', SHOP))[0].n === 0);
  assert.deepEqual(await keywordSnapshot(SHOP), []);
});

async function vectors(path, body) {
  const r = await er.request('POST', `/__test/vectors/${path}`, { body });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

test('older, unreadable and deleted snapshots', async () => {
  const ns = 'e2e-snapshot';
  const dims = 32;
  await vectors('load', { namespace: ns, count: 300, dims, seed: 5 });
  const query = (body = {}) => vectors('query', { namespace: ns, dims, topK: 10, seed: 3, queries: 2, ...body });
  const scan = async (body = {}) => (await query({ ...body, cacheBytes: 0 })).lastMatches;
  const sql = (statement) => vectors('sql', { namespace: ns, sql: statement, params: [ns] });

  // A job's end writes the snapshot; a second one finds it current (idempotent).
  assert.deepEqual(await vectors('prepare', { namespace: ns, dims }), { state: 'written' });
  assert.deepEqual(await vectors('prepare', { namespace: ns, dims }), { state: 'current' });
  const first = await snapshot(ns);
  assert.equal(first.length, 1);
  assert.equal(first[0].generation, await generation(ns));

  // A new isolate (the copies forgotten) loads it, and answers as the scan.
  await vectors('forget', {});
  for (const filter of [{}, { languages: ['go'] }, { tag: 'ten' }]) {
    const loaded = await query({ filter });
    assert.deepEqual(loaded.cache, Object.keys(filter).length ? ['hit', 'hit'] : ['loaded', 'hit']);
    assert.deepEqual(loaded.lastMatches, await scan({ filter }), JSON.stringify(filter));
  }

  // A budget the copy does not fit: nothing is held, the namespace is scanned, the same answers.
  await vectors('forget', {});
  const small = await query({ cacheBytes: 1 });
  assert.deepEqual(small.cache, ['scan', 'scan']);
  assert.deepEqual(small.lastMatches, await scan());

  // Vectors written since: the older snapshot is loaded and brought up to date.
  await vectors('load', { namespace: ns, count: 20, dims, seed: 6, start: 290 });
  await sql("DELETE FROM local_vectors WHERE namespace = ?1 AND id = 'vec-00000007'");
  assert.ok((await generation(ns)) > first[0].generation);
  await vectors('forget', {});
  const refreshed = await query();
  assert.deepEqual(refreshed.cache, ['loaded', 'hit']);
  assert.deepEqual(refreshed.lastMatches, await scan());
  assert.ok(!refreshed.lastMatches.some((m) => m.id === 'vec-00000007'));
  // The job's end stores the newer copy.
  assert.deepEqual(await vectors('prepare', { namespace: ns, dims }), { state: 'written' });
  assert.equal((await snapshot(ns))[0].generation, await generation(ns));

  // An unreadable snapshot is ignored: the copy is built from the rows and the snapshot rewritten.
  await sql("UPDATE local_vector_snapshots SET data = 'not base64!' WHERE namespace = ?1");
  await vectors('forget', {});
  const rebuilt = await query();
  assert.deepEqual(rebuilt.cache, ['built', 'hit']);
  assert.deepEqual(rebuilt.lastMatches, await scan());
  await waitForLog(/"event":"vector_snapshot_unreadable"/);
  assert.notEqual((await snapshot(ns))[0].chars, 'not base64!'.length);
  await vectors('forget', {});
  assert.deepEqual((await query()).cache, ['loaded', 'hit']);

  // A snapshot missing a part is not used.
  await sql('UPDATE local_vector_snapshots SET parts = 2 WHERE namespace = ?1');
  await vectors('forget', {});
  assert.deepEqual((await query()).cache, ['built', 'hit']);

  // Deleting every vector of the namespace deletes its snapshot.
  await vectors('clear', { namespace: ns });
  assert.deepEqual(await snapshot(ns), []);
});

test('a snapshot written part by part within a statement budget equals the one written at once', async () => {
  const ns = 'e2e-snapshot-parts';
  const dims = 256;
  for (const start of [0, 3000]) await vectors('load', { namespace: ns, count: 3000, dims, seed: 11, start });
  const sql = (statement) => vectors('sql', { namespace: ns, sql: statement, params: [ns] });
  const stored = async () =>
    er.d1('SELECT part, parts, generation, data FROM local_vector_snapshots WHERE namespace = ? ORDER BY part', ns);
  assert.deepEqual(await vectors('prepare', { namespace: ns, dims }), { state: 'written' });
  const whole = await stored();
  assert.ok(whole.length >= 3, `a snapshot of ${whole.length} parts`);

  // Forgotten and rewritten with a budget of one statement: a part a call (the copy is built by
  // the first), the snapshot unfinished until the last.
  await sql('DELETE FROM local_vector_snapshots WHERE namespace = ?1');
  await vectors('forget', {});
  const states = [];
  for (let i = 0; i < 2 * whole.length && states.at(-1) !== 'written'; i++) {
    states.push((await vectors('prepare', { namespace: ns, dims, statements: 1 })).state);
    if (states.at(-1) === 'partial') assert.ok((await stored()).length < whole.length);
  }
  assert.deepEqual(states, [...Array(whole.length - 1).fill('partial'), 'written']);
  assert.deepEqual(await stored(), whole, 'the same parts as written at once');
  assert.deepEqual(await vectors('prepare', { namespace: ns, dims, statements: 1 }), { state: 'current' });

  // A new isolate reads it and answers as the scan.
  await vectors('forget', {});
  const query = (body = {}) => vectors('query', { namespace: ns, dims, topK: 10, seed: 3, queries: 2, ...body });
  const loaded = await query();
  assert.deepEqual(loaded.cache, ['loaded', 'hit']);
  assert.deepEqual(loaded.lastMatches, (await query({ cacheBytes: 0 })).lastMatches);
});
