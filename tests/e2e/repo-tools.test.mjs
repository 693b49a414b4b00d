// The repository tools an agent uses beside search — file lists, outlines, grep — over HTTP, MCP
// and the CLI against the worker in workerd: answers match their JSON Schemas, fit `maxTokens`,
// refuse bad input with a stable code, and a key for one repository reaches no other.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { deployConfig, desiredResources } from '../../scripts/deploy/config.mjs';
import { readRawConfig } from '../../scripts/deploy/deploy.mjs';
import { assertSchema, cliBinary, startEdgerag, startHashEmbedder } from './harness.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(HERE, '..', 'fixtures', 'graph', 'python', 'app');
const FILES = [
  ...readdirSync(FIXTURE)
    .filter((f) => f.endsWith('.py'))
    .sort()
    .map((f) => ({ path: `app/${f}`, content: readFileSync(join(FIXTURE, f), 'utf8') })),
  { path: 'docs/guide.md', content: '# Guide\n\nCall `slugify` to make a slug.\nTODO: more examples.\n' },
  { path: 'tests/test_util.py', content: 'from app.util import slugify\n\n\ndef test_slugify():\n    assert slugify("A B") == "a-b"\n' },
];
const MODELS = FILES.find((f) => f.path === 'app/models.py').content;
const REPO = 'acme/tools';
const OTHER = 'other/tools';

let embed;
let er;
let reader; // read on acme/* only
let deployed; // the vars a fresh deployment gets from scripts/deploy.sh (no flags)

before(async () => {
  embed = await startHashEmbedder();
  // Reads are as private as a fresh deployment's: its generated configuration decides.
  const raw = await readRawConfig(join(HERE, '..', '..', 'wrangler.toml'));
  deployed = deployConfig(raw, desiredResources(raw, { plan: 'paid' }), { ids: {}, sourceDir: '/r', outDir: '/r/o' }).vars;
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, PUBLIC_READS: deployed.PUBLIC_READS } });
  for (const [repo, files] of [
    [REPO, FILES],
    [OTHER, [{ path: 'secret/only.py', content: 'def only_here():\n    return "slugify"\n' }]],
  ]) {
    const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files } });
    assert.equal(r.status, 202, r.text);
    const job = await er.waitForJob(r.body.job.id);
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  }
  const key = await er.request('POST', '/v1/keys', { body: { name: 'acme reader', scopes: ['read'], namespaces: ['acme/*'] } });
  assert.equal(key.status, 201, key.text);
  reader = key.body.token;
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

const get = (path, token) => er.request('GET', path, { token });
const tokens = (value) => Math.ceil([...JSON.stringify(value)].length / 4);

async function tool(name, args, token) {
  const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
  const r = await er.request('POST', '/mcp', { body, token, headers: { accept: 'application/json, text/event-stream' } });
  assert.equal(r.status, 200, r.text);
  return r.body.result;
}

