// Graph-aware search: with the CALL_GRAPH neighbour strategy a match brings the chunks of the
// symbols it calls and of those calling it (from the stored code graph), and every code match
// names its graph node and a few callees / callers. A repository without a graph falls back to
// LINEAR with a warning.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { assertSchema, startEdgerag, startHashEmbedder } from './harness.mjs';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'graph', 'python', 'app');
const FILES = readdirSync(FIXTURE)
  .filter((f) => f.endsWith('.py'))
  .sort()
  .map((f) => ({ path: `app/${f}`, content: readFileSync(join(FIXTURE, f), 'utf8') }));
const REPO = { owner: 'acme', name: 'calls' };
const NS = `repo:${REPO.owner}/${REPO.name}`;
const DOCS = { owner: 'acme', name: 'prose' };

let embed;
let er;

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({
    vars: {
      OPENAI_BASE_URL: embed.url,
      SEARCH_PROFILES: JSON.stringify({
        profiles: {
          graph: { extends: 'balanced', postProcessing: { neighbor: { strategy: 'CALL_GRAPH', radius: 3, limit: 12 } } },
          // One direct match: whatever else is returned came from the graph.
          'graph-one': { extends: 'graph', retrieval: { topK: 1 } },
        },
      }),
    },
  });
  for (const [repo, files] of [
    [REPO, FILES],
    [DOCS, [{ path: 'guide.md', content: '# Guide\n\nHow to migrate names.\n\n## More\n\nMigrate them all.\n\n## Last\n\nDone.\n' }]],
  ]) {
    await er.indexFiles(`${repo.owner}/${repo.name}`, files);
  }
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

async function search(body) {
  const r = await er.request('POST', '/v1/search', { body });
  assert.equal(r.status, 200, r.text);
  await assertSchema('search-response', r.body);
  return r.body;
}

const holds = (m, line) => m.startLine <= line && m.endLine >= line;

describe('CALL_GRAPH neighbours', () => {
  test("a caller's match brings the callee's chunk, tagged with the caller's span", async () => {
    const res = await search({ ...REPO, rawQuery: 'import_all names', profile: 'graph-one' });
    assert.ok(res.appliedModules.includes('post.neighbor-expand:CALL_GRAPH'), JSON.stringify(res.appliedModules));
    assert.ok(!res.warnings.some((w) => w.includes('CALL_GRAPH')), JSON.stringify(res.warnings));
    const caller = res.matches.find((m) => !m.metadata.neighborOfSpanHash && m.path === 'app/routes.py' && m.snippet.includes('def import_all'));
    assert.ok(caller, JSON.stringify(res.matches.map((m) => [m.path, m.startLine, m.metadata.neighborOfSpanHash])));
    const [migrate] = await er.d1("SELECT start_line FROM graph_nodes WHERE namespace = ? AND fqn = 'app.legacy.migrate'", NS);
    const callee = res.matches.find(
      (m) => m.metadata.neighborOfSpanHash === caller.metadata.spanHash && m.path === 'app/legacy.py' && holds(m, migrate.start_line),
    );
    assert.ok(callee, `the chunk of migrate follows the caller: ${JSON.stringify(res.matches.map((m) => [m.path, m.startLine, m.endLine, m.metadata.neighborOfSpanHash]))}`);
    assert.match(callee.snippet, /def migrate/);
    // Neighbours come after every direct match and score below their origin.
    const first = res.matches.findIndex((m) => m.metadata.neighborOfSpanHash);
    assert.ok(res.matches.slice(first).every((m) => m.metadata.neighborOfSpanHash), 'neighbours follow the direct matches');
    assert.ok(callee.score < caller.score);
  });

  test("a callee's match brings its callers' chunks at the call site", async () => {
    const res = await search({ ...REPO, rawQuery: 'slugify migrate legacy old rule', profile: 'graph' });
    const legacy = res.matches.find((m) => !m.metadata.neighborOfSpanHash && m.path === 'app/legacy.py');
    assert.ok(legacy, JSON.stringify(res.matches.map((m) => m.path)));
    const [site] = await er.d1(
      `SELECT e.path, e.line FROM graph_edges e JOIN graph_nodes d ON d.namespace = e.namespace AND d.id = e.dst
       WHERE e.namespace = ? AND e.kind = 'CALLS' AND d.fqn = 'app.legacy.migrate'`,
      NS,
    );
    assert.equal(site.path, 'app/routes.py');
    const caller = res.matches.find((m) => m.metadata.neighborOfSpanHash === legacy.metadata.spanHash && m.path === site.path && holds(m, site.line));
    const shown = res.matches.find((m) => m.path === site.path && holds(m, site.line));
    // The caller's chunk is there: as this match's neighbour, or already a direct match.
    assert.ok(caller || (shown && !shown.metadata.neighborOfSpanHash), JSON.stringify(res.matches.map((m) => [m.path, m.startLine, m.endLine])));
  });

  test('a repository without a code graph falls back to LINEAR with a warning', async () => {
    const res = await search({ ...DOCS, rawQuery: 'migrate names', profile: 'graph' });
    assert.ok(res.matches.length > 0);
    assert.ok(res.warnings.some((w) => w.includes('CALL_GRAPH') && w.includes('no code graph') && w.includes('LINEAR')), JSON.stringify(res.warnings));
    assert.ok(res.appliedModules.includes('post.neighbor-expand:CALL_GRAPH'), JSON.stringify(res.appliedModules));
    assert.ok(res.matches.every((m) => m.metadata.symbolId === undefined && m.metadata.uses === undefined));
  });
});

