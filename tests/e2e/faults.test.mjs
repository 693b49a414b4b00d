// The fault suite: faults injected into real ingestion jobs in workerd, each job checked for exact
// chunks afterwards (the chunk ids the native core gives for the same files, once each in `chunks`,
// `local_vectors` and the FTS index). Ends with a summary line:
//   faults: injected N, jobs completed M, chunks lost 0, duplicated 0
//
// 1. the worker process tree SIGKILLed mid-ingestion and restarted on the same state: the scheduled
//    run resumes the job, which completes with exact counts;
// 2. the index stage's D1 batch failing mid-batch (the `/__test/faults/index-batch` hook of the
//    `test-hooks` build): retried, and meanwhile search sees only the old index, by keyword and
//    by vector (stale vectors are deleted only after the batch commits);
// 3. the embedder down for a while: the message retries with backoff, the job succeeds when it is
//    back (down for good → FAILED with lastError: failures.test.mjs);
// 4. files that cannot be chunked (binary, invalid UTF-8) in an archive: skipped with a reason,
//    the job succeeds; a file of broken syntax is chunked like the core chunks it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { applyMigrations, coreChunks, keywordIndexIds, keywordIndexTotal, makeTarGz, sleep, startEdgerag, startHashEmbedder } from './harness.mjs';

const summary = { injected: 0, completed: 0, lost: 0, duplicated: 0, checked: 0 };

/**
 * Embedder gate in front of the hash embedder: `pass(n)` forwards the next `n` requests and holds
 * the rest (until `open()`), `down()` answers 500 until `open()`. Failures are timestamped.
 */
