// Namespaces spread over two D1 databases (`D1_BINDINGS="DB,DB_2"`): each repository's rows live
// in the one database the catalog assigns it, every read finds them there, global search and the
// repository list span both, and deleting a repository cleans only its database.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { assertSchema, startEdgerag, startHashEmbedder } from './harness.mjs';

const DATABASES = ['DB', 'DB_2'];
// Enough repositories that a hash placement uses both databases (checked below, not assumed).
const REPOS = ['north', 'south', 'east', 'west', 'up', 'down'].map((name) => ({ owner: 'multi', name }));
// Tables whose rows belong to one namespace, with their namespace column.
const TABLES = [
  ['namespaces', 'id'],
  ['files', 'namespace'],
  ['chunks', 'namespace'],
  ['repo_rag_index_job', 'namespace'],
  ['index_runs', 'namespace'],
  ['local_vectors', 'namespace'],
];

let embed;
let er;
const placed = new Map(); // "owner/name" → binding
const jobIds = new Map(); // "owner/name" → last job id

const ns = (r) => `repo:${r.owner}/${r.name}`;
const key = (r) => `${r.owner}/${r.name}`;

function files(r) {
  return [
    { path: 'README.md', content: `# ${r.name}\n\nThe quokka ledger of the ${r.name} warehouse keeps every parcel.\n` },
    { path: `src/${r.name}.py`, content: `def route_${r.name}_parcel(parcel):\n    """Send a parcel ${r.name}."""\n    return parcel\n` },
  ];
}

async function rowsIn(binding, r) {
  const counts = {};
  for (const [table, column] of TABLES) {
    const [row] = await er.d1In(binding, `SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = ?`, ns(r));
    counts[table] = row.n;
  }
  return counts;
}

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url }, databases: DATABASES });
  for (const r of REPOS) {
    const job = await er.indexFiles(key(r), files(r));
    jobIds.set(key(r), job.id);
  }
  const catalog = await er.d1In('DB', 'SELECT namespace, binding FROM namespace_databases');
  for (const row of catalog) placed.set(row.namespace.replace(/^repo:/, ''), row.binding);
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

describe('namespaces spread over several D1 databases', () => {
  test('the catalog assigns every repository one database, and both databases are used', () => {
    assert.deepEqual([...placed.keys()].sort(), REPOS.map(key).sort());
    assert.ok([...placed.values()].every((b) => DATABASES.includes(b)), JSON.stringify([...placed]));
    assert.deepEqual(new Set(placed.values()), new Set(DATABASES), `placement: ${JSON.stringify([...placed])}`);
  });

  test("a repository's rows are all in its database and none in the other", async () => {
    for (const r of REPOS) {
      const home = placed.get(key(r));
      const other = DATABASES.find((b) => b !== home);
      const here = await rowsIn(home, r);
      assert.equal(here.namespaces, 1, `${key(r)} in ${home}: ${JSON.stringify(here)}`);
      assert.equal(here.files, 2);
      assert.ok(here.chunks >= 2 && here.local_vectors === here.chunks, JSON.stringify(here));
      assert.ok(here.repo_rag_index_job >= 1 && here.index_runs >= 1, JSON.stringify(here));
      const there = await rowsIn(other, r);
      assert.ok(Object.values(there).every((n) => n === 0), `${key(r)} leaked into ${other}: ${JSON.stringify(there)}`);
    }
  });

  test('reads by repository, by job and across repositories find rows in either database', async () => {
    const list = await er.request('GET', '/v1/repos');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.repos.map((x) => `${x.owner}/${x.name}`), REPOS.map(key).sort());
    for (const r of REPOS) {
      const status = await er.request('GET', `/v1/repos/${key(r)}/status`);
      assert.equal(status.status, 200, status.text);
      await assertSchema('repo-status', status.body);
      assert.equal(status.body.ready, true);
      assert.equal(status.body.job.id, jobIds.get(key(r)));
      const job = await er.request('GET', `/v1/jobs/${jobIds.get(key(r))}`);
      assert.equal(job.status, 200, job.text);
      assert.equal(job.body.namespace, ns(r));
      const filesRes = await er.request('GET', `/v1/repos/${key(r)}/files`);
      assert.deepEqual(filesRes.body.files.map((f) => f.path).sort(), files(r).map((f) => f.path).sort());
    }
    const mcp = await er.request('POST', '/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'repo.rag_index_status', arguments: { repoOwner: 'multi', repoName: 'down' } } },
      headers: { accept: 'application/json, text/event-stream' },
    });
    assert.equal(mcp.body.result.isError, false, mcp.text);
    assert.equal(mcp.body.result.structuredContent.repo.namespace, 'repo:multi/down');
  });

  test('repository search and global search reach both databases', async () => {
    for (const r of REPOS) {
      const res = await er.request('POST', '/v1/search', { body: { owner: r.owner, name: r.name, rawQuery: `route_${r.name}_parcel` } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.matches[0].path, `src/${r.name}.py`, JSON.stringify(res.body.matches.map((m) => m.path)));
    }
    const global = await er.request('POST', '/v1/search/global', { body: { rawQuery: 'quokka ledger warehouse parcel', displayRepoOwner: 'all', displayRepoName: 'repos' } });
    assert.equal(global.status, 200, global.text);
    const found = new Set(global.body.matches.map((m) => `${m.metadata.repoOwner}/${m.metadata.repoName}`));
    const databasesHit = new Set([...found].map((k) => placed.get(k)));
    assert.deepEqual(databasesHit, new Set(DATABASES), `global search found ${[...found]}`);
  });

  test('deleting a repository empties only its database and frees its catalog entry', async () => {
    const victim = REPOS.find((r) => placed.get(key(r)) === 'DB_2');
    const home = 'DB_2';
    const res = await er.request('DELETE', `/v1/repos/${key(victim)}`);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.deleted.chunks >= 2 && res.body.deleted.vectors === res.body.deleted.chunks, res.text);
    const left = await rowsIn(home, victim);
    assert.ok(Object.values(left).every((n) => n === 0), JSON.stringify(left));
    assert.deepEqual(await er.d1In('DB', 'SELECT * FROM namespace_databases WHERE namespace = ?', ns(victim)), []);
    for (const r of REPOS.filter((x) => x !== victim)) {
      const kept = await rowsIn(placed.get(key(r)), r);
      assert.equal(kept.files, 2, `${key(r)} lost rows: ${JSON.stringify(kept)}`);
    }
    const list = await er.request('GET', '/v1/repos');
    assert.ok(!list.body.repos.some((x) => x.name === victim.name));
    const again = await er.request('GET', `/v1/repos/${key(victim)}/status`);
    assert.equal(again.status, 404);
  });
});