function cli(...args) {
  return new Promise(async (resolve) => {
    const child = spawn(await cliBinary(), args, { env: { ...process.env, EDGERAG_URL: er.url, EDGERAG_TOKEN: er.token } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const repoArgs = { repoOwner: 'acme', repoName: 'tools' };

describe('repo.list_files', () => {
  test('lists files in path order with language, size and lines, filtered and paged', async () => {
    const r = await get(`/v1/repos/${REPO}/tree`);
    assert.equal(r.status, 200, r.text);
    await assertSchema('list-files-response', r.body);
    assert.deepEqual(r.body.files.map((f) => f.path), FILES.map((f) => f.path).sort());
    const models = r.body.files.find((f) => f.path === 'app/models.py');
    assert.equal(models.language, 'python');
    assert.equal(models.size, Buffer.byteLength(MODELS));
    assert.equal(models.lines, MODELS.split('\n').length - (MODELS.endsWith('\n') ? 1 : 0));
    assert.equal(r.body.truncated, false);
    assert.equal(r.body.nextOffset, undefined);

    const docs = await get(`/v1/repos/${REPO}/tree?prefix=docs`);
    assert.deepEqual(docs.body.files.map((f) => f.path), ['docs/guide.md']);
    const glob = await get(`/v1/repos/${REPO}/tree?glob=${encodeURIComponent('app/r*.py')}`);
    assert.deepEqual(glob.body.files.map((f) => f.path), ['app/repo.py', 'app/routes.py']);
    const md = await get(`/v1/repos/${REPO}/tree?language=markdown`);
    assert.deepEqual(md.body.files.map((f) => f.path), ['docs/guide.md']);

    const first = await get(`/v1/repos/${REPO}/tree?limit=2`);
    assert.equal(first.body.files.length, 2);
    assert.equal(first.body.total, FILES.length);
    assert.equal(first.body.nextOffset, 2);
    const second = await get(`/v1/repos/${REPO}/tree?limit=2&offset=2`);
    assert.equal(second.body.files[0].path, r.body.files[2].path);
  });

  test('an answer never exceeds maxTokens and says when it was cut', async () => {
    const r = await get(`/v1/repos/${REPO}/tree?maxTokens=100`);
    assert.equal(r.status, 200, r.text);
    assert.ok(tokens(r.body) <= 100, `${tokens(r.body)} tokens`);
    assert.equal(r.body.truncated, true);
    assert.equal(r.body.nextOffset, r.body.files.length);
  });

  test('bad arguments are 400 with a stable code', async () => {
    for (const q of ['limit=0', 'limit=5000', 'maxTokens=10', 'prefix=../x', 'glob=%5B', 'unknown=1', 'offset=-1']) {
      const r = await get(`/v1/repos/${REPO}/tree?${q}`);
      assert.equal(r.status, 400, `${q}: ${r.text}`);
      assert.equal(r.body.error.code, 'INVALID_REQUEST', q);
    }
    assert.equal((await get('/v1/repos/acme/never/tree')).body.error.code, 'REPO_NOT_FOUND');
  });

  test('the MCP tool and the CLI answer the same as the route', async () => {
    const viaTool = await tool('repo.list_files', { ...repoArgs, prefix: 'app', limit: 3 });
    assert.ok(!viaTool.isError, JSON.stringify(viaTool));
    assert.deepEqual(viaTool.structuredContent, (await get(`/v1/repos/${REPO}/tree?prefix=app&limit=3`)).body);
    const bad = await tool('repo.list_files', { ...repoArgs, limit: 0 });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent.error.code, 'INVALID_REQUEST');
    const out = await cli('files', REPO, '--prefix', 'app', '--json');
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), (await get(`/v1/repos/${REPO}/tree?prefix=app`)).body);
    const text = await cli('files', REPO, '--glob', '*.md');
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /docs\/guide\.md/);
  });
});

describe('repo.outline', () => {
  test("a file's outline is its symbols as a tree with signatures and first doc lines", async () => {
    const r = await get(`/v1/repos/${REPO}/outline?path=app/models.py`);
    assert.equal(r.status, 200, r.text);
    await assertSchema('outline-response', r.body);
    assert.equal(r.body.kind, 'file');
    const [file] = r.body.files;
    assert.equal(file.path, 'app/models.py');
    const top = file.symbols.map((s) => `${s.kind} ${s.name}`);
    assert.ok(top.includes('CLASS Base') && top.includes('CLASS User'), JSON.stringify(top));
    const user = file.symbols.find((s) => s.name === 'User');
    assert.equal(user.doc, 'A registered user.');
    assert.equal(user.startLine, 13);
    const methods = user.children.map((s) => s.name);
    assert.ok(methods.includes('rename') && methods.includes('__init__'), JSON.stringify(methods));
    const rename = user.children.find((s) => s.name === 'rename');
    assert.match(rename.signature, /def rename\(self, name: str\) -> Base/);
  });

  test("a folder's outline lists its files with their top-level symbols only", async () => {
    const r = await get(`/v1/repos/${REPO}/outline?path=app`);
    assert.equal(r.status, 200, r.text);
    await assertSchema('outline-response', r.body);
    assert.equal(r.body.kind, 'folder');
    assert.deepEqual(r.body.files.map((f) => f.path), FILES.filter((f) => f.path.startsWith('app/')).map((f) => f.path));
    const models = r.body.files.find((f) => f.path === 'app/models.py');
    assert.ok(models.symbols.every((s) => !s.children), JSON.stringify(models));
    assert.ok(models.symbols.some((s) => s.name === 'User'));
    const root = await get(`/v1/repos/${REPO}/outline`);
    assert.equal(root.body.files.length, FILES.length);
  });

  test('an outline never exceeds maxTokens; folders page with nextOffset', async () => {
    const r = await get(`/v1/repos/${REPO}/outline?path=app&maxTokens=150`);
    assert.equal(r.status, 200, r.text);
    assert.ok(tokens(r.body) <= 150, `${tokens(r.body)} tokens`);
    assert.equal(r.body.truncated, true);
    assert.ok(r.body.nextOffset >= 1);
    const next = await get(`/v1/repos/${REPO}/outline?path=app&offset=${r.body.nextOffset}`);
    assert.equal(next.body.files[0].path, FILES[r.body.nextOffset].path);
    const file = await get(`/v1/repos/${REPO}/outline?path=app/models.py&maxTokens=120`);
    assert.ok(tokens(file.body) <= 120, `${tokens(file.body)} tokens`);
    assert.equal(file.body.truncated, true);
  });

  test('unknown paths are 404, bad ones 400; the MCP tool answers the same as the route', async () => {
    const missing = await get(`/v1/repos/${REPO}/outline?path=nope`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'PATH_NOT_FOUND');
    assert.equal((await get(`/v1/repos/${REPO}/outline?path=../app`)).status, 400);
    assert.equal((await get(`/v1/repos/${REPO}/outline?maxTokens=1`)).body.error.code, 'INVALID_REQUEST');
    const viaTool = await tool('repo.outline', { ...repoArgs, path: 'app/util.py' });
    assert.deepEqual(viaTool.structuredContent, (await get(`/v1/repos/${REPO}/outline?path=app/util.py`)).body);
    const out = await cli('outline', REPO, 'app/models.py');
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /CLASS User/);
    assert.match(out.stdout, /  METHOD rename/);
  });
});


