// Real local embeddings end to end: the worker in workerd (`[env.local]`: EMBEDDER=openai) talks to
// edgerag-embed-server (all-MiniLM-L6-v2, scripts/embed-server.sh). Indexing a small hand-written
// directory stores real 384-dim MiniLM vectors in the local D1 index, and a nearest-neighbour query
// for a paraphrase returns its target chunk. The D1 embedding cache never embeds a text twice.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { startEdgerag, startEmbedServer } from './harness.mjs';

const REPO = 'acme/handbook';
const NS = `repo:${REPO}`;
// One topic per file, worded so that no paraphrase below shares its key words with its target.
const FILES = [
  { path: 'docs/passwords.md', content: '# Account recovery\n\nIf you cannot sign in, open Settings, choose Security and click "Forgot password" to receive a reset link by email.\n' },
  { path: 'docs/holidays.md', content: '# Office hours\n\nThe office is closed on public holidays and reopens the next business day at 9 am.\n' },
  { path: 'docs/billing.md', content: '# Invoices\n\nInvoices are emailed on the first day of every month; payment is due within thirty days.\n' },
  { path: 'docs/baking.md', content: '# Bread\n\nPreheat the oven to 200 degrees, knead the dough for ten minutes and bake the loaf for forty minutes.\n' },
  { path: 'docs/plants.md', content: '# Photosynthesis\n\nLeaves turn sunlight, water and carbon dioxide into glucose, releasing oxygen.\n' },
  { path: 'src/retry.py', content: 'def deliver(message, attempts=5):\n    """Send a message; on failure wait 2, 4, 8 seconds (exponential backoff) before giving up."""\n    for attempt in range(attempts):\n        if send(message):\n            return True\n        sleep(2 ** (attempt + 1))\n    return False\n' },
];
const PARAPHRASES = [
  ['I forgot my login, how do I get back into my account?', 'docs/passwords.md'],
  ['when are you open again after a national holiday', 'docs/holidays.md'],
  ['when do I get my monthly bill and how long do I have to pay', 'docs/billing.md'],
  ['what temperature and how long to cook a loaf', 'docs/baking.md'],
  ['how do plants make sugar from light', 'docs/plants.md'],
  ['what happens when sending a message keeps failing', 'src/retry.py'],
];

let embed;
let er;

before(async () => {
  embed = await startEmbedServer();
  er = await startEdgerag({
    vars: { EMBEDDER: 'openai', OPENAI_BASE_URL: embed.url, EMBED_MODEL: 'all-MiniLM-L6-v2', EMBED_DIMS: '384' },
  });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

test('/health names the embedder and the vector index in use', async () => {
  const r = await er.request('GET', '/health');
  assert.equal(r.status, 200, r.text);
  const text = JSON.stringify(r.body);
  assert.match(text, /all-MiniLM-L6-v2/);
  assert.match(text, /384/);
});

test('the D1 embedding cache sends each distinct text to the model once', async () => {
  const texts = ['cache me once', 'and me too', 'cache me once'];
  const first = await er.request('POST', '/__test/embed', { body: { texts } });
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(
    { embedded: first.body.stats.embedded, duplicates: first.body.stats.duplicates, cacheHits: first.body.stats.cacheHits },
    { embedded: 2, duplicates: 1, cacheHits: 0 },
  );
  assert.equal(first.body.vectors.length, 3);
  assert.equal(first.body.vectors[0].length, 384);
  assert.deepEqual(first.body.vectors[0], first.body.vectors[2]);
  const second = await er.request('POST', '/__test/embed', { body: { texts } });
  assert.equal(second.body.stats.embedded, 0);
  assert.equal(second.body.stats.cacheHits, 2);
  assert.deepEqual(second.body.vectors, first.body.vectors);
  const rows = await er.d1("SELECT model, dims, length(vector) AS bytes FROM embedding_cache WHERE model = 'all-MiniLM-L6-v2'");
  assert.ok(rows.length >= 2);
  for (const row of rows) assert.deepEqual([row.dims, row.bytes], [384, 384 * 4]);
});

test('indexing a directory stores real MiniLM vectors; a paraphrase finds its target', async () => {
  await er.indexFiles(REPO, FILES, { timeoutMs: 180_000 });

  const chunks = await er.d1('SELECT id FROM chunks WHERE namespace = ?', NS);
  const vectors = await er.d1('SELECT id, dims, vector FROM local_vectors WHERE namespace = ?', NS);
  assert.ok(chunks.length >= FILES.length);
  assert.equal(vectors.length, chunks.length, 'one vector per chunk');
  for (const v of vectors) {
    assert.equal(v.dims, 384);
    const b = Buffer.from(v.vector);
    assert.equal(b.length, 384 * 4);
    const x = Array.from({ length: 384 }, (_, i) => b.readFloatLE(i * 4));
    const norm = Math.sqrt(x.reduce((s, y) => s + y * y, 0));
    assert.ok(Math.abs(norm - 1) < 1e-3, `MiniLM vectors are unit length, got ${norm}`);
    assert.ok(x.filter((y) => y !== 0).length > 300, 'a dense model vector, not a sparse hash');
  }

  for (const [query, target] of PARAPHRASES) {
    const r = await er.request('POST', '/__test/vectors/nearest', { body: { namespace: NS, text: query, topK: 3 } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.index, 'local-d1');
    assert.equal(r.body.matches[0]?.metadata?.path, target, `${query} → ${JSON.stringify(r.body.matches.map((m) => [m.metadata.path, m.score]))}`);
  }

  // Filters work on real data too: restricted to Python, the retry code is the only candidate.
  const r = await er.request('POST', '/__test/vectors/nearest', {
    body: { namespace: NS, text: 'bread recipe', topK: 5, filter: { languages: ['python'] } },
  });
  assert.equal(r.status, 200, r.text);
  assert.ok(r.body.matches.length >= 1);
  assert.ok(r.body.matches.every((m) => m.metadata.path === 'src/retry.py'));
});
