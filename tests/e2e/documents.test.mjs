// Editor-written documents end to end in workerd: `PUT …/documents/{path}` stores the text at once
// and answers 202; chunking (parent/child) runs once after the debounce for the latest version only;
// an unchanged PUT embeds nothing; DELETE removes the document from search; bad input gets a 4xx
// with a stable code. Embeddings come from the counting hash embedder double.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { sleep, startEdgerag, startHashEmbedder } from './harness.mjs';

const OWNER = 'acme';
const NAME = 'notebook';
const DOC = `/v1/repos/${OWNER}/${NAME}/documents/notes/draft.md`;
const MAX_FILE_BYTES = 65536;

let embed;
let er;

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({
    vars: { OPENAI_BASE_URL: embed.url, DOCUMENT_DEBOUNCE_MS: '2000', MAX_FILE_BYTES: String(MAX_FILE_BYTES) },
  });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

/** Version `i` of the draft: shared prose plus one sentence naming the version's marker word. */
function draft(i) {
  return [
    '# Field notes',
    '',
    'The expedition left the harbour before dawn. The wind was steady from the west and the crew was rested.',
    '',
    '## Observations',
    '',
    `The lookout reported a pod of whales near the reef, logged as sighting pelicanmark${i}.`,
    'Sea birds followed the boat for most of the morning. The water was calm and very clear.',
    '',
  ].join('\n');
}

async function getDoc() {
  return er.request('GET', DOC);
}

async function waitClean(timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await getDoc();
    assert.equal(r.status, 200, r.text);
    if (!r.body.dirty) return r.body;
    if (Date.now() > end) throw new Error(`still dirty after ${timeoutMs} ms: ${r.text}\n${er.logs().slice(-4000)}`);
    await sleep(250);
  }
}

async function snippetsFor(query) {
  const r = await er.request('POST', '/v1/search', { body: { owner: OWNER, name: NAME, rawQuery: query } });
  assert.equal(r.status, 200, r.text);
  return r.body.matches.filter((m) => m.path === 'notes/draft.md').map((m) => m.snippet);
}

test('ten quick PUTs are chunked once, as the last version', async () => {
  for (let i = 1; i <= 10; i++) {
    const r = await er.request('PUT', DOC, { body: { text: draft(i) } });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.version, i);
    assert.equal(r.body.dirty, true);
    assert.match(r.body.contentHash, /^[0-9a-f]{64}$/);
  }
  const stored = await getDoc();
  assert.equal(stored.body.version, 10);
  assert.equal(stored.body.dirty, true, 'chunking waits for the debounce');
  const doc = await waitClean();
  assert.equal(doc.version, 10);
  assert.equal(doc.chunkRuns, 1, JSON.stringify(doc));
  assert.ok(doc.lastChunkedAt);
  assert.ok(doc.parents >= 1 && doc.children >= doc.parents, JSON.stringify(doc));
  assert.equal(doc.parentList.length, doc.parents);
  // Give any superseded message time to arrive: it must change nothing.
  await sleep(3000);
  assert.equal((await getDoc()).body.chunkRuns, 1);
  const last = await snippetsFor('pelicanmark10');
  assert.ok(last.some((s) => s.includes('pelicanmark10')), JSON.stringify(last));
  const earlier = await snippetsFor('pelicanmark3');
  assert.ok(!earlier.some((s) => s.includes('pelicanmark3')), JSON.stringify(earlier));
});

test('an unchanged PUT embeds nothing and does not re-chunk', async () => {
  const before = await waitClean();
  const inputs = embed.stats.inputs;
  assert.ok(inputs > 0, 'the first run embedded through the stub');
  const r = await er.request('PUT', DOC, { body: draft(10), headers: { 'content-type': 'text/plain' } });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.body.version, 11);
  assert.equal(r.body.contentHash, before.contentHash);
  const doc = await waitClean();
  assert.equal(doc.version, 11);
  assert.equal(doc.chunkRuns, 1);
  assert.equal(doc.lastChunkedAt, before.lastChunkedAt);
  assert.equal(embed.stats.inputs, inputs);
});

test('bad input gets a 4xx with a stable code', async () => {
  const base = `/v1/repos/${OWNER}/${NAME}/documents`;
  const cases = [
    [await er.request('PUT', `${base}/`, { body: { text: 'x' } }), 400, 'EMPTY_PATH'],
    [await er.request('PUT', `${base}/a/..%2Fsecret.md`, { body: { text: 'x' } }), 400, 'PATH_TRAVERSAL'],
    [await er.request('PUT', `${base}/a.md`, { body: '{"text": ', headers: { 'content-type': 'application/json' } }), 400, 'INVALID_JSON'],
    [await er.request('PUT', `${base}/a.md`, { body: { text: 'x', extra: 1 } }), 400, null],
    [await er.request('PUT', `${base}/a.md`, { body: 'x'.repeat(MAX_FILE_BYTES + 1), headers: { 'content-type': 'text/plain' } }), 413, 'PAYLOAD_TOO_LARGE'],
    [await er.request('PUT', `${base}/a.md`, { body: { text: 'x' }, token: null }), 401, 'UNAUTHORIZED'],
    [await er.request('GET', `${base}/missing.md`), 404, 'DOCUMENT_NOT_FOUND'],
  ];
  for (const [r, status, code] of cases) {
    assert.equal(r.status, status, r.text);
    assert.ok(r.body?.error?.code, r.text);
    if (code) assert.equal(r.body.error.code, code, r.text);
  }
});

test('DELETE removes the document from search and GET', async () => {
  const r = await er.request('DELETE', DOC);
  assert.equal(r.status, 200, r.text);
  assert.ok(r.body.deleted.chunks > 0, r.text);
  assert.equal((await getDoc()).status, 404);
  assert.deepEqual(await snippetsFor('pelicanmark10'), []);
  const rows = await er.d1("SELECT COUNT(*) AS n FROM chunks WHERE path = 'notes/draft.md'");
  assert.equal(rows[0].n, 0);
  assert.equal((await er.request('DELETE', DOC)).status, 404);
});