// Every line of the fixture matching `re`, as [path, line] in path and line order.
function expected(re, files = FILES) {
  const out = [];
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    f.content.split('\n').forEach((line, i) => {
      if (re.test(line)) out.push(`${f.path}:${i + 1}`);
    });
  }
  return out;
}
const grep = (body, token) => er.request('POST', `/v1/repos/${REPO}/grep`, { body, token });
const where = (r) => r.body.matches.map((m) => `${m.path}:${m.line}`);

describe('repo.grep', () => {
  test('a literal finds exactly the lines holding it, through the trigram index', async () => {
    const r = await grep({ pattern: 'slugify(' });
    assert.equal(r.status, 200, r.text);
    await assertSchema('grep-response', r.body);
    assert.deepEqual(where(r), expected(/slugify\(/));
    assert.equal(r.body.usedIndex, true);
    assert.ok(r.body.filesScanned < FILES.length, `${r.body.filesScanned} files read`);
    assert.equal(r.body.limitReached, false);
    assert.equal(r.body.nextCursor, undefined);
    const util = r.body.matches.find((m) => m.path === 'app/util.py');
    assert.equal(util.text, 'def slugify(text):');
  });

  test('regular expressions, case, globs, languages and context lines', async () => {
    const re = await grep({ pattern: 'def (save|validate)\\(', regex: true });
    assert.deepEqual(where(re), expected(/def (save|validate)\(/));
    const anyWord = await grep({ pattern: '^\\s+\\w+\\(', regex: true });
    assert.deepEqual(where(anyWord), expected(/^\s+\w+\(/));
    assert.equal(anyWord.body.usedIndex, false);
    const caseless = await grep({ pattern: 'TODO', caseSensitive: false });
    assert.deepEqual(where(caseless), expected(/todo/i));
    assert.deepEqual(where(await grep({ pattern: 'todo' })), []);
    const scoped = await grep({ pattern: 'slugify', paths: ['app/m*.py'] });
    assert.deepEqual(where(scoped), expected(/slugify/, FILES.filter((f) => f.path === 'app/models.py')));
    const md = await grep({ pattern: 'slugify', languages: ['markdown'] });
    assert.deepEqual(where(md), ['docs/guide.md:3']);
    const ctx = await grep({ pattern: 'A registered user', context: 2 });
    const [m] = ctx.body.matches;
    const lines = MODELS.split('\n');
    assert.deepEqual(m.before, lines.slice(m.line - 3, m.line - 1));
    assert.deepEqual(m.after, lines.slice(m.line, m.line + 2));
  });

  test('a pattern matching everywhere stops at the limit, says so, and pages on with the cursor', async () => {
    const all = expected(/./);
    const seen = [];
    let cursor;
    for (let page = 0; page < 100; page++) {
      const r = await grep({ pattern: '.', regex: true, limit: 7, ...(cursor ? { cursor } : {}) });
      assert.equal(r.status, 200, r.text);
      seen.push(...where(r));
      cursor = r.body.nextCursor;
      if (!cursor) break;
      assert.equal(r.body.limitReached, true);
      assert.equal(r.body.matches.length, 7);
    }
    assert.deepEqual(seen, all);
  });

  test('an answer never exceeds maxTokens', async () => {
    const r = await grep({ pattern: '.', regex: true, context: 3, maxTokens: 150 });
    assert.equal(r.status, 200, r.text);
    assert.ok(tokens(r.body) <= 150, `${tokens(r.body)} tokens`);
    assert.equal(r.body.truncated, true);
    assert.ok(r.body.matches.length >= 1 && r.body.nextCursor);
  });

  test('a bad pattern is 400 INVALID_PATTERN; other bad arguments 400 INVALID_REQUEST', async () => {
    for (const body of [{ pattern: 'fn (', regex: true }, { pattern: '' }, { pattern: 'x'.repeat(1001) }, { pattern: 'a{1000}{1000}', regex: true }]) {
      const r = await grep(body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'INVALID_PATTERN', JSON.stringify(body).slice(0, 80));
    }
    for (const body of [{ pattern: 'x', limit: 0 }, { pattern: 'x', context: 11 }, { pattern: 'x', cursor: 'nope' }, { pattern: 'x', paths: ['['] }, { pattern: 'x', extra: 1 }, {}]) {
      const r = await grep(body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'INVALID_REQUEST', JSON.stringify(body));
    }
  });

  test('the MCP tool and the CLI answer the same as the route', async () => {
    const viaTool = await tool('repo.grep', { ...repoArgs, pattern: 'slugify', context: 1 });
    assert.ok(!viaTool.isError, JSON.stringify(viaTool));
    assert.deepEqual(viaTool.structuredContent, (await grep({ pattern: 'slugify', context: 1 })).body);
    const bad = await tool('repo.grep', { ...repoArgs, pattern: '(', regex: true });
    assert.equal(bad.structuredContent.error.code, 'INVALID_PATTERN');
    const out = await cli('grep', REPO, 'slugify(', '--json');
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), (await grep({ pattern: 'slugify(' })).body);
    const text = await cli('grep', REPO, '-e', 'def (save|validate)\\(');
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^app\/models\.py:5:    def save\(self\):$/m);
    const failed = await cli('grep', REPO, '-e', '(');
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /INVALID_PATTERN/);
  });
});


