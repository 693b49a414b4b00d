// Upload → pipeline → D1 (chunks, FTS, files, vectors, runs); incremental re-indexing; deletes;
// concurrent requests joining one job. One worker instance, deterministic test embedder.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertSchema, coreChunks, keywordIndexIds, keywordIndexTotal, keywordMatches, startEdgerag, startHashEmbedder } from './harness.mjs';

const FILES = [
  {
    path: 'README.md',
    content: '# Demo\n\nIntro paragraph about the quantum flux capacitor.\n\n## Usage\n\nRun `demo --fast`.\n\n## License\n\nMIT\n',
  },
  {
    path: 'src/user_service.ts',
    content:
      'export interface User {\n  id: string;\n  name: string;\n}\n\n/** Loads a user. */\nexport async function getUserData(id: string): Promise<User> {\n  return { id, name: "zebra" };\n}\n\nexport class UserCache {\n  private items = new Map<string, User>();\n  put(u: User) {\n    this.items.set(u.id, u);\n  }\n}\n',
  },
  { path: 'src/lib.rs', content: 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub struct Point {\n    x: f64,\n}\n' },
  { path: 'notes/todo.txt', content: Array.from({ length: 250 }, (_, i) => `line ${i} of the notes`).join('\n') + '\n' },
  { path: 'empty.txt', content: '' },
];

let embed;
let er;

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

async function upload(repo, body) {
  const r = await er.request('POST', `/v1/repos/${repo}/files`, { body });
  assert.equal(r.status, 202, r.text);
  await assertSchema('job-accepted', r.body);
  return r.body;
}

const ns = (repo) => `repo:${repo}`;

async function storedChunks(repo) {
  return er.d1('SELECT * FROM chunks WHERE namespace = ? ORDER BY path, chunk_index', ns(repo));
}

/** FTS rows, vectors and files agree with the chunks table (no stale or missing rows). */
async function assertConsistent(repo) {
  const chunks = await storedChunks(repo);
  const ids = chunks.map((c) => c.id).sort();
  const vectors = (await er.d1('SELECT id, dims FROM local_vectors WHERE namespace = ? ORDER BY id', ns(repo))).map((v) => v.id);
  assert.deepEqual(vectors, ids, 'exactly one vector per stored chunk');
  assert.deepEqual(await keywordIndexIds(er, ns(repo)), ids, 'exactly one FTS row per stored chunk, in its namespace\'s index');
  const ftsTotal = await keywordIndexTotal(er);
  const [{ n: chunkTotal }] = await er.d1('SELECT COUNT(*) AS n FROM chunks');
  assert.equal(ftsTotal, chunkTotal, 'FTS has no orphan rows');
  const files = await er.d1('SELECT path, chunk_count FROM files WHERE namespace = ? ORDER BY path', ns(repo));
  const perPath = {};
  for (const c of chunks) perPath[c.path] = (perPath[c.path] ?? 0) + 1;
  for (const f of files) assert.equal(f.chunk_count, perPath[f.path] ?? 0, `chunk_count of ${f.path}`);
  return { chunks, files };
}

describe('upload → SUCCEEDED → D1 matches the core', () => {
  test('chunks, FTS, vectors, files and the run record', async () => {
    const files = [...FILES, { path: 'node_modules/pkg/index.js', content: 'module.exports = 1;\n' }, { path: '../escape.txt', content: 'x' }];
    const accepted = await upload('acme/demo', { files, ref: 'v1' });
    assert.equal(accepted.reused, false);
    assert.equal(accepted.received, files.length);
    assert.deepEqual(
      { added: accepted.staged.added, skipped: accepted.staged.skipped, changed: accepted.staged.changed },
      { added: FILES.length, skipped: 2, changed: 0 },
    );
    assert.deepEqual(
      accepted.skipped.map((s) => [s.path, s.reason]).sort(),
      [['../escape.txt', 'PATH_TRAVERSAL'], ['node_modules/pkg/index.js', 'IGNORED_DIR']],
    );

    const job = await er.waitForJob(accepted.job.id);
    await assertSchema('job', job);
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
    assert.equal(job.progress, 100);
    assert.deepEqual(job.files, { total: 7, done: 7, added: 5, changed: 0, unchanged: 0, deleted: 0, skipped: 2 });
    assert.deepEqual(job.skippedByReason, { IGNORED_DIR: 1, PATH_TRAVERSAL: 1 });

    // Same chunks as the native core (ids, spans, text, metadata).
    const expected = await coreChunks(FILES, { symbolIds: true });
    const { chunks } = await assertConsistent('acme/demo');
    assert.equal(chunks.length, expected.length);
    assert.equal(job.chunks.indexed, expected.length);
    const byId = new Map(chunks.map((c) => [c.id, c]));
    for (const e of expected) {
      const row = byId.get(e.id);
      assert.ok(row, `chunk ${e.path}#${e.chunkIndex} (${e.id}) stored`);
      assert.equal(row.text, e.text);
      assert.equal(row.text_hash, e.textHash);
      assert.equal(row.path, e.path);
      assert.equal(row.type, e.type);
      assert.equal(row.language, e.language);
      assert.deepEqual([row.start_line, row.end_line, row.start_byte, row.end_byte], [e.startLine, e.endLine, e.startByte, e.endByte]);
      assert.equal(row.chunk_index, e.chunkIndex);
      assert.equal(row.token_count, e.tokenCount);
      assert.deepEqual(JSON.parse(row.keywords), e.keywords);
      assert.deepEqual(JSON.parse(row.metadata), e.metadata);
      assert.equal(row.symbol_name, e.metadata.symbolName ?? null);
      assert.equal(row.span_hash, e.metadata.spanHash);
      assert.equal(row.version, e.version);
      assert.equal(row.embedded, 1);
      assert.ok(row.search_text.startsWith(e.text), 'search_text starts with the chunk text');
    }

    // FTS finds words, split identifiers and path words.
    const match = async (q) =>
      keywordMatches(er, ns('acme/demo'), q);
    assert.deepEqual(await match('capacitor'), ['README.md']);
    assert.ok((await match('"user data"')).includes('src/user_service.ts'), 'getUserData is split into user data');
    assert.ok((await match('zebra')).every((p) => p === 'src/user_service.ts'));

    // Vectors carry the embedder's dimension; files rows describe what was indexed.
    const dims = await er.d1('SELECT DISTINCT dims FROM local_vectors WHERE namespace = ?', ns('acme/demo'));
    assert.deepEqual(dims.map((d) => d.dims), [384]);
    const fileRows = await er.d1('SELECT path, size, language, content_hash FROM files WHERE namespace = ? ORDER BY path', ns('acme/demo'));
    assert.deepEqual(fileRows.map((f) => f.path), FILES.map((f) => f.path).sort());
    for (const f of fileRows) {
      const src = FILES.find((x) => x.path === f.path);
      assert.equal(f.size, Buffer.byteLength(src.content));
      assert.match(f.content_hash, /^[0-9a-f]{64}$/);
    }
    assert.equal(fileRows.find((f) => f.path === 'src/lib.rs').language, 'rust');

    // One run record, the namespace READY, staging cleaned up.
    const runs = await er.d1('SELECT * FROM index_runs WHERE job_id = ?', job.id);
    assert.equal(runs.length, 1);
    assert.equal(runs[0].processed, 7);
    assert.equal(runs[0].written_chunks, expected.length);
    assert.ok(runs[0].pages >= 3, 'chunk, embed and index messages were handled');
    assert.deepEqual(await er.d1('SELECT COUNT(*) AS n FROM job_chunks WHERE job_id = ?', job.id), [{ n: 0 }]);
    assert.deepEqual(await er.d1('SELECT COUNT(*) AS n FROM job_files WHERE job_id = ? AND content IS NOT NULL', job.id), [{ n: 0 }]);

    const status = await er.request('GET', '/v1/repos/acme/demo/status', { token: null });
    assert.equal(status.status, 200, status.text);
    await assertSchema('repo-status', status.body);
    assert.equal(status.body.ready, true);
    assert.equal(status.body.status, 'SUCCEEDED');
    assert.equal(status.body.repo.fileCount, FILES.length);
    assert.equal(status.body.repo.chunkCount, expected.length);
    assert.equal(status.body.repo.ref, 'v1');
    assert.equal(status.body.embedder.model, 'all-MiniLM-L6-v2');
    assert.equal(status.body.vectorIndex, 'local');
    assert.equal(status.body.recentJobs[0].id, job.id);

    const list = await er.request('GET', '/v1/repos', { token: null });
    await assertSchema('repos-response', list.body);
    assert.ok(list.body.repos.some((r) => r.namespace === 'repo:acme/demo' && r.ready));
  });

  test('re-index: one changed, one deleted, one unchanged → exact counters, no stale rows', async () => {
    const repo = 'acme/reindex';
    const a = { path: 'a.md', content: '# A\n\nalpha stays the same\n' };
    const b1 = { path: 'b.md', content: '# B\n\nbravo first version\n\n## Part two\n\nsecond section of bravo\n' };
    const c = { path: 'c.md', content: '# C\n\ncharlie will be deleted\n' };
    const first = await er.waitForJob((await upload(repo, { files: [a, b1, c] })).job.id);
    assert.equal(first.status, 'SUCCEEDED');
    const before = await assertConsistent(repo);
    const oldB = before.chunks.filter((x) => x.path === 'b.md').map((x) => x.id);
    const oldA = before.chunks.filter((x) => x.path === 'a.md').map((x) => ({ id: x.id, updated_at: x.updated_at }));

    const inputsBefore = embed.stats.inputs;
    const b2 = { path: 'b.md', content: '# B\n\nbravo SECOND version\n\n## Part two\n\nsecond section of bravo\n' };
    const accepted = await upload(repo, { files: [a, b2], replace: true });
    assert.deepEqual(accepted.staged, { total: 3, done: 1, added: 0, changed: 1, unchanged: 1, deleted: 1, skipped: 0 });
    const job = await er.waitForJob(accepted.job.id);
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
    assert.deepEqual(job.files, { total: 3, done: 3, added: 0, changed: 1, unchanged: 1, deleted: 1, skipped: 0 });

    const afterState = await assertConsistent(repo);
    const expected = await coreChunks([a, b2], { symbolIds: true });
    assert.deepEqual(afterState.chunks.map((x) => x.id).sort(), expected.map((x) => x.id).sort(), 'exactly the new chunks');
    assert.ok(!afterState.chunks.some((x) => x.path === 'c.md'), 'deleted file has no chunks');
    assert.deepEqual(afterState.files.map((f) => f.path), ['a.md', 'b.md']);
    const newB = afterState.chunks.filter((x) => x.path === 'b.md').map((x) => x.id);
    const stale = oldB.filter((id) => !newB.includes(id));
    assert.ok(stale.length >= 1, 'the changed section got a new id');
    assert.deepEqual(await er.d1(`SELECT id FROM local_vectors WHERE id IN (${stale.map(() => '?').join(',')})`, ...stale), []);
    // The unchanged file was not touched, and only the changed section was sent to the embedder
    // (the unchanged section of b.md is served from the embedding cache).
    const aNow = afterState.chunks.filter((x) => x.path === 'a.md').map((x) => ({ id: x.id, updated_at: x.updated_at }));
    assert.deepEqual(aNow, oldA);
    assert.equal(embed.stats.inputs - inputsBefore, 1, 'one new text embedded');

    // The same content again: nothing to do, the job completes in the request itself.
    const again = await upload(repo, { files: [a, b2], replace: true });
    assert.deepEqual(again.staged, { total: 2, done: 2, added: 0, changed: 0, unchanged: 2, deleted: 0, skipped: 0 });
    assert.equal(again.job.status, 'SUCCEEDED');
  });

  test('DELETE files and DELETE repo remove everything of the namespace only', async () => {
    const keep = 'acme/keep';
    const gone = 'acme/gone';
    await er.waitForJob((await upload(keep, { files: [{ path: 'k.md', content: '# Keep\n\nkept\n' }] })).job.id);
    const files = [
      { path: 'x.md', content: '# X\n\nxray\n' },
      { path: 'y.md', content: '# Y\n\nyankee\n' },
    ];
    await er.waitForJob((await upload(gone, { files })).job.id);

    const del = await er.request('DELETE', `/v1/repos/${gone}/files`, { body: { paths: ['x.md', 'missing.md', '../etc/passwd'] } });
    assert.equal(del.status, 202, del.text);
    await assertSchema('job-accepted', del.body);
    assert.deepEqual(del.body.skipped.map((s) => s.reason).sort(), ['NOT_FOUND', 'PATH_TRAVERSAL']);
    const job = await er.waitForJob(del.body.job.id);
    assert.equal(job.status, 'SUCCEEDED');
    assert.equal(job.files.deleted, 1);
    const state = await assertConsistent(gone);
    assert.deepEqual([...new Set(state.chunks.map((c) => c.path))], ['y.md']);

    const keepBefore = await storedChunks(keep);
    const r = await er.request('DELETE', `/v1/repos/${gone}`);
    assert.equal(r.status, 200, r.text);
    await assertSchema('delete-repo-response', r.body);
    assert.deepEqual(r.body.deleted, { files: 1, chunks: state.chunks.length, vectors: state.chunks.length, jobs: 2 });
    for (const table of ['chunks', 'files', 'local_vectors', 'repo_rag_index_job', 'job_files', 'index_runs']) {
      assert.deepEqual(await er.d1(`SELECT COUNT(*) AS n FROM ${table} WHERE namespace = ?`, ns(gone)), [{ n: 0 }], table);
    }
    assert.deepEqual(await storedChunks(keep), keepBefore, 'another namespace is untouched');
    await assertConsistent(keep);
    const status = await er.request('GET', `/v1/repos/${gone}/status`);
    assert.equal(status.status, 404);
    assert.equal(status.body.error.code, 'REPO_NOT_FOUND');
  });

  test('concurrent uploads to one repository join one job', async () => {
    const repo = 'acme/concurrent';
    const batch = (i) => ({ files: Array.from({ length: 5 }, (_, j) => ({ path: `f${i}_${j}.md`, content: `# F${i} ${j}\n\nbody ${i} ${j}\n` })) });
    const results = await Promise.all([1, 2, 3].map((i) => upload(repo, batch(i))));
    const ids = new Set(results.map((r) => r.job.id));
    // Requests that arrive while a job is QUEUED/RUNNING join it; one that arrives after it
    // finished gets a fresh job. Either way every file ends up indexed exactly once.
    assert.ok(results.some((r) => r.reused), 'at least one request joined an active job');
    for (const id of ids) assert.equal((await er.waitForJob(id)).status, 'SUCCEEDED');
    const { files } = await assertConsistent(repo);
    assert.equal(files.length, 15);
    const [{ n }] = await er.d1("SELECT COUNT(*) AS n FROM repo_rag_index_job WHERE namespace = ? AND status IN ('QUEUED','RUNNING')", ns(repo));
    assert.equal(n, 0);
  });

  test('a tar.gz upload is indexed like JSON', async () => {
    const { makeTarGz } = await import('./harness.mjs');
    const body = makeTarGz([
      { path: 'docs/', type: 'dir' },
      { path: 'docs/guide.md', content: '# Guide\n\nhow to use the thing\n' },
      { path: './src/main.py', content: 'def main():\n    print("hi")\n' },
      { path: 'link', type: 'symlink', target: '/etc/passwd' },
      { path: 'docs/draft.md', content: '# Draft\n' },
      { path: 'docs/.gitignore', content: 'draft.md\n' },
    ]);
    const r = await er.request('POST', '/v1/repos/acme/tarball/files?ref=abc123', { body, headers: { 'content-type': 'application/gzip' } });
    assert.equal(r.status, 202, r.text);
    await assertSchema('job-accepted', r.body);
    assert.deepEqual(r.body.skipped, [
      { path: 'link', reason: 'LINK' },
      { path: 'docs/draft.md', reason: 'IGNORED_PATTERN' },
    ]);
    const job = await er.waitForJob(r.body.job.id);
    assert.equal(job.status, 'SUCCEEDED');
    const { files } = await assertConsistent('acme/tarball');
    assert.deepEqual(files.map((f) => f.path), ['docs/.gitignore', 'docs/guide.md', 'src/main.py']);
  });
});
