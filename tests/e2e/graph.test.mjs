// The code graph in the worker: the chunk stage stores each file's symbols and file-local edges,
// the job's completion resolves edges across files, and re-indexing leaves nothing stale.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { startEdgerag, startHashEmbedder } from './harness.mjs';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'graph', 'python', 'app');
const FILES = readdirSync(FIXTURE)
  .filter((f) => f.endsWith('.py'))
  .sort()
  .map((f) => ({ path: `app/${f}`, content: readFileSync(join(FIXTURE, f), 'utf8') }));
const REPO = 'acme/graph';
const NS = `repo:${REPO}`;

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

async function index(body) {
  const r = await er.request('POST', `/v1/repos/${REPO}/files`, { body });
  assert.equal(r.status, 202, r.text);
  const job = await er.waitForJob(r.body.job.id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
}

const node = async (fqn) => er.d1('SELECT * FROM graph_nodes WHERE namespace = ? AND fqn = ?', NS, fqn);

/** CALLS edges from the node with fqn `src`, as `calleeFqn` (or `?name` when external). */
async function callees(src) {
  const rows = await er.d1(
    `SELECT d.fqn AS dst, e.dst_name, e.resolution FROM graph_edges e
       JOIN graph_nodes s ON s.namespace = e.namespace AND s.id = e.src
       LEFT JOIN graph_nodes d ON d.namespace = e.namespace AND d.id = e.dst
     WHERE e.namespace = ? AND e.kind = 'CALLS' AND s.fqn = ? ORDER BY e.line`,
    NS,
    src,
  );
  return rows.map((r) => r.dst ?? `?${r.dst_name}`);
}

/** Every edge endpoint is a stored node of the namespace (or external): nothing dangles. */
async function assertNoDanglingEdges() {
  const dangling = await er.d1(
    `SELECT e.* FROM graph_edges e WHERE e.namespace = ?1 AND (
       NOT EXISTS (SELECT 1 FROM graph_nodes n WHERE n.namespace = ?1 AND n.id = e.src)
       OR (e.dst IS NOT NULL AND NOT EXISTS (SELECT 1 FROM graph_nodes n WHERE n.namespace = ?1 AND n.id = e.dst)))`,
    NS,
  );
  assert.deepEqual(dangling, [], 'every edge starts and ends at a stored node');
}

describe('code graph tables', () => {
  test('indexing a Python project stores its symbols and resolves calls across files', async () => {
    await index({ files: FILES });
    const [slugify] = await node('app.util.slugify');
    assert.equal(slugify.kind, 'FUNCTION');
    assert.equal(slugify.path, 'app/util.py');
    assert.equal(slugify.doc, 'Lowercase `text` and join its words with dashes.');
    assert.equal(slugify.start_line, 7);
    // Same file, through an import, and a method through `self`.
    assert.deepEqual(await callees('app.legacy.migrate'), ['app.legacy.slugify']);
    assert.deepEqual(await callees('app.routes.import_all'), ['app.legacy.migrate']);
    assert.deepEqual(await callees('app.models.User.__init__'), ['app.util.slugify']);
    assert.deepEqual(await callees('app.models.Base.save'), ['app.models.Base.validate']);
    const files = await er.d1('SELECT path FROM graph_files WHERE namespace = ? ORDER BY path', NS);
    assert.deepEqual(files.map((f) => f.path), FILES.map((f) => f.path));
    await assertNoDanglingEdges();
  });

  test('moving a module re-resolves the unchanged caller and leaves no stale node or edge', async () => {
    const legacy = FILES.find((f) => f.path === 'app/legacy.py');
    const moved = { path: 'app/legacy/__init__.py', content: legacy.content };
    await index({ files: [...FILES.filter((f) => f !== legacy), moved], replace: true });
    const stale = await er.d1('SELECT fqn FROM graph_nodes WHERE namespace = ? AND path = ?', NS, 'app/legacy.py');
    assert.deepEqual(stale, [], 'the deleted file has no nodes');
    const staleEdges = await er.d1('SELECT * FROM graph_edges WHERE namespace = ? AND path = ?', NS, 'app/legacy.py');
    assert.deepEqual(staleEdges, [], 'the deleted file has no edges');
    const [migrate] = await node('app.legacy.migrate');
    assert.equal(migrate.path, 'app/legacy/__init__.py');
    const edges = await er.d1(
      `SELECT e.dst FROM graph_edges e JOIN graph_nodes s ON s.namespace = e.namespace AND s.id = e.src
       WHERE e.namespace = ? AND e.kind = 'CALLS' AND s.fqn = 'app.routes.import_all'`,
      NS,
    );
    assert.deepEqual(edges.map((e) => e.dst), [migrate.id], 'the unchanged caller points at the moved definition');
    await assertNoDanglingEdges();
  });

  test('re-indexing one file rewrites only the edges whose resolution changed', async () => {
    const rowids = async (path) =>
      (await er.d1('SELECT rowid FROM graph_edges WHERE namespace = ? AND path = ? ORDER BY rowid', NS, path)).map((r) => r.rowid);
    const current = await er.d1('SELECT path FROM graph_files WHERE namespace = ? ORDER BY path', NS);
    const before = Object.fromEntries(await Promise.all(current.map(async ({ path }) => [path, await rowids(path)])));
    const routes = FILES.find((f) => f.path === 'app/routes.py');
    const edited = { path: routes.path, content: `${routes.content}\n# a comment changes no other file's edges\n` };
    await er.indexFiles(REPO, [edited]);
    const others = Object.keys(before).filter((p) => p !== routes.path);
    assert.ok(others.length >= 3 && others.every((p) => before[p].length > 0), JSON.stringify(before));
    for (const path of others) assert.deepEqual(await rowids(path), before[path], `${path}: its edges were not rewritten`);
    assert.equal((await rowids(routes.path)).length, before[routes.path].length, 'the changed file keeps its edges');
    assert.deepEqual(await callees('app.routes.import_all'), ['app.legacy.migrate']);
    const hashes = await er.d1('SELECT count(*) AS n FROM graph_files WHERE namespace = ? AND edges_hash IS NULL', NS);
    assert.equal(hashes[0].n, 0, 'every file records the edges resolution wrote for it');
    const resolved = er.logs().split('\n').filter((l) => l.includes('graph_resolved')).at(-1) ?? '';
    assert.match(resolved, /rewrittenFiles[^0-9]*1\b/, resolved);
    await assertNoDanglingEdges();
  });

  test('removing a definition re-resolves the calls into it and no edge keeps the old target', async () => {
    const util = FILES.find((f) => f.path === 'app/util.py');
    const edited = { path: util.path, content: util.content.replace('def slugify(text):', 'def make_slug(text):') };
    const legacy = FILES.find((f) => f.path === 'app/legacy.py');
    const files = [...FILES.filter((f) => f !== util && f !== legacy), edited, { path: 'app/legacy/__init__.py', content: legacy.content }];
    await index({ files, replace: true });
    assert.deepEqual(await node('app.util.slugify'), [], 'the old definition is gone');
    assert.equal((await node('app.util.make_slug')).length, 1);
    const calls = await callees('app.models.User.__init__');
    assert.equal(calls.length, 1);
    assert.notEqual(calls[0], 'app.util.slugify');
    await assertNoDanglingEdges();
  });
});