const mapOf = (body, token) => er.request('POST', `/v1/repos/${REPO}/map`, { body, token });

describe('repo.map', () => {
  test('files come by PageRank with their definitions as signatures, the same every time', async () => {
    const r = await mapOf({});
    assert.equal(r.status, 200, r.text);
    await assertSchema('map-response', r.body);
    assert.equal(r.body.personalized, false);
    assert.equal(r.body.truncated, false);
    const ranks = r.body.files.map((f) => f.rank);
    assert.deepEqual(ranks, [...ranks].sort((a, b) => b - a), 'files in rank order');
    const total = ranks.reduce((a, b) => a + b, 0);
    assert.ok(total > 0.99 && total < 1.01, `ranks sum to ${total}`);
    const util = r.body.files.find((f) => f.path === 'app/util.py');
    assert.ok(util.symbols.some((s) => s.signature === 'def slugify(text):' || s.signature === 'def slugify(text)'), JSON.stringify(util));
    assert.ok(r.body.files.every((f) => f.symbols.every((s) => s.kind !== 'MODULE')));
    assert.deepEqual((await mapOf({})).body, r.body);
  });

  test('a question, paths or symbols put their files first', async () => {
    const bySymbol = await mapOf({ symbols: ['migrate'] });
    assert.equal(bySymbol.body.personalized, true);
    assert.equal(bySymbol.body.files[0].path, 'app/legacy.py');
    const byQuery = await mapOf({ query: 'find it in the repo' });
    assert.equal(byQuery.body.files[0].path, 'app/repo.py', byQuery.text);
    const byPath = await mapOf({ paths: ['app/routes.py'] });
    assert.equal(byPath.body.files[0].path, 'app/routes.py');
  });

  test('a personalized map runs PageRank from the files asked about, and follows the graph when it changes', async () => {
    const repo = 'acme/graph';
    const upload = async (files) => {
      const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files } });
      assert.equal(r.status, 202, r.text);
      const job = await er.waitForJob(r.body.job.id);
      assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
    };
    const start = (callee) => `from ${callee} import helper_${callee}\n\n\ndef start():\n    return helper_${callee}()\n`;
    await upload([
      { path: 'a.py', content: start('b') },
      { path: 'b.py', content: 'def helper_b():\n    return 1\n' },
      { path: 'c.py', content: 'def helper_c():\n    return 2\n' },
      { path: 'd.py', content: 'def helper_d():\n    return 3\n' },
    ]);
    const order = async () => {
      const r = await er.request('POST', `/v1/repos/${repo}/map`, { body: { symbols: ['start'] } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.personalized, true);
      const sum = r.body.files.reduce((a, f) => a + f.rank, 0);
      assert.ok(Math.abs(sum - 1) < 1e-3, `personalized ranks sum to ${sum}`);
      return r.body.files.map((f) => `${f.path}:${f.rank > 0 ? 'reached' : 'not'}`);
    };
    // a.py is asked about and uses b.py; c.py and d.py are never reached.
    assert.deepEqual(await order(), ['a.py:reached', 'b.py:reached', 'c.py:not', 'd.py:not']);
    assert.deepEqual(await order(), ['a.py:reached', 'b.py:reached', 'c.py:not', 'd.py:not']);
    // a.py now uses c.py: the next map follows the new graph.
    await upload([{ path: 'a.py', content: start('c') }]);
    assert.deepEqual(await order(), ['a.py:reached', 'c.py:reached', 'b.py:not', 'd.py:not']);
  });

  test('the budget is a hard limit; bad arguments are 400', async () => {
    for (const budget of [100, 150, 400]) {
      const r = await mapOf({ maxTokens: budget });
      assert.equal(r.status, 200, r.text);
      assert.ok(tokens(r.body) <= budget, `${tokens(r.body)} > ${budget}`);
      assert.equal(r.body.truncated, true);
      assert.ok(r.body.files.length >= 1);
    }
    for (const body of [{ maxTokens: 10 }, { paths: ['['] }, { extra: true }, { query: 'x'.repeat(2001) }]) {
      const r = await mapOf(body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'INVALID_REQUEST', JSON.stringify(body).slice(0, 60));
    }
  });

  test('the MCP tool and the CLI answer the same as the route', async () => {
    const viaTool = await tool('repo.map', { ...repoArgs, maxTokens: 500 });
    assert.ok(!viaTool.isError, JSON.stringify(viaTool));
    assert.deepEqual(viaTool.structuredContent, (await mapOf({ maxTokens: 500 })).body);
    const out = await cli('map', REPO, '--symbol', 'migrate');
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^app\/legacy\.py:\n/);
  });
});


