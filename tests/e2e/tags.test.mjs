// Tags end to end: set per upload and per file (JSON) or per archive (`?tags=`), stored with the
// file's chunks and vectors, filtered by `filters.tags` in keyword and vector retrieval, shown on
// matches; a tag change re-indexes the file; bad tags are refused before anything is staged.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { assertSchema, makeTarGz, startEdgerag, startHashEmbedder } from './harness.mjs';

let embed;
let er;

const FILES = {
  api: { path: 'src/api/retry.ts', content: 'export function retryRequest(token: string) {\n  // retry the token refresh request with backoff\n  return fetchWithBackoff(token);\n}\n' },
  plain: { path: 'src/util/backoff.ts', content: 'export function fetchWithBackoff(token: string) {\n  // backoff between token refresh retries\n  return token;\n}\n' },
  internal: { path: 'docs/retry.md', content: '# Retry\n\nThe token refresh request is retried with exponential backoff.\n' },
};

async function upload(repo, body) {
  const r = await er.request('POST', `/v1/repos/${repo}/files`, { body });
  assert.equal(r.status, 202, r.text);
  const job = await er.waitForJob(r.body.job.id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  return job;
}

async function search(filters) {
  const r = await er.request('POST', '/v1/search', {
    body: { owner: 'acme', name: 'tagged', rawQuery: 'retry token refresh backoff', filters },
  });
  assert.equal(r.status, 200, r.text);
  await assertSchema('search-response', r.body);
  return r.body.matches;
}

const tagsOf = async (repo) => {
  const r = await er.request('GET', `/v1/repos/${repo}/files`);
  assert.equal(r.status, 200, r.text);
  await assertSchema('files-response', r.body);
  return Object.fromEntries(r.body.files.map((f) => [f.path, f.tags]));
};

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
  await upload('acme/tagged', {
    tags: ['v2'],
    files: [
      { ...FILES.api, tags: ['api'] },
      FILES.plain,
      { ...FILES.internal, tags: ['internal', 'v2'] },
    ],
  });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

test('upload tags and file tags are stored together, sorted, on the file, its chunks and its vectors', async () => {
  assert.deepEqual(await tagsOf('acme/tagged'), {
    [FILES.api.path]: ['api', 'v2'],
    [FILES.plain.path]: ['v2'],
    [FILES.internal.path]: ['internal', 'v2'],
  });
  const chunks = await er.d1('SELECT DISTINCT path, tags FROM chunks WHERE namespace = ? ORDER BY path', 'repo:acme/tagged');
  assert.deepEqual(chunks, [
    { path: FILES.internal.path, tags: ',internal,v2,' },
    { path: FILES.api.path, tags: ',api,v2,' },
    { path: FILES.plain.path, tags: ',v2,' },
  ]);
  const vectors = await er.d1('SELECT DISTINCT path, tags FROM local_vectors WHERE namespace = ? ORDER BY path', 'repo:acme/tagged');
  assert.deepEqual(vectors, chunks, 'vector metadata carries the same tags');
});

test('a tag filter returns only files carrying the tag, and matches show their tags', async () => {
  const all = await search(undefined);
  assert.deepEqual(new Set(all.map((m) => m.path)), new Set(Object.values(FILES).map((f) => f.path)), 'the query finds every file without a filter');

  const api = await search({ tags: ['api'] });
  assert.ok(api.length > 0);
  assert.ok(api.every((m) => m.path === FILES.api.path), JSON.stringify(api.map((m) => m.path)));
  assert.deepEqual(api[0].metadata.tags, ['api', 'v2']);

  // Several tags: any of them (the vector side post-filters, the keyword side filters in SQL).
  const either = await search({ tags: ['api', 'internal'] });
  assert.deepEqual(new Set(either.map((m) => m.path)), new Set([FILES.api.path, FILES.internal.path]));

  assert.deepEqual(await search({ tags: ['nope'] }), []);
  // Whole tags only: a prefix of a tag is another tag.
  assert.deepEqual(await search({ tags: ['ap'] }), []);
});

test('the same content with other tags is re-indexed as changed and becomes filterable', async () => {
  const job = await upload('acme/tagged', { files: [{ ...FILES.plain, tags: ['api'] }] });
  assert.equal(job.files.changed, 1, JSON.stringify(job.files));
  assert.deepEqual((await tagsOf('acme/tagged'))[FILES.plain.path], ['api']);
  const api = await search({ tags: ['api'] });
  assert.deepEqual(new Set(api.map((m) => m.path)), new Set([FILES.api.path, FILES.plain.path]));
  const vectors = await er.d1('SELECT DISTINCT tags FROM local_vectors WHERE namespace = ? AND path = ?', 'repo:acme/tagged', FILES.plain.path);
  assert.deepEqual(vectors, [{ tags: ',api,' }]);

  const again = await upload('acme/tagged', { files: [{ ...FILES.plain, tags: ['api'] }] });
  assert.equal(again.files.unchanged, 1, 'same content, same tags: nothing to do');
});

test('an archive upload takes its tags from ?tags=', async () => {
  const body = makeTarGz([
    { path: 'README.md', content: '# Tarball\n\nRetry notes for the token refresh.\n' },
    { path: 'lib/a.py', content: 'def retry(token):\n    return token\n' },
  ]);
  const r = await er.request('POST', '/v1/repos/acme/tarred/files?tags=docs,v3', { body, headers: { 'content-type': 'application/gzip' } });
  assert.equal(r.status, 202, r.text);
  const job = await er.waitForJob(r.body.job.id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  assert.deepEqual(await tagsOf('acme/tarred'), { 'README.md': ['docs', 'v3'], 'lib/a.py': ['docs', 'v3'] });
});

test('bad tags are a 400 INVALID_TAGS and nothing is staged', async () => {
  const before = await er.d1('SELECT COUNT(*) AS n FROM job_files');
  const many = Array.from({ length: 21 }, (_, i) => `t${i}`);
  const bodies = [
    { tags: [''], files: [FILES.api] },
    { tags: ['a,b'], files: [FILES.api] },
    { tags: [' padded'], files: [FILES.api] },
    { tags: ['x'.repeat(65)], files: [FILES.api] },
    { tags: many, files: [FILES.api] },
    { files: [FILES.plain, { ...FILES.api, tags: ['bad\ntag'] }] },
    // 15 upload tags + 6 of the file's own: over the per-file limit together.
    { tags: many.slice(0, 15), files: [{ ...FILES.api, tags: many.slice(15) }] },
  ];
  for (const body of bodies) {
    const r = await er.request('POST', '/v1/repos/acme/tagged/files', { body });
    assert.equal(r.status, 400, `${JSON.stringify(body.tags)}: ${r.text}`);
    await assertSchema('error', r.body);
    assert.equal(r.body.error.code, 'INVALID_TAGS');
  }
  const tar = makeTarGz([{ path: 'a.md', content: '# A\n' }]);
  const r = await er.request('POST', '/v1/repos/acme/tarred/files?tags=ok,bad%0Atag', { body: tar, headers: { 'content-type': 'application/gzip' } });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error.code, 'INVALID_TAGS');
  assert.deepEqual(await er.d1('SELECT COUNT(*) AS n FROM job_files'), before);
});