describe('symbol metadata on matches', () => {
  test('code matches carry their graph node, what they call and who calls them', async () => {
    const res = await search({ ...REPO, rawQuery: 'migrate slugify names' });
    const code = res.matches.filter((m) => m.language === 'python');
    assert.ok(code.length >= 2, JSON.stringify(res.matches.map((m) => m.path)));
    for (const m of code) {
      assert.match(m.metadata.symbolId ?? '', /^[0-9a-f]{64}$/, `${m.path}:${m.startLine}`);
      const [node] = await er.d1('SELECT path, start_line, end_line FROM graph_nodes WHERE namespace = ? AND id = ?', NS, m.metadata.symbolId);
      assert.ok(node, `the symbolId of ${m.path}:${m.startLine} is a stored node`);
      assert.equal(node.path, m.path);
      // A match can be its definition read together with a touching neighbour: its lines hold
      // (part of) its node, not necessarily from the node's first line.
      assert.ok(node.start_line <= m.endLine && node.end_line >= m.startLine, `${m.path}:${m.startLine}-${m.endLine} overlaps its node`);
    }
    const legacy = code.find((m) => m.path === 'app/legacy.py' && m.snippet.includes('def migrate'));
    assert.ok(legacy, JSON.stringify(code.map((m) => m.path)));
    assert.ok(legacy.metadata.uses?.includes('slugify'), JSON.stringify(legacy.metadata));
    assert.ok(legacy.metadata.usedBy?.includes('import_all'), JSON.stringify(legacy.metadata));
    assert.ok(legacy.metadata.uses.length <= 5 && legacy.metadata.usedBy.length <= 5);
  });

  test('the symbolId is the one the symbol tools use', async () => {
    const res = await search({ ...REPO, rawQuery: 'def migrate names slugify' });
    const legacy = res.matches.find((m) => m.path === 'app/legacy.py');
    assert.ok(legacy);
    const r = await er.request('GET', `/v1/repos/${REPO.owner}/${REPO.name}/symbols?name=${encodeURIComponent('app.legacy.migrate')}`);
    assert.equal(r.status, 200, r.text);
    const ids = new Set(
      (await er.d1('SELECT id FROM graph_nodes WHERE namespace = ? AND path = ?', NS, 'app/legacy.py')).map((n) => n.id),
    );
    assert.ok(ids.has(legacy.metadata.symbolId));
    assert.ok(ids.has(r.body.symbols[0].id));
  });
});