const impactOf = (body, token) => er.request('POST', `/v1/repos/${REPO}/impact`, { body, token });

describe('repo.impact', () => {
  test('a changed function: its callers with the edges that reach them, and the tests that call it', async () => {
    const r = await impactOf({ changes: [{ path: 'app/util.py', startLine: 7, endLine: 9 }] });
    assert.equal(r.status, 200, r.text);
    await assertSchema('impact-response', r.body);
    assert.deepEqual(r.body.changed.map((s) => s.fqn), ['app.util.slugify']);
    const init = r.body.impacted.find((i) => i.symbol.fqn === 'app.models.User.__init__');
    assert.ok(init, r.text);
    assert.equal(init.depth, 1);
    assert.deepEqual(init.via, [{ kind: 'CALLS', from: 'app.models.User.__init__', to: 'app.util.slugify', path: 'app/models.py', line: 20 }]);
    const depths = r.body.impacted.map((i) => i.depth);
    assert.deepEqual(depths, [...depths].sort((a, b) => a - b), 'nearest first');
    assert.ok(r.body.impacted.every((i) => i.via.length === i.depth), r.text);
    assert.deepEqual(r.body.tests, ['tests/test_util.py']);
    const shallow = await impactOf({ changes: [{ path: 'app/util.py', startLine: 7, endLine: 9 }], depth: 1 });
    assert.ok(shallow.body.impacted.every((i) => i.depth === 1));
    const page = await impactOf({ changes: [{ path: 'app/util.py', startLine: 7, endLine: 9 }], limit: 1 });
    assert.equal(page.body.impacted.length, 1);
    assert.equal(page.body.nextOffset, 1);
  });

  test('a unified diff works like changed ranges; an endpoint changed is listed with its route', async () => {
    const diff = [
      'diff --git a/app/util.py b/app/util.py',
      '--- a/app/util.py',
      '+++ b/app/util.py',
      '@@ -8,2 +8,2 @@ def slugify(text):',
      '-    """Lowercase `text` and join its words with dashes."""',
      '+    """Lowercase `text`, words joined with dashes."""',
      '     return SLUG_RE.sub("-", text.lower()).strip("-")',
      '',
    ].join('\n');
    const viaDiff = await impactOf({ diff });
    assert.equal(viaDiff.status, 200, viaDiff.text);
    const viaRanges = await impactOf({ changes: [{ path: 'app/util.py', startLine: 8, endLine: 9 }] });
    assert.deepEqual(viaDiff.body, viaRanges.body);
    const endpoint = await impactOf({ changes: [{ path: 'app/routes.py', startLine: 11, endLine: 12 }] });
    assert.deepEqual(endpoint.body.endpoints.map((e) => [e.httpMethod, e.route, e.fqn]), [['POST', '/users', 'app.routes.create_user']]);
  });

  test('the budget is a hard limit; bad changes are 400 with a stable code', async () => {
    for (const budget of [100, 200, 400]) {
      const r = await impactOf({ changes: [{ path: 'app/util.py' }], maxTokens: budget });
      assert.equal(r.status, 200, r.text);
      assert.ok(tokens(r.body) <= budget, `${tokens(r.body)} > ${budget}`);
      assert.equal(r.body.truncated, true);
    }
    for (const [body, code] of [
      [{}, 'INVALID_REQUEST'],
      [{ diff: 'not a diff' }, 'INVALID_DIFF'],
      [{ diff: '+++ b/x\n@@ -1 +1 @@\n', changes: [{ path: 'x' }] }, 'INVALID_REQUEST'],
      [{ changes: [{ path: 'app/util.py' }], depth: 4 }, 'INVALID_REQUEST'],
      [{ changes: [{ path: 'app/util.py', startLine: 5, endLine: 2 }] }, 'INVALID_REQUEST'],
      [{ changes: [{ path: '../etc/passwd' }] }, 'INVALID_REQUEST'],
    ]) {
      const bad = await impactOf(body);
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.body.error.code, code, JSON.stringify(body));
    }
  });

  test('the MCP tool and the CLI answer the same as the route', async () => {
    const args = { changes: [{ path: 'app/util.py', startLine: 7, endLine: 9 }] };
    const viaTool = await tool('repo.impact', { ...repoArgs, ...args });
    assert.ok(!viaTool.isError, JSON.stringify(viaTool));
    assert.deepEqual(viaTool.structuredContent, (await impactOf(args)).body);
    const out = await cli('impact', REPO, 'app/util.py:7-9');
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^changed:\n  FUNCTION app\.util\.slugify  app\/util\.py:7\n/);
    assert.match(out.stdout, /tests:\n  tests\/test_util\.py\n/);
  });
});

