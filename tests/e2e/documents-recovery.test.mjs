// A document whose chunking gave up (the embedder was down past the attempt limit) stays dirty with
// its previous version searchable; the scheduled run sends it back to chunking once it has been
// quiet for JOB_RESUME_SECONDS, and it becomes clean with the latest version.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { sleep, startEdgerag, startFaultProxy, startHashEmbedder } from './harness.mjs';

const BASE = '/v1/repos/acme/notes/documents';

let embed;
let proxy;
let er;

before(async () => {
  embed = await startHashEmbedder();
  proxy = await startFaultProxy(embed.url, { match: (req) => req.url.endsWith('/embeddings') });
  // One delivery only: a failed chunking run is not retried by the queue.
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: proxy.url, DOCUMENT_DEBOUNCE_MS: '0', MAX_ATTEMPTS: '1' } });
});

after(async () => {
  await er?.stop();
  await proxy?.stop();
  await embed?.stop();
});

async function getDoc(path) {
  const r = await er.request('GET', `${BASE}/${path}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function until(what, check, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what} after ${timeoutMs} ms\n${er.logs().slice(-4000)}`);
    await sleep(200);
  }
}

test('a document left dirty by a failed chunking run is chunked again by the scheduled run', async () => {
  const path = 'ferry.md';
  const put = async (word) => {
    const r = await er.request('PUT', `${BASE}/${path}`, { body: { text: `# Ferry\n\nThe ${word} ferry leaves the harbour at dawn. Tickets are sold on board.\n` } });
    assert.equal(r.status, 202, r.text);
    return r.body.version;
  };
  const v1 = await put('amber');
  await until('v1 clean', async () => { const d = await getDoc(path); return !d.dirty && d.version === v1 && d; });

  proxy.setAlways(true);
  const v2 = await put('cobalt');
  const failed = await until('a recorded failure', async () => { const d = await getDoc(path); return d.lastError && d; });
  assert.equal(failed.version, v2);
  assert.equal(failed.dirty, true);
  proxy.setAlways(false);
  // Nothing retries it by itself: still dirty a while later.
  await sleep(2000);
  assert.equal((await getDoc(path)).dirty, true, 'the queue gave up after one delivery');

  // A scheduled run right away leaves it alone (written too recently) ...
  const chunkRuns = (await er.d1('SELECT chunk_runs FROM documents WHERE path = ?', path))[0].chunk_runs;
  await er.scheduled(Date.now());
  await sleep(2000);
  assert.equal((await getDoc(path)).dirty, true, 'not yet quiet for JOB_RESUME_SECONDS');
  // ... one 10 minutes later sends it back to chunking.
  await er.scheduled(Date.now() + 10 * 60_000);
  const clean = await until('clean after the scheduled run', async () => { const d = await getDoc(path); return !d.dirty && d; });
  assert.equal(clean.version, v2);
  assert.equal(clean.lastError, null);
  const [{ chunk_runs: after }] = await er.d1('SELECT chunk_runs FROM documents WHERE path = ?', path);
  assert.equal(after, chunkRuns + 1, 'chunked exactly once more');
  const r = await er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'notes', rawQuery: 'cobalt ferry harbour' } });
  assert.equal(r.status, 200, r.text);
  assert.ok(r.body.matches.some((m) => m.path === path && m.snippet.includes('cobalt')), JSON.stringify(r.body.matches));
});
