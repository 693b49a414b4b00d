// Editor-written documents, searched and edited, end to end in workerd: a search returns each
// parent section once (a window of whole children around the matched one when the parent is over
// `contextWindowChars`); an edit of one section re-embeds only that section's new sentences and
// children and leaves the other sections' children (ids, vectors) alone; a failing embedder keeps
// the document dirty with the previous version searchable, and the document recovers when the
// embedder answers again. Embeddings come from the hash embedder double (which records every
// input), behind a fault proxy.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { sleep, startEdgerag, startFaultProxy, startHashEmbedder } from './harness.mjs';

const OWNER = 'acme';
const NAME = 'handbook';
const BASE = `/v1/repos/${OWNER}/${NAME}/documents`;

let embed;
let proxy;
let er;

before(async () => {
  embed = await startHashEmbedder();
  proxy = await startFaultProxy(embed.url, { match: (req) => req.url.endsWith('/embeddings') });
  er = await startEdgerag({
    vars: { OPENAI_BASE_URL: proxy.url, DOCUMENT_DEBOUNCE_MS: '300', RETRY_BASE_DELAY_SECONDS: '1', MAX_ATTEMPTS: '8' },
  });
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

async function put(path, text) {
  const r = await er.request('PUT', `${BASE}/${path}`, { body: { text } });
  assert.equal(r.status, 202, r.text);
  return r.body.version;
}

async function waitClean(path, version, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const doc = await getDoc(path);
    if (!doc.dirty && doc.version >= version) return doc;
    if (Date.now() > end) throw new Error(`${path} still dirty after ${timeoutMs} ms: ${JSON.stringify(doc)}\n${er.logs().slice(-4000)}`);
    await sleep(200);
  }
}

async function search(rawQuery, extra = {}) {
  const r = await er.request('POST', '/v1/search', { body: { owner: OWNER, name: NAME, rawQuery, ...extra } });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** Child chunks of a document: id → parent id. */
async function children(path) {
  const rows = await er.d1(
    `SELECT id, json_extract(metadata, '$.parentId') AS parent FROM chunks WHERE path = '${path}' ORDER BY id`,
  );
  return new Map(rows.map((r) => [r.id, r.parent]));
}

// One section of ~1,400 characters (one parent over the 1,000-character window): four paragraphs,
// the marker word in the third; every sentence mentions the lighthouse.
const LONG_SECTION = [
  '# Lighthouse maintenance',
  '',
  'The lighthouse lamp is cleaned every morning before the keeper writes the log. Soot on the lens cuts the range of the beam by a third. The keeper uses a soft cloth and alcohol, never water, on the lighthouse lens.',
  '',
  'Once a month the lighthouse clockwork is wound and oiled. The weights hang in the tower shaft and fall a full storey each night. A slipping chain in the lighthouse is replaced before the winter storms arrive.',
  '',
  'The lighthouse fog signal is tested at noon on the first day of each quarter with the zanzibarite reed horn. Its note must carry four nautical miles over calm water. The test is logged with the wind speed and the visibility from the lighthouse gallery.',
  '',
  'Spare bulbs for the lighthouse are kept in a dry cabinet at the foot of the stairs. Each bulb is numbered and its hours of service are written on a card. A bulb that flickers is taken out at once and sent back to the depot on the mainland for testing.',
  '',
  'Paint on the lighthouse tower is renewed every fifth summer. Scaffolding is raised on the landward side first, then the seaward side when the swell is low. The lighthouse keeper inspects the railings of the gallery after every gale.',
  '',
  '# Supply boat',
  '',
  'The supply boat calls every second Tuesday with fuel, food and letters. It anchors in the north cove when the wind is from the south.',
  '',
].join('\n');

test('a search returns a large parent once, as a window of whole children around the matched child', async () => {
  const v = await put('keeper.md', LONG_SECTION);
  const doc = await waitClean('keeper.md', v);
  const big = doc.parentList.find((p) => p.headingPath.includes('Lighthouse maintenance'));
  assert.ok(big && big.chars > 1000, JSON.stringify(doc.parentList));

  const res = await search('zanzibarite reed horn');
  assert.ok(res.appliedModules.includes('post.parent-child:prose'), JSON.stringify(res.appliedModules));
  const hits = res.matches.filter((m) => m.metadata.parentId === big.id);
  assert.equal(hits.length, 1, JSON.stringify(res.matches.map((m) => m.metadata)));
  const [hit] = hits;
  assert.equal(hit.path, 'keeper.md');
  assert.equal(hit.metadata.isContextWindow, true);
  assert.equal(hit.metadata.parentChars, big.chars);
  assert.ok(hit.snippet.includes('zanzibarite reed horn'), hit.snippet);
  assert.ok(hit.snippet.length <= 1000 && hit.snippet.length < big.chars, `${hit.snippet.length}`);
  assert.equal(typeof hit.metadata.rawScore, 'number');
  // The window is whole children: it starts and ends at sentence boundaries of the section.
  assert.ok(LONG_SECTION.includes(hit.snippet.trim()), hit.snippet);

  // Many children of the same parent match "lighthouse": the parent still comes back once.
  const many = await search('lighthouse keeper gallery');
  const perParent = new Map();
  for (const m of many.matches.filter((m) => m.metadata.parentId)) {
    perParent.set(m.metadata.parentId, (perParent.get(m.metadata.parentId) ?? 0) + 1);
  }
  assert.equal(perParent.get(big.id), 1, JSON.stringify([...perParent]));

  // A larger window returns the whole parent.
  const whole = await search('zanzibarite reed horn', { parentChild: { contextWindowChars: 4000 } });
  const wholeHit = whole.matches.find((m) => m.metadata.parentId === big.id);
  assert.equal(wholeHit.metadata.isContextWindow, false);
  assert.equal(wholeHit.snippet.length, big.chars);
});

function threeSections(middle) {
  return [
    '# Harbour',
    '',
    'The harbour master opens the gates at six in the morning. Fishing boats leave first and the ferry follows at seven. Pilots wait at the outer buoy for the cargo ships.',
    '',
    '# Quartz mine',
    '',
    middle,
    '',
    '# Village',
    '',
    'The village has a bakery, a school and a small church on the hill. Market day is Saturday, when farmers bring cheese and apples from the valley.',
    '',
  ].join('\n');
}

test('an edit of one section re-embeds only its new sentences and keeps the other children', async () => {
  const path = 'island.md';
  const v1 = await put(path, threeSections('Quartz is carried down from the mine in carts. The quartz carts are weighed at the gate.'));
  await waitClean(path, v1);
  const before = await children(path);
  const parentsBefore = (await getDoc(path)).parentList;
  const quartzParent = parentsBefore.find((p) => p.headingPath.includes('Quartz mine')).id;
  const untouched = [...before].filter(([, parent]) => parent !== quartzParent).map(([id]) => id);
  assert.ok(untouched.length >= 2, JSON.stringify([...before]));

  const seen = embed.stats.texts.length;
  // The edit adds a line (every later line number moves) and a new sentence in the middle section.
  const v2 = await put(path, threeSections('Quartz is carried down from the mine in carts.\nThe quartz carts are weighed at the gate. Broken quartz is sold to the glassworks.'));
  const doc = await waitClean(path, v2);
  assert.equal(doc.chunkRuns, 2);
  const embedded = embed.stats.texts.slice(seen);
  assert.ok(embedded.length > 0, 'the new sentence was embedded');
  for (const text of embedded) assert.match(text, /quartz/i, `only the edited section is embedded: ${JSON.stringify(embedded)}`);
  assert.ok(embedded.some((t) => t.includes('Broken quartz is sold to the glassworks.')), JSON.stringify(embedded));

  const afterEdit = await children(path);
  for (const id of untouched) assert.ok(afterEdit.has(id), `child ${id} of an unchanged section kept its id`);
  const quartzNow = doc.parentList.find((p) => p.headingPath.includes('Quartz mine')).id;
  assert.notEqual(quartzNow, quartzParent);
  assert.ok(![...afterEdit.values()].includes(quartzParent), 'the old parent has no children left');
  const parentRows = await er.d1(`SELECT id FROM document_parents WHERE path = '${path}'`);
  assert.ok(!parentRows.some((r) => r.id === quartzParent), 'the old parent row is gone');
  // Vectors (the local index): exactly one per child of the document, stale ones removed.
  const vectors = await er.d1(`SELECT id FROM local_vectors WHERE path = '${path}' ORDER BY id`);
  assert.deepEqual(vectors.map((r) => r.id), [...afterEdit.keys()]);
  // Lines follow the edit although the village children were not rewritten by the embedder.
  const village = await search('bakery school church');
  const m = village.matches.find((x) => x.path === path && x.snippet.includes('bakery'));
  assert.ok(m, JSON.stringify(village.matches));
  const lines = threeSections('x\ny').split('\n');
  assert.ok(['# Village', 'The village'].some((s) => lines[m.startLine - 1].startsWith(s)), `${m.startLine}: ${m.snippet}`);
});

test('a failing embedder keeps the document dirty and the previous version searchable, then it recovers', async () => {
  const path = 'tides.md';
  const text = (word) => `# Tides\n\nThe spring tide floods the causeway twice a month. The ${word} tide table is posted at the slipway.\n`;
  const v1 = await put(path, text('marigold'));
  await waitClean(path, v1);
  proxy.setAlways(true);
  try {
    const v2 = await put(path, text('sapphire'));
    const end = Date.now() + 30_000;
    let doc;
    for (;;) {
      doc = await getDoc(path);
      if (doc.lastError) break;
      if (Date.now() > end) throw new Error(`no failure recorded: ${JSON.stringify(doc)}`);
      await sleep(200);
    }
    assert.equal(doc.version, v2);
    assert.equal(doc.dirty, true);
    const old = await search('marigold tide table');
    assert.ok(old.matches.some((m) => m.path === path && m.snippet.includes('marigold')), JSON.stringify(old.matches));
    const fresh = await search('sapphire tide table');
    assert.ok(!fresh.matches.some((m) => m.path === path && m.snippet.includes('sapphire')), 'nothing half-written');
  } finally {
    proxy.setAlways(false);
  }
  const doc = await waitClean(path, 2);
  assert.equal(doc.lastError, null);
  const now = await search('sapphire tide table');
  assert.ok(now.matches.some((m) => m.path === path && m.snippet.includes('sapphire')), JSON.stringify(now.matches));
  const gone = await search('marigold');
  assert.ok(!gone.matches.some((m) => m.path === path && m.snippet.includes('marigold')));
});

test('a repository set to parent-child chunking indexes uploaded Markdown as parents and children', async () => {
  const settings = '/v1/repos/acme/uploaded/settings';
  assert.equal((await er.request('GET', settings)).body.chunking, 'flat', 'flat by default');
  for (const body of [{ chunking: 'semantic' }, { chunking: 'flat', extra: 1 }, { chunking: 3 }]) {
    const bad = await er.request('PUT', settings, { body });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.code, 'INVALID_SETTINGS', bad.text);
  }
  const ok = await er.request('PUT', settings, { body: { chunking: 'parent-child' } });
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await er.request('GET', settings)).body.chunking, 'parent-child');

  const files = [
    { path: 'docs/keeper.md', content: LONG_SECTION },
    { path: 'src/lamp.rs', content: 'pub fn lamp_brightness(level: u32) -> u32 {\n    level * 2\n}\n' },
  ];
  await er.indexFiles('acme/uploaded', files);

  const parents = await er.d1("SELECT id, length(text) AS chars FROM document_parents WHERE namespace = 'repo:acme/uploaded' AND path = 'docs/keeper.md'");
  assert.ok(parents.length >= 2, JSON.stringify(parents));
  const r = await er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'uploaded', rawQuery: 'zanzibarite reed horn' } });
  assert.equal(r.status, 200, r.text);
  const hit = r.body.matches.find((m) => m.path === 'docs/keeper.md');
  assert.ok(hit && parents.some((p) => p.id === hit.metadata.parentId), JSON.stringify(r.body.matches.map((m) => m.metadata)));
  assert.equal(hit.metadata.isContextWindow, true);
  assert.ok(hit.snippet.includes('zanzibarite reed horn'));
  const code = await er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'uploaded', rawQuery: 'lamp_brightness' } });
  const codeHit = code.body.matches.find((m) => m.path === 'src/lamp.rs');
  assert.ok(codeHit && !codeHit.metadata.parentId, JSON.stringify(code.body.matches));
});

test('deleting the repository removes its documents and parents', async () => {
  const r = await er.request('DELETE', `/v1/repos/${OWNER}/${NAME}`);
  assert.equal(r.status, 200, r.text);
  const left = await er.d1(
    "SELECT (SELECT COUNT(*) FROM documents WHERE namespace = 'repo:acme/handbook') AS docs, (SELECT COUNT(*) FROM document_parents WHERE namespace = 'repo:acme/handbook') AS parents",
  );
  assert.deepEqual(left[0], { docs: 0, parents: 0 });
  assert.equal((await er.request('GET', `${BASE}/keeper.md`)).status, 404);
});
