// At-least-once delivery: with DELIVER_TWICE every stage message is sent twice (the two copies may
// run concurrently or one after the other). The result must be exactly what one delivery gives.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { coreChunks, keywordIndexIds, keywordIndexTotal, startEdgerag, startHashEmbedder } from './harness.mjs';

let embed;
let er;

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, DELIVER_TWICE: 'true', FILES_PER_MESSAGE: '2' } });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

test('every message delivered twice → no duplicates, exact counters, one completion', async () => {
  const files = Array.from({ length: 9 }, (_, i) => ({
    path: `docs/page${i}.md`,
    content: `# Page ${i}\n\nText of page ${i}.\n\n## Details\n\nMore about ${i}.\n`,
  }));
  files.push({ path: 'src/util.js', content: 'export function twice(x) {\n  return x * 2;\n}\n' });
  const job = await er.indexFiles('acme/twice', files);
  // Let the late duplicate copies drain (they must find nothing to do).
  await new Promise((res) => setTimeout(res, 4000));

  const expected = await coreChunks(files);
  const chunks = await er.d1('SELECT id FROM chunks WHERE namespace = ? ORDER BY id', 'repo:acme/twice');
  assert.deepEqual(chunks.map((c) => c.id), expected.map((c) => c.id).sort());
  assert.deepEqual(await keywordIndexIds(er, 'repo:acme/twice'), expected.map((c) => c.id).sort(), 'one FTS row per chunk');
  const [{ n: all }] = await er.d1('SELECT COUNT(*) AS n FROM chunks');
  assert.equal(await keywordIndexTotal(er), all, 'no FTS row without its chunk');
  const [{ n: vectors }] = await er.d1('SELECT COUNT(*) AS n FROM local_vectors WHERE namespace = ?', 'repo:acme/twice');
  assert.equal(vectors, expected.length);

  const final = (await er.request('GET', `/v1/jobs/${job.id}`)).body;
  assert.equal(final.status, 'SUCCEEDED');
  assert.deepEqual(final.files, { total: 10, done: 10, added: 10, changed: 0, unchanged: 0, deleted: 0, skipped: 0 });
  assert.equal(final.chunks.indexed, expected.length);
  assert.equal(final.completedAt, job.completedAt, 'completed once');
  const runs = await er.d1('SELECT COUNT(*) AS n FROM index_runs WHERE job_id = ?', job.id);
  assert.deepEqual(runs, [{ n: 1 }], 'exactly one run record');
  const ns = await er.d1('SELECT status, file_count, chunk_count FROM namespaces WHERE id = ?', 'repo:acme/twice');
  assert.deepEqual(ns, [{ status: 'READY', file_count: 10, chunk_count: expected.length }]);
  const letters = await er.d1('SELECT COUNT(*) AS n FROM dead_letters');
  assert.deepEqual(letters, [{ n: 0 }], 'no message failed');
});
