// How ingestion moves vectors between its stages and through the embedding cache, checked on the
// bytes D1 holds:
// 1. the embed stage stages each chunk's vector as an f32 little-endian BLOB (seen while the index
//    stage is held back by an injected D1 failure), and the index stage writes exactly those
//    vectors to the local index once the failure clears;
// 2. a message with more chunks than one `IN (…)` list can hold (D1: 100 bound parameters) is
//    served entirely from the embedding cache the second time, each chunk getting its own vector.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { hashVector, sleep, startEdgerag, startHashEmbedder } from './harness.mjs';

let embed;
let er;

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({
    vars: { OPENAI_BASE_URL: embed.url, FILES_PER_MESSAGE: '500', MAX_ATTEMPTS: '100', RETRY_BASE_DELAY_SECONDS: '1' },
  });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

/** The f32 little-endian bytes, as upper-case hex, of every vector the test embedder returned. */
function embeddedHex() {
  return new Set(embed.stats.texts.map((t) => Buffer.from(new Float32Array(hashVector(t, 384)).buffer).toString('hex').toUpperCase()));
}

async function upload(repo, files) {
  const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files } });
  assert.equal(r.status, 202, r.text);
  return r.body.job.id;
}

async function until(what, check, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// 150 files of one chunk each, all in one message (FILES_PER_MESSAGE): 150 cache keys.
const FILES = Array.from({ length: 150 }, (_, i) => ({
  path: `docs/page-${String(i).padStart(3, '0')}.md`,
  content: `# Page ${i}\n\nThis page talks about topic number ${i * 7919} and nothing else.\n`,
}));

test('vectors are staged as f32 BLOBs and the index stage writes exactly the embedded vectors', async () => {
  const ns = 'repo:acme/staging';
  const arm = async (failures) => {
    const r = await er.request('POST', '/__test/faults/index-batch', { body: { namespace: ns, failures } });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };
  // Held at the index stage: every index batch of the namespace fails until disarmed.
  await arm(1000);
  const id = await upload('acme/staging', FILES);
  await until('an injected index failure', async () => (await arm()).injected >= 1);

  const staged = await er.d1(
    'SELECT typeof(vector) AS type, length(vector) AS bytes, hex(vector) AS hex FROM job_chunks WHERE job_id = ?',
    id,
  );
  assert.ok(staged.length >= 150, `${staged.length} staged chunks`);
  const embedded = embeddedHex();
  for (const row of staged) {
    assert.equal(row.type, 'blob');
    assert.equal(row.bytes, 384 * 4);
    assert.ok(embedded.has(row.hex), 'a staged vector is byte for byte one the embedder returned');
  }

  await arm(0);
  const job = await er.waitForJob(id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  const vectors = await er.d1(
    'SELECT id, typeof(vector) AS type, hex(vector) AS hex FROM local_vectors WHERE namespace = ? ORDER BY id',
    ns,
  );
  const chunks = await er.d1('SELECT id FROM chunks WHERE namespace = ? ORDER BY id', ns);
  assert.deepEqual(vectors.map((v) => v.id), chunks.map((c) => c.id), 'one vector per chunk');
  assert.equal(new Set(vectors.map((v) => v.hex)).size, vectors.length, 'distinct texts, distinct vectors');
  for (const v of vectors) {
    assert.equal(v.type, 'blob');
    assert.ok(embedded.has(v.hex), `vector of ${v.id} is one the embedder returned`);
  }
  // The staged hex of the failed attempts is exactly what was indexed.
  assert.deepEqual(new Set(staged.map((r) => r.hex)), new Set(vectors.map((v) => v.hex)));
  assert.deepEqual(await er.d1('SELECT COUNT(*) AS n FROM job_chunks WHERE job_id = ?', id), [{ n: 0 }], 'staging cleaned up');
});

test('a message of more chunks than one IN list holds is served from the embedding cache', async () => {
  // The same paths and contents under another repository: the same embedding texts.
  const before = { requests: embed.stats.requests, inputs: embed.stats.inputs };
  const cached = await er.d1("SELECT COUNT(*) AS n, MIN(length(vector)) AS bytes FROM embedding_cache WHERE model = 'all-MiniLM-L6-v2'");
  assert.ok(cached[0].n >= 150, `${cached[0].n} cached vectors`);
  assert.equal(cached[0].bytes, 384 * 4);

  const id = await upload('acme/again', FILES);
  const job = await er.waitForJob(id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  assert.deepEqual({ requests: embed.stats.requests, inputs: embed.stats.inputs }, before, 'nothing was sent to the embedder');

  // Each chunk got its own text's vector back from the cache (not a neighbour's).
  const pairs = await er.d1(
    `SELECT a.id AS a, hex(a.vector) AS av, hex(b.vector) AS bv FROM local_vectors a
       JOIN chunks ca ON ca.namespace = a.namespace AND ca.id = a.id
       JOIN chunks cb ON cb.namespace = 'repo:acme/staging' AND cb.path = ca.path AND cb.chunk_index = ca.chunk_index
       JOIN local_vectors b ON b.namespace = cb.namespace AND b.id = cb.id
     WHERE a.namespace = 'repo:acme/again'`,
  );
  assert.ok(pairs.length >= 150, `${pairs.length} chunk pairs`);
  for (const p of pairs) assert.equal(p.av, p.bv, `chunk ${p.a} has the vector of the same text in the first repository`);
});
