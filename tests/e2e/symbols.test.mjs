// Code navigation over an indexed repository: symbols by name, their callers and callees across
// files, and exact line ranges, over HTTP and the MCP tools, each confined to its repository.
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
const UTIL = FILES.find((f) => f.path === 'app/util.py').content;
const REPO = 'acme/nav';
const OTHER = 'other/nav';

let embed;
let er;

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
  for (const [repo, files] of [
    [REPO, FILES],
    [OTHER, [{ path: 'lib/only.py', content: 'def only_here():\n    return 1\n' }]],
  ]) {
    const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files } });
    assert.equal(r.status, 202, r.text);
    const job = await er.waitForJob(r.body.job.id);
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  }
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

const get = (path) => er.request('GET', path);

async function tool(name, args) {
  const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
  const r = await er.request('POST', '/mcp', { body, headers: { accept: 'application/json, text/event-stream' } });
  assert.equal(r.status, 200, r.text);
  return r.body.result;
}

async function symbolId(fqn) {
  const r = await get(`/v1/repos/${REPO}/symbols?name=${encodeURIComponent(fqn)}`);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.symbols.length, 1, r.text);
  return r.body.symbols[0].id;
}

describe('code navigation', () => {
  test('finding a symbol by name returns its definition with kind, path, lines and doc', async () => {
    const r = await get(`/v1/repos/${REPO}/symbols?name=slugify&kind=function&path=app/util.py`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.symbols.length, 1, r.text);
    const [s] = r.body.symbols;
    assert.equal(s.fqn, 'app.util.slugify');
    assert.equal(s.kind, 'FUNCTION');
    assert.equal(s.path, 'app/util.py');
    assert.equal(s.startLine, 7);
    assert.equal(s.doc, 'Lowercase `text` and join its words with dashes.');
    const byGlob = await get(`/v1/repos/${REPO}/symbols?name=slugify&path=${encodeURIComponent('app/*.py')}`);
    assert.deepEqual(byGlob.body.symbols.map((x) => x.fqn).sort(), ['app.legacy.slugify', 'app.util.slugify']);
    const one = await get(`/v1/repos/${REPO}/symbols/${s.id}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.symbol.fqn, 'app.util.slugify');
  });

  test('callers and callees are followed across files, and depth 2 adds the next step', async () => {
    const slugify = await symbolId('app.util.slugify');
    const callers = await get(`/v1/repos/${REPO}/symbols/${slugify}/references?direction=callers`);
    assert.equal(callers.status, 200, callers.text);
    assert.equal(callers.body.symbol.fqn, 'app.util.slugify');
    const init = callers.body.references.find((x) => x.symbol?.fqn === 'app.models.User.__init__');
    assert.ok(init, callers.text);
    assert.equal(init.kind, 'CALLS');
    assert.equal(init.path, 'app/models.py');
    assert.equal(init.line, 20);
    assert.equal(init.depth, 1);
    const importAll = await symbolId('app.routes.import_all');
    const callees = await get(`/v1/repos/${REPO}/symbols/${importAll}/references?direction=callees`);
    assert.deepEqual(callees.body.references.filter((x) => x.symbol).map((x) => x.symbol.fqn), ['app.legacy.migrate']);
    const deep = await get(`/v1/repos/${REPO}/symbols/${importAll}/references?direction=callees&depth=2`);
    const second = deep.body.references.filter((x) => x.depth === 2 && x.symbol).map((x) => x.symbol.fqn);
    assert.ok(second.includes('app.legacy.slugify'), deep.text);
    const paged = await get(`/v1/repos/${REPO}/symbols/${importAll}/references?direction=callees&depth=2&limit=1`);
    assert.equal(paged.body.references.length, 1);
    assert.equal(paged.body.nextOffset, 1);
  });

  test('the symbols using a type as a parameter or return type are its referencers', async () => {
    const user = await symbolId('app.models.User');
    const r = await get(`/v1/repos/${REPO}/symbols/${user}/references?direction=referencers`);
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.references.every((x) => x.kind === 'REFERENCES'), r.text);
    const users = r.body.references.map((x) => x.symbol?.fqn).sort();
    assert.deepEqual(users, ['app.repo.find', 'app.repo.save', 'app.routes.get_user'], r.text);
    const save = r.body.references.find((x) => x.symbol.fqn === 'app.repo.save');
    assert.equal(save.path, 'app/repo.py');
    assert.equal(save.line, 6);
    const rename = await symbolId('app.models.User.rename');
    const types = await get(`/v1/repos/${REPO}/symbols/${rename}/references?direction=referenced`);
    assert.deepEqual(types.body.references.filter((x) => x.symbol).map((x) => x.symbol.fqn), ['app.models.Base']);
  });

  test('an HTTP handler is found with its route and method', async () => {
    const r = await get(`/v1/repos/${REPO}/symbols?name=create_user`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.symbols.length, 1, r.text);
    const [s] = r.body.symbols;
    assert.equal(s.kind, 'ENDPOINT');
    assert.equal(s.route, '/users');
    assert.equal(s.httpMethod, 'POST');
    const plain = await get(`/v1/repos/${REPO}/symbols?name=import_all`);
    assert.equal(plain.body.symbols[0].route, undefined, plain.text);
  });

  test('a line range is the exact text of those lines of the file', async () => {
    const r = await get(`/v1/repos/${REPO}/files/app/util.py/lines?start=7&end=9`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.text, UTIL.split('\n').slice(6, 9).join('\n'));
    const whole = UTIL.split('\n').length - (UTIL.endsWith('\n') ? 1 : 0);
    const all = await get(`/v1/repos/${REPO}/files/app/util.py/lines?start=1&end=${whole}`);
    assert.equal(all.body.text + (UTIL.endsWith('\n') ? '\n' : ''), UTIL);
  });

  test('unknown symbols are 404, bad ranges and arguments 400, and other repositories are not visible', async () => {
    const unknown = await get(`/v1/repos/${REPO}/symbols/nope/references`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'UNKNOWN_SYMBOL');
    assert.equal((await get(`/v1/repos/${REPO}/symbols/nope`)).body.error.code, 'UNKNOWN_SYMBOL');
    const noName = await get(`/v1/repos/${REPO}/symbols`);
    assert.equal(noName.status, 400);
    assert.equal(noName.body.error.code, 'INVALID_REQUEST');
    const slugify = await symbolId('app.util.slugify');
    for (const q of ['direction=sideways', 'depth=3']) {
      const bad = await get(`/v1/repos/${REPO}/symbols/${slugify}/references?${q}`);
      assert.equal(bad.status, 400, q);
    }
    for (const q of ['start=0&end=2', 'start=5&end=3', 'start=1&end=100000', 'start=x&end=2']) {
      const bad = await get(`/v1/repos/${REPO}/files/app/util.py/lines?${q}`);
      assert.equal(bad.status, 400, q);
      assert.equal(bad.body.error.code, 'BAD_RANGE', q);
    }
    assert.equal((await get(`/v1/repos/${REPO}/files/app/missing.py/lines?start=1&end=1`)).status, 404);
    const elsewhere = await get(`/v1/repos/${OTHER}/symbols?name=slugify`);
    assert.equal(elsewhere.status, 200);
    assert.deepEqual(elsewhere.body.symbols, []);
    assert.equal((await get(`/v1/repos/${OTHER}/symbols/${slugify}`)).body.error.code, 'UNKNOWN_SYMBOL');
    const mine = await get(`/v1/repos/${REPO}/symbols?name=only_here`);
    assert.deepEqual(mine.body.symbols, []);
  });

  test('the MCP tools answer the same as the routes', async () => {
    const repo = { repoOwner: 'acme', repoName: 'nav' };
    const found = await tool('repo.find_symbol', { ...repo, name: 'app.util.slugify' });
    assert.ok(!found.isError, JSON.stringify(found));
    const http = await get(`/v1/repos/${REPO}/symbols?name=app.util.slugify`);
    assert.deepEqual(found.structuredContent, http.body);
    const id = found.structuredContent.symbols[0].id;
    const refs = await tool('repo.symbol_references', { ...repo, id, direction: 'callers' });
    const httpRefs = await get(`/v1/repos/${REPO}/symbols/${id}/references?direction=callers`);
    assert.deepEqual(refs.structuredContent, httpRefs.body);
    const range = await tool('repo.read_file_range', { ...repo, path: 'app/util.py', start: 7, end: 9 });
    assert.equal(range.structuredContent.text, UTIL.split('\n').slice(6, 9).join('\n'));
    const unknown = await tool('repo.symbol_references', { ...repo, id: 'nope' });
    assert.equal(unknown.isError, true);
    assert.equal(unknown.structuredContent.error.code, 'UNKNOWN_SYMBOL');
    const bad = await tool('repo.read_file_range', { ...repo, path: 'app/util.py', start: 3, end: 1 });
    assert.equal(bad.structuredContent.error.code, 'BAD_RANGE');
    const other = await tool('repo.find_symbol', { repoOwner: 'other', repoName: 'nav', name: 'slugify' });
    assert.deepEqual(other.structuredContent.symbols, []);
  });
});