describe('scoped keys', () => {
  test('a key for one repository lists, outlines, greps, maps and impacts it and reaches no other, over HTTP and MCP', async () => {
    assert.equal((await get(`/v1/repos/${REPO}/tree`, reader)).status, 200);
    assert.equal((await get(`/v1/repos/${REPO}/outline?path=app`, reader)).status, 200);
    for (const path of [`/v1/repos/${OTHER}/tree`, `/v1/repos/${OTHER}/outline`]) {
      const r = await get(path, reader);
      assert.equal(r.status, 403, `${path}: ${r.text}`);
    }
    const other = { repoOwner: 'other', repoName: 'tools' };
    const grepped = await grep({ pattern: 'slugify' }, reader);
    assert.equal(grepped.status, 200, grepped.text);
    assert.ok(grepped.body.matches.every((m) => !m.path.startsWith('secret/')));
    const otherGrep = await er.request('POST', `/v1/repos/${OTHER}/grep`, { body: { pattern: 'slugify' }, token: reader });
    assert.equal(otherGrep.status, 403, otherGrep.text);
    assert.equal((await mapOf({}, reader)).status, 200);
    const otherMap = await er.request('POST', `/v1/repos/${OTHER}/map`, { body: {}, token: reader });
    assert.equal(otherMap.status, 403, otherMap.text);
    const otherImpact = await er.request('POST', `/v1/repos/${OTHER}/impact`, { body: { changes: [{ path: 'secret/only.py' }] }, token: reader });
    assert.equal(otherImpact.status, 403, otherImpact.text);
    for (const [name, args] of [['repo.list_files', {}], ['repo.outline', {}], ['repo.grep', { pattern: 'slugify' }], ['repo.map', {}], ['repo.impact', { changes: [{ path: 'secret/only.py' }] }]]) {
      const r = await tool(name, { ...other, ...args }, reader);
      assert.equal(r.isError, true, `${name}: ${JSON.stringify(r)}`);
      assert.doesNotMatch(JSON.stringify(r), /only_here|secret\/only/);
    }
  });
});