async function startGate(target) {
  let mode = 'open';
  let budget = 0;
  const stats = { seen: 0, held: 0, failed: 0, failedAt: [] };
  const server = createServer(async (req, res) => {
    const body = [];
    for await (const c of req) body.push(c);
    stats.seen++;
    if (mode === 'down') {
      stats.failed++;
      stats.failedAt.push(Date.now());
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"embedder down (injected)"}}');
      return;
    }
    if (mode === 'pass' && budget-- <= 0) {
      stats.held++;
      return; // never answered: the worker is killed while it waits
    }
    try {
      const up = await fetch(`${target}${req.url.replace(/^\/v1/, '')}`, {
        method: req.method, headers: { 'content-type': 'application/json' }, body: Buffer.concat(body),
      });
      res.writeHead(up.status, { 'content-type': 'application/json' }).end(Buffer.from(await up.arrayBuffer()));
    } catch (e) {
      res.writeHead(502).end(String(e));
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    stats,
    pass: (n) => { mode = 'pass'; budget = n; },
    down: () => { mode = 'down'; },
    open: () => { mode = 'open'; },
    stop: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

async function until(what, check, { timeoutMs = 60_000, everyMs = 150 } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

async function upload(target, repo, files) {
  const r = await target.request('POST', `/v1/repos/${repo}/files`, { body: { files } });
  assert.equal(r.status, 202, r.text);
  return r.body.job.id;
}

const ids = async (sql, ns) => (await er.d1(sql, ns)).map((r) => r.id);

/**
 * The namespace's chunks, vectors and FTS rows against the core's chunks of `files` (the files the
 * namespace should hold now). Lost: an expected chunk missing from `chunks` or from the vectors.
 * Duplicated: a row more than once, or a row the core does not produce (stale or stray).
 */
async function checkExact(ns, files) {
  const expected = new Set((await coreChunks(files)).map((c) => c.id));
  assert.ok(expected.size > 0, 'the files give chunks');
  const chunks = await ids('SELECT id FROM chunks WHERE namespace = ?', ns);
  const vectors = await ids('SELECT id FROM local_vectors WHERE namespace = ?', ns);
  const fts = (await keywordIndexIds(er, ns)).length;
  let lost = 0;
  let duplicated = 0;
  for (const rows of [chunks, vectors]) {
    const seen = new Set(rows);
    lost += [...expected].filter((id) => !seen.has(id)).length;
    duplicated += rows.length - seen.size + [...seen].filter((id) => !expected.has(id)).length;
  }
  duplicated += Math.abs(fts - chunks.length);
  summary.lost += lost;
  summary.duplicated += duplicated;
  summary.checked += expected.size;
  assert.deepEqual([...chunks].sort(), [...expected].sort(), `${ns}: chunks are the core's`);
  assert.deepEqual([...vectors].sort(), [...expected].sort(), `${ns}: one vector per chunk`);
  assert.equal(fts, chunks.length, `${ns}: one FTS row per chunk`);
  return expected.size;
}

async function succeeded(target, id) {
  const job = await target.waitForJob(id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  summary.completed++;
  return job;
}

let embed;
let gate;
let dir;
let er;

before(async () => {
  embed = await startHashEmbedder();
  gate = await startGate(embed.url);
  dir = mkdtempSync(join(tmpdir(), 'edgerag-faults-'));
  await applyMigrations(dir);
});

after(async () => {
  await er?.stop();
  await gate?.stop();
  await embed?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a worker SIGKILLed mid-ingestion and restarted: the job resumes and completes with exact counts', async () => {
  const files = Array.from({ length: 10 }, (_, i) => ({
    path: i % 2 ? `src/mod${i}.py` : `docs/page${i}.md`,
    content: i % 2
      ? `def handler_${i}(event):\n    """Handle event ${i}."""\n    return event.get("v${i}")\n`
      : `# Page ${i}\n\nWhat page ${i} is about.\n\n## Details\n\nMore about topic ${i}.\n`,
  }));
  const first = await startEdgerag({ vars: { OPENAI_BASE_URL: gate.url, FILES_PER_MESSAGE: '2' }, persistDir: dir });
  er = first;
  gate.pass(2);
  const id = await upload(first, 'acme/killed', files);
  // Mid-ingestion: some files indexed, an embed request hanging.
  const partial = await until('some chunks indexed and an embed request held', async () => {
    const [{ n }] = await first.d1('SELECT COUNT(*) AS n FROM chunks WHERE namespace = ?', 'repo:acme/killed');
    return n > 0 && gate.stats.held > 0 && n;
  });
  await first.kill();
  summary.injected++;
  gate.open();

  er = await startEdgerag({ vars: { OPENAI_BASE_URL: gate.url, RETRY_BASE_DELAY_SECONDS: '1', MAX_ATTEMPTS: '8' }, persistDir: dir });
  await sleep(2000);
  const stuck = (await er.request('GET', `/v1/jobs/${id}`)).body;
  assert.equal(stuck.status, 'RUNNING', 'the job waits for its lost messages');
  const core = await coreChunks(files);
  const expectedChunks = core.length;
  assert.ok(partial < expectedChunks, `killed mid-ingestion (${partial} of ${expectedChunks} chunks indexed)`);
  // What the crash left is whole per file: each file row has exactly the core's chunks of that
  // file, and no chunk belongs to a file without its row.
  const crashed = await er.d1('SELECT path, chunk_count FROM files WHERE namespace = ? ORDER BY path', 'repo:acme/killed');
  assert.ok(crashed.length > 0 && crashed.length < files.length, `${crashed.length} of ${files.length} files indexed at the crash`);
  const byPath = Map.groupBy(await er.d1('SELECT id, path FROM chunks WHERE namespace = ?', 'repo:acme/killed'), (c) => c.path);
  assert.deepEqual([...byPath.keys()].sort(), crashed.map((f) => f.path), 'no chunks of a file without its row');
  for (const f of crashed) {
    const want = core.filter((c) => c.path === f.path).map((c) => c.id).sort();
    assert.deepEqual(byPath.get(f.path).map((c) => c.id).sort(), want, `${f.path}: whole at the crash`);
    assert.equal(f.chunk_count, want.length);
  }

  await er.scheduled(Date.now() + 5 * 60_000); // JOB_RESUME_SECONDS (120) of quiet have passed
  const job = await succeeded(er, id);
  assert.match(er.logs(), /job_resumed/);
  assert.deepEqual(job.files, { total: 10, done: 10, added: 10, changed: 0, unchanged: 0, deleted: 0, skipped: 0 });
  assert.equal(job.chunks.indexed, expectedChunks);
  assert.equal(await checkExact('repo:acme/killed', files), expectedChunks);
  const ns = await er.d1('SELECT status, file_count, chunk_count FROM namespaces WHERE id = ?', 'repo:acme/killed');
  assert.deepEqual(ns, [{ status: 'READY', file_count: 10, chunk_count: expectedChunks }]);
});

test('a D1 batch failing mid-batch in the index stage: retried, and meanwhile search sees only the old index', async () => {
  const ns = 'repo:acme/d1fault';
  const v1 = [
    { path: 'keep.md', content: '# Keep\n\nThe unchanged page about lighthouses.\n' },
    { path: 'edit.md', content: '# Edit\n\nThe first version mentions walruses.\n' },
  ];
  await succeeded(er, await upload(er, 'acme/d1fault', v1));
  const snapshot = async () => ({
    chunks: await er.d1('SELECT id, path, text, updated_at FROM chunks WHERE namespace = ? ORDER BY id', ns),
    files: await er.d1('SELECT path, content_hash, chunk_count FROM files WHERE namespace = ? ORDER BY path', ns),
    fts: await keywordIndexIds(er, ns),
  });
  const old = await snapshot();
  const arm = async (failures) => {
    const r = await er.request('POST', '/__test/faults/index-batch', { body: failures === undefined ? { namespace: ns } : { namespace: ns, failures } });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };
  await arm(1000); // fails until disarmed

  const v2 = [
    { path: 'edit.md', content: '# Edit\n\nThe second version mentions narwhals.\n' },
    { path: 'new.md', content: '# New\n\nA brand new page about zeppelins.\n' },
  ];
  const id = await upload(er, 'acme/d1fault', v2);
  await until('two injected D1 batch failures', async () => (await arm()).injected >= 2);
  const failing = (await er.request('GET', `/v1/jobs/${id}`)).body;
  assert.equal(failing.status, 'RUNNING');
  assert.equal(failing.lastError.stage, 'index');
  assert.equal(failing.lastError.code, 'STORE_ERROR');
  assert.match(failing.lastError.message, /integer overflow/);

  // The batch rolled back whole: D1 still describes the old files, row for row.
  assert.deepEqual(await snapshot(), old, 'nothing of the failed batch is in chunks, files or FTS');
  // Vectors of the new chunks may be written ahead (step 1), but search only returns chunks
  // hydrated from D1: neither new text nor a chunk of the new file is visible.
  const oldIds = new Set(old.chunks.map((c) => c.id));
  for (const rawQuery of ['narwhals', 'zeppelins brand new page', 'walruses']) {
    const r = await er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'd1fault', rawQuery } });
    assert.equal(r.status, 200, r.text);
    for (const m of r.body.matches) {
      assert.ok(oldIds.has(m.metadata.chunkId), `search returned ${m.metadata.chunkId} (${m.path}) that is not in the old index`);
      assert.doesNotMatch(m.snippet, /narwhals|zeppelins/);
    }
    if (rawQuery === 'walruses') assert.ok(r.body.matches.some((m) => m.path === 'edit.md'), 'the old version is still found');
  }

  // What the vector index holds meanwhile: the index stage writes the new vectors before D1 (not
  // searchable: search hydrates from D1) and deletes a changed file's stale vectors only after the
  // D1 batch commits, so every old chunk keeps its vector and vector search still finds the old
  // version of the changed file.
  const vectors = new Set(await ids('SELECT id FROM local_vectors WHERE namespace = ?', ns));
  const newIds = new Set((await coreChunks(v2)).map((c) => c.id));
  const ahead = [...vectors].filter((v) => !oldIds.has(v));
  assert.ok(ahead.length > 0, 'the failing attempt got as far as the vector index');
  assert.deepEqual(ahead.filter((v) => !newIds.has(v)), [], 'every vector without a chunk is of the new version');
  assert.deepEqual([...oldIds].filter((c) => !vectors.has(c)), [], 'every old chunk keeps its vector while the batch fails');
  assert.deepEqual(await er.d1('SELECT id FROM pending_vector_deletes WHERE namespace = ?', ns), [],
    'no vector delete is staged by a batch that rolled back');
  const oldEdit = old.chunks.find((c) => c.path === 'edit.md');
  const nearest = await er.request('POST', '/__test/vectors/nearest', { body: { namespace: ns, text: oldEdit.text, topK: 3 } });
  assert.equal(nearest.status, 200, nearest.text);
  assert.equal(nearest.body.matches[0]?.id, oldEdit.id,
    `vector search finds the old version: ${JSON.stringify(nearest.body.matches.map((m) => [m.id, m.metadata.path, m.score]))}`);
  console.log(`during the D1 fault: ${ahead.length} vectors written ahead (not searchable), all ${oldIds.size} old chunks keep their vectors`);

  const { injected } = await arm(0);
  summary.injected += injected;
  const job = await succeeded(er, id);
  assert.ok(job.attempt > injected, `retried after ${injected} failures (attempt ${job.attempt})`);
  assert.deepEqual({ added: job.files.added, changed: job.files.changed }, { added: 1, changed: 1 });
  await checkExact(ns, [v1[0], ...v2]);
  assert.deepEqual(await er.d1('SELECT id FROM pending_vector_deletes WHERE namespace = ?', ns), [],
    'the stale vectors were deleted after the batch committed and their staging rows dropped');
});

test('the embedder down for a while: retried with backoff, the job succeeds when it is back', async () => {
  const files = [
    { path: 'a.md', content: '# Alpha\n\nThe first file.\n' },
    { path: 'src/b.js', content: 'export function beta(x) {\n  return x + 1;\n}\n' },
  ];
  gate.down();
  const failedBefore = gate.stats.failed;
  const id = await upload(er, 'acme/embedderdown', files);
  await until('three failed embed requests', async () => gate.stats.failed - failedBefore >= 3, { timeoutMs: 90_000 });
  const down = (await er.request('GET', `/v1/jobs/${id}`)).body;
  assert.equal(down.status, 'RUNNING');
  assert.equal(down.lastError.code, 'EMBED_BACKEND');
  assert.equal(down.lastError.stage, 'embed');
  gate.open();
  const failures = gate.stats.failedAt.slice(failedBefore);
  summary.injected += failures.length;
  // RETRY_BASE_DELAY_SECONDS = 1: the n-th retry waits 2^(n-1) s.
  const gaps = failures.slice(1).map((t, i) => t - failures[i]);
  gaps.slice(0, 2).forEach((gap, i) => assert.ok(gap >= 900 * 2 ** i, `retry ${i + 1} waited ${gap} ms, expected ≥ ${1000 * 2 ** i} ms`));

  const job = await succeeded(er, id);
  assert.equal(job.attempt, failures.length + 1, 'one delivery per failure, then the one that worked');
  assert.equal(job.lastError.code, 'EMBED_BACKEND', 'the last retried error is kept');
  await checkExact('repo:acme/embedderdown', files);
});

test('files that cannot be chunked are skipped with a reason and the job succeeds', async () => {
  const good = [
    { path: 'README.md', content: '# Archive\n\nA project with some bad files.\n' },
    { path: 'src/ok.py', content: 'def ok():\n    return "fine"\n' },
    // Not valid Python: the chunker must still produce the core's chunks, not crash.
    { path: 'src/broken.py', content: 'def broken(:\n    return )))\nclass {\n  ]]] ~~ \u00e9t\u00e9\n' },
  ];
  const bad = [
    { path: 'data/latin1.txt', content: Buffer.from('caf\xe9 cr\xe8me br\xfbl\xe9e\n', 'latin1') },
    { path: 'data/blob.txt', content: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2, 0, 0xff, 0x10]) },
  ];
  const tgz = makeTarGz([...good, ...bad]);
  const r = await er.request('POST', '/v1/repos/acme/unchunkable/files', { body: tgz, headers: { 'content-type': 'application/gzip' } });
  assert.equal(r.status, 202, r.text);
  const job = await succeeded(er, r.body.job.id);
  summary.injected += bad.length;
  assert.deepEqual(job.skippedByReason, { BINARY_FILE: 1, INVALID_UTF8: 1 });
  assert.deepEqual(
    job.skipped.map((s) => [s.path, s.reason]).sort(),
    [['data/blob.txt', 'BINARY_FILE'], ['data/latin1.txt', 'INVALID_UTF8']],
  );
  assert.deepEqual({ added: job.files.added, skipped: job.files.skipped }, { added: 3, skipped: 2 });
  await checkExact('repo:acme/unchunkable', good);
  const indexed = await er.d1('SELECT path FROM files WHERE namespace = ? ORDER BY path', 'repo:acme/unchunkable');
  assert.deepEqual(indexed.map((f) => f.path), ['README.md', 'src/broken.py', 'src/ok.py']);
});

test('summary: every fault injected, no chunk lost or duplicated', async () => {
  const fts = await keywordIndexTotal(er);
  const [{ n: all }] = await er.d1('SELECT COUNT(*) AS n FROM chunks');
  assert.equal(fts, all, 'one FTS row per chunk in the whole database');
  console.log(`faults: injected ${summary.injected}, jobs completed ${summary.completed}, chunks lost ${summary.lost}, duplicated ${summary.duplicated} (${summary.checked} chunks checked)`);
  assert.ok(summary.injected >= 8, `faults injected: ${summary.injected}`);
  assert.equal(summary.completed, 5);
  assert.ok(summary.checked > 0);
  assert.equal(summary.lost, 0);
  assert.equal(summary.duplicated, 0);
});
