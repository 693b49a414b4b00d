// Retries and failures: the embedder endpoint (behind a fault-injecting proxy) fails twice, then
// works → the job is retried and SUCCEEDS; it always fails → FAILED after 5 attempts with
// last_error kept, the message dead-lettered, and nothing half-written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { assertSchema, keywordMatches, startEdgerag, startFaultProxy, startHashEmbedder } from './harness.mjs';

let embed;
let proxy;
let er;

before(async () => {
  embed = await startHashEmbedder();
  proxy = await startFaultProxy(embed.url);
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: proxy.url, RETRY_BASE_DELAY_SECONDS: '0', MAX_ATTEMPTS: '5' } });
});

after(async () => {
  await er?.stop();
  await proxy?.stop();
  await embed?.stop();
});

const upload = async (repo, files) => {
  const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files } });
  assert.equal(r.status, 202, r.text);
  return r.body.job.id;
};

test('500 twice, then OK → retried with backoff and SUCCEEDED', async () => {
  proxy.setAlways(false);
  proxy.setFailures(2);
  const failedBefore = proxy.stats.failed;
  const id = await upload('acme/flaky', [
    { path: 'a.md', content: '# A\n\nfirst file\n' },
    { path: 'b.md', content: '# B\n\nsecond file\n' },
  ]);
  const job = await er.waitForJob(id);
  await assertSchema('job', job);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  assert.equal(proxy.stats.failed - failedBefore, 2);
  assert.equal(job.attempt, 3, 'the embed message was delivered three times');
  assert.equal(job.lastError.code, 'EMBED_BACKEND', 'the last error of the retried attempts is kept');
  assert.equal(job.lastError.stage, 'embed');
  assert.equal(job.chunks.indexed, 2);
  const [{ n }] = await er.d1('SELECT COUNT(*) AS n FROM chunks WHERE namespace = ?', 'repo:acme/flaky');
  assert.equal(n, 2);
});

test('always failing → FAILED after 5 attempts, dead-lettered, nothing half-written', async () => {
  // A first index that works...
  proxy.setAlways(false);
  proxy.setFailures(0);
  const v1 = [
    { path: 'keep.md', content: '# Keep\n\nunchanged content\n' },
    { path: 'edit.md', content: '# Edit\n\nversion one\n' },
  ];
  const first = await er.waitForJob(await upload('acme/broken', v1));
  assert.equal(first.status, 'SUCCEEDED');
  const snapshot = async () => ({
    chunks: await er.d1('SELECT id, path, text, updated_at FROM chunks WHERE namespace = ? ORDER BY id', 'repo:acme/broken'),
    files: await er.d1('SELECT path, content_hash, chunk_count FROM files WHERE namespace = ? ORDER BY path', 'repo:acme/broken'),
    vectors: await er.d1('SELECT id FROM local_vectors WHERE namespace = ? ORDER BY id', 'repo:acme/broken'),
    fts: await keywordMatches(er, 'repo:acme/broken', 'version'),
  });
  const before = await snapshot();

  // ...then the embedder breaks for good while a change and a new file are indexed.
  proxy.setAlways(true);
  const id = await upload('acme/broken', [
    { path: 'edit.md', content: '# Edit\n\nversion two\n' },
    { path: 'new.md', content: '# New\n\nbrand new file\n' },
  ]);
  const job = await er.waitForJob(id, { timeoutMs: 120_000 });
  await assertSchema('job', job);
  assert.equal(job.status, 'FAILED');
  assert.equal(job.attempt, 5);
  assert.equal(job.maxAttempts, 5);
  assert.equal(job.lastError.code, 'EMBED_BACKEND');
  assert.equal(job.lastError.stage, 'embed');
  assert.equal(job.lastError.attempt, 5);
  assert.match(job.lastError.message, /500/);

  // The old index is exactly as it was: no new or changed chunk, vector, file or FTS row.
  assert.deepEqual(await snapshot(), before);
  assert.deepEqual(await er.d1('SELECT COUNT(*) AS n FROM job_chunks WHERE job_id = ?', id), [{ n: 0 }], 'staging cleaned up');

  // The message went to the dead-letter queue, and its consumer recorded it.
  let letters = [];
  for (let i = 0; i < 50 && letters.length === 0; i++) {
    letters = await er.d1('SELECT * FROM dead_letters WHERE job_id = ?', id);
    if (!letters.length) await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(letters.length >= 1, true, 'dead letter recorded');
  assert.equal(JSON.parse(letters[0].body).stage, 'embed');
  assert.equal(JSON.parse(letters[0].error).code, 'EMBED_BACKEND');
  assert.equal(letters[0].attempts, 5);

  const status = await er.request('GET', '/v1/repos/acme/broken/status');
  await assertSchema('repo-status', status.body);
  assert.equal(status.body.status, 'FAILED');
  assert.equal(status.body.ready, false);
  assert.equal(status.body.attempts, 5);
  assert.equal(status.body.lastError.code, 'EMBED_BACKEND');
  const runs = await er.d1('SELECT * FROM index_runs WHERE job_id = ?', id);
  assert.equal(runs.length, 1, 'a run record for the failed job too');

  // Once the embedder is back, the next request makes a fresh job that indexes the change.
  proxy.setAlways(false);
  proxy.setFailures(0);
  const retry = await er.waitForJob(
    await upload('acme/broken', [
      { path: 'edit.md', content: '# Edit\n\nversion two\n' },
      { path: 'new.md', content: '# New\n\nbrand new file\n' },
    ]),
  );
  assert.equal(retry.status, 'SUCCEEDED');
  assert.notEqual(retry.id, id);
  assert.deepEqual({ added: retry.files.added, changed: retry.files.changed }, { added: 1, changed: 1 });
});