describe('a fresh deployment is private', () => {
  // Every route of the HTTP reference, with its placeholders filled in for the indexed repository.
  function routes() {
    const page = readFileSync(join(HERE, '..', '..', 'docs', 'reference', 'http-api.md'), 'utf8');
    const fill = { owner: 'acme', name: 'tools', path: 'app/models.py', id: 'x', run_id: 'x' };
    return [...page.matchAll(/^\| `(GET|POST|PUT|DELETE)` \| `([^`]+)` \|/gm)].map(([, method, path]) => ({
      method,
      path: path.replace(/\{(\w+)\}/g, (_, p) => fill[p]),
    }));
  }
  // Open by design: health, GitHub's signed webhooks, and the sign-in endpoints (metadata and the
  // OAuth flow, which check their own input and hold no repository content; without sign-in
  // configured they answer 404 OAUTH_DISABLED).
  const open = (r) => r.path === '/health' || r.path === '/v1/webhooks/github' || /^\/(oauth|\.well-known)\//.test(r.path);
  const query = { '/outline': '?path=app/models.py', '/symbols': '?name=User', '/lines': '?start=1&end=2' };
  const withQuery = (path) => path + (Object.entries(query).find(([end]) => path.endsWith(end))?.[1] ?? '');
  const BODY = {
    search: { query: 'slug', repoOwner: 'acme', repoName: 'tools' },
    mcp: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  };

  test('scripts/deploy.sh without flags configures PUBLIC_READS=false', () => {
    assert.equal(deployed.PUBLIC_READS, 'false');
  });

  test('every route but /health, the webhook and sign-in refuses an anonymous caller with 401 UNAUTHORIZED', async () => {
    const all = routes();
    assert.ok(all.length >= 30, `read ${all.length} routes from the HTTP reference`);
    const refused = [];
    for (const r of all.filter((r) => !open(r))) {
      const body = r.path.startsWith('/v1/search') ? BODY.search : r.path === '/mcp' ? BODY.mcp : r.method === 'GET' || r.method === 'DELETE' ? undefined : {};
      const headers = r.path === '/mcp' ? { accept: 'application/json, text/event-stream' } : {};
      const res = await er.request(r.method, withQuery(r.path), { body, headers, token: null });
      assert.equal(res.status, 401, `${r.method} ${r.path}: ${res.text}`);
      assert.equal(res.body?.error?.code, 'UNAUTHORIZED', `${r.method} ${r.path}`);
      assert.ok(!/slugify|only_here|class User/.test(res.text), `${r.method} ${r.path} leaked content`);
      refused.push(r);
    }
    // Sign-in is off on a fresh deployment until GITHUB_CLIENT_ID / GITHUB_CLIENT_SECRET are set.
    for (const r of all.filter((r) => /^\/(oauth|\.well-known)\//.test(r.path))) {
      const res = await er.request(r.method, r.path, { token: null, body: r.method === 'POST' ? {} : undefined });
      assert.equal(res.status, 404, `${r.method} ${r.path}: ${res.text}`);
      assert.match(res.text, /OAUTH_DISABLED/, `${r.method} ${r.path}`);
    }
    // The same reads answer with a key: the refusals above are the policy, not missing routes.
    for (const r of refused.filter((r) => r.method === 'GET' || /\/(grep|map|impact)$|^\/v1\/search|^\/mcp$/.test(r.path))) {
      if (/\/v1\/(keys|audit)/.test(r.path)) continue;
      const body = r.path.startsWith('/v1/search') ? BODY.search : r.path === '/mcp' ? BODY.mcp : r.method === 'POST' ? { pattern: 'slug', query: 'slug', paths: ['app/models.py'] } : undefined;
      const headers = r.path === '/mcp' ? { accept: 'application/json, text/event-stream' } : {};
      const res = await er.request(r.method, withQuery(r.path), { body, headers });
      assert.notEqual(res.status, 401, `${r.method} ${r.path} with the token: ${res.text}`);
      assert.notEqual(res.body?.error?.code, 'NOT_FOUND', `${r.method} ${r.path} is a route: ${res.text}`);
    }
  });
});
