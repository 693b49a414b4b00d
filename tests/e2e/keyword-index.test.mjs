// Each namespace has its own keyword index: indexing another repository (here the same files again
// plus more, so every term's document frequency changes database-wide) neither moves a
// namespace's BM25 scores nor its search results, each index holds exactly its namespace's rows,
// and deleting a repository removes its index.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { ROOT, keywordIndexIds, keywordIndexTotal, keywordTable, readTree, startEdgerag, startHashEmbedder } from './harness.mjs';

const FIXTURES = join(ROOT, 'tests', 'e2e', 'fixtures');
const SHOP = 'repo:acme/shop';
const NOISE = 'repo:acme/noise';


let embed;
let er;

async function index(repo, files) {
  await er.indexFiles(repo, files);
}

/** The namespace's BM25 scores for an FTS5 query, as the worker's keyword statement weighs them. */
async function scores(ns, query) {
  const t = keywordTable(ns);
  return er.d1(
    `SELECT c.id AS id, bm25(${t}, 1.0, 2.0, 4.0) AS score FROM ${t} CROSS JOIN chunks c ON c.rowid = ${t}.rowid
     WHERE ${t} MATCH ? ORDER BY score, c.id`,
    query,
  );
}

async function search(rawQuery, filters) {
  const r = await er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'shop', rawQuery, filters, profile: 'balanced' } });
  assert.equal(r.status, 200, r.text);
  return r.body.matches.map((m) => ({ id: m.id, score: m.score, path: m.path }));
}

const chunkIds = async (ns) => (await er.d1('SELECT id FROM chunks WHERE namespace = ? ORDER BY id', ns)).map((r) => r.id);

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
  await index('acme/shop', readTree(join(FIXTURES, 'search-repo')));
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

test("another namespace's rows change neither a namespace's BM25 scores nor its results", async () => {
  const queries = ['"retry"* OR "token"', '"session" OR "refresh"* OR "access"', '"hash"* OR "key"'];
  const before = [];
  for (const q of queries) before.push(await scores(SHOP, q));
  assert.ok(before.every((rows) => rows.length > 0), 'every query matches the namespace');
  const results = { plain: await search('refresh the access token'), filtered: await search('retry with backoff', { languages: ['python'] }) };
  assert.ok(results.plain.length > 0 && results.filtered.length > 0);

  // The same files twice more under other paths, plus the other fixture repository.
  await index('acme/noise', [
    ...readTree(join(FIXTURES, 'search-repo'), 'a/'),
    ...readTree(join(FIXTURES, 'search-repo'), 'b/'),
    ...readTree(join(FIXTURES, 'search-repo-other'), 'c/'),
  ]);
  for (const [i, q] of queries.entries()) {
    assert.deepEqual(await scores(SHOP, q), before[i], `scores for ${q} unchanged`);
    assert.ok((await scores(NOISE, q)).length > before[i].length, 'the other namespace matches more rows');
  }
  assert.deepEqual(await search('refresh the access token'), results.plain);
  assert.deepEqual(await search('retry with backoff', { languages: ['python'] }), results.filtered);

  // Each index holds exactly its namespace's rows; the shared index holds none.
  assert.deepEqual(await keywordIndexIds(er, SHOP), await chunkIds(SHOP));
  assert.deepEqual(await keywordIndexIds(er, NOISE), await chunkIds(NOISE));
  const [{ n: shared }] = await er.d1('SELECT COUNT(*) AS n FROM chunks_fts_docsize');
  assert.equal(shared, 0);
  const [{ n: all }] = await er.d1('SELECT COUNT(*) AS n FROM chunks');
  assert.equal(await keywordIndexTotal(er), all);
});

test("deleting a repository removes its keyword index and leaves the others' intact", async () => {
  const shop = await keywordIndexIds(er, SHOP);
  const r = await er.request('DELETE', '/v1/repos/acme/noise');
  assert.equal(r.status, 200, r.text);
  const tables = await er.d1("SELECT name FROM sqlite_master WHERE name LIKE ? OR name LIKE ?", `${keywordTable(NOISE)}%`, `${keywordTable(NOISE)}_%`);
  assert.deepEqual(tables, [], 'no table or trigger of the deleted namespace is left');
  assert.deepEqual(await er.d1('SELECT namespace FROM keyword_indexes ORDER BY namespace'), [{ namespace: SHOP }]);
  assert.deepEqual(await keywordIndexIds(er, SHOP), shop);
  assert.ok((await search('refresh the access token')).length > 0);

  // Indexed again later, it gets a fresh index.
  await index('acme/noise', readTree(join(FIXTURES, 'search-repo-other')));
  assert.deepEqual(await keywordIndexIds(er, NOISE), await chunkIds(NOISE));
});
