// Search end to end in workerd: the hand-written multi-language fixture repo (and another repo that
// must never leak into it) indexed through the real pipeline, then queries whose right answer is
// known — by symbol name, by paraphrase, by path / language filter, across namespaces — checking
// the top results, appliedModules, warnings, error codes and the JSON Schemas.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { ROOT, assertSchema, cliBinary, readTree, startEdgerag, startHashEmbedder } from './harness.mjs';

const FIXTURES = join(ROOT, 'tests', 'e2e', 'fixtures');


let embed;
let er;

async function index(repo, dir) {
  const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files: readTree(join(FIXTURES, dir)) } });
  assert.equal(r.status, 202, r.text);
  const job = await er.waitForJob(r.body.job.id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job));
}

async function search(body, path = '/v1/search') {
  const r = await er.request('POST', path, { body });
  assert.equal(r.status, 200, r.text);
  await assertSchema('search-response', r.body);
  return r.body;
}

async function searchError(body, path = '/v1/search') {
  const r = await er.request('POST', path, { body });
  assert.ok(r.status >= 400 && r.status < 500, `${r.status} ${r.text}`);
  await assertSchema('error', r.body);
  return { status: r.status, code: r.body.error.code, message: r.body.error.message };
}

const direct = (res) => res.matches.filter((m) => !m.metadata.neighborOfSpanHash);
const paths = (res) => res.matches.map((m) => m.path);

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
  // Before anything is indexed: the simple tool cannot pick a repository.
  const early = await searchError({ rawQuery: 'retry' }, '/v1/search/simple');
  assert.equal(early.code, 'INDEX_NOT_READY');
  assert.equal(early.status, 409);
  const globalEarly = await search({ rawQuery: 'retry' }, '/v1/search/simple-global');
  assert.deepEqual([globalEarly.repoOwner, globalEarly.repoName], ['global', 'global']);
  assert.equal(globalEarly.noResultsReason, 'INDEX_NOT_READY');
  await index('acme/shop', 'search-repo');
  await index('doc/brown', 'search-repo-other');
});

const cleanup = [];

after(async () => {
  await er?.stop();
  await embed?.stop();
  if (!process.env.EDGERAG_E2E_KEEP) for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

describe('repo.rag_search', () => {
  test('finds code by its symbol name', async () => {
    const res = await search({ owner: 'acme', name: 'shop', rawQuery: 'RetryWithBackoff' });
    const top = res.matches[0];
    assert.equal(top.path, 'src/net/retry.go', JSON.stringify(paths(res)));
    assert.match(top.snippet, /func RetryWithBackoff/);
    assert.equal(top.language, 'go');
    assert.ok(top.startLine >= 1 && top.endLine >= top.startLine);
    assert.equal(top.metadata.repoOwner, 'acme');
    for (const m of ['profile:balanced', 'retrieval.vector', 'retrieval.bm25', 'retrieval.hybrid-rrf', 'post.code-aware', 'post.context-budget']) {
      assert.ok(res.appliedModules.includes(m), `${m} missing from ${res.appliedModules}`);
    }
    assert.equal(res.appliedModules[0], 'profile:balanced');
    assert.equal(res.contextMissing, false);
    assert.equal(res.noResults, false);
    assert.equal(res.noResultsReason, null);
    assert.match(res.instructions, /acme\/shop/);
    assert.match(res.augmentedPrompt, /src\/net\/retry\.go/);
  });

  test('finds code by paraphrase (identifier-split BM25 + vectors), generated copy ranked below', async () => {
    const res = await search({ owner: 'acme', name: 'shop', rawQuery: 'how is the access token refreshed before it expires?' });
    assert.equal(direct(res)[0].path, 'src/auth/session.ts', JSON.stringify(paths(res)));
    assert.match(direct(res)[0].snippet, /refreshAccessToken/);
    const gen = res.matches.findIndex((m) => m.path.startsWith('generated/'));
    assert.ok(gen !== 0, 'generated/ is penalized');
    // The architecture notes describe the LRU cache in the query's own words and may rank first;
    // the implementation must be the best code match, right behind them.
    const res2 = await search({ owner: 'acme', name: 'shop', rawQuery: 'least recently used cache eviction' });
    const d2 = direct(res2);
    const code = d2.findIndex((m) => m.language !== 'markdown');
    assert.equal(d2[code].path, 'src/storage/cache.rs', JSON.stringify(paths(res2)));
    assert.ok(code <= 1 && d2.slice(0, code).every((m) => m.path === 'docs/architecture.md'), JSON.stringify(paths(res2)));
  });

  test('path and language filters', async () => {
    const docs = await search({ owner: 'acme', name: 'shop', rawQuery: 'session token', filters: { paths: ['docs/**'] } });
    assert.ok(docs.matches.length > 0);
    assert.ok(docs.matches.every((m) => m.path.startsWith('docs/')), JSON.stringify(paths(docs)));
    const py = await search({ owner: 'acme', name: 'shop', rawQuery: 'discount', filters: { paths: '*.py' } });
    assert.ok(py.matches.length > 0 && py.matches.every((m) => m.path.endsWith('.py')), JSON.stringify(paths(py)));
    const go = await search({ owner: 'acme', name: 'shop', rawQuery: 'retry', filters: { language: ['golang'] } });
    assert.ok(go.matches.every((m) => m.language === 'go'), JSON.stringify(paths(go)));
    assert.ok(go.warnings.some((w) => w.includes('`golang` was read as `go`')), JSON.stringify(go.warnings));
    assert.ok(go.warnings.some((w) => w.includes('filters.language was read as filters.languages')));
  });

  test('a namespace never leaks into another', async () => {
    const shop = await search({ owner: 'acme', name: 'shop', rawQuery: 'QuantumFluxCapacitor charge for time travel gigawatts' });
    assert.ok(shop.matches.every((m) => m.metadata.repoName === 'shop' && !/Capacitor/.test(m.snippet)), JSON.stringify(paths(shop)));
    const other = await search({ owner: 'doc', name: 'brown', rawQuery: 'retry with backoff' });
    assert.ok(other.matches.length > 0);
    assert.ok(other.matches.every((m) => m.path === 'lib/flux.rb' && m.metadata.repoOwner === 'doc'));
  });

  test('neighbours are tagged with the span they surround', async () => {
    const res = await search({ owner: 'acme', name: 'shop', rawQuery: 'evict_oldest' });
    const neighbours = res.matches.filter((m) => m.metadata.neighborOfSpanHash);
    for (const n of neighbours) {
      const origin = res.matches.find((m) => m.metadata.spanHash === n.metadata.neighborOfSpanHash);
      assert.ok(origin, 'the origin of every neighbour is in the response');
      assert.equal(origin.path, n.path);
    }
    assert.ok(res.appliedModules.includes('post.neighbor-expand:LINEAR'));
  });

  test('profiles change the pipeline; unknown ones fall back with a warning', async () => {
    const legacy = await search({ owner: 'acme', name: 'shop', rawQuery: 'hash_key', profile: 'legacy' });
    assert.equal(legacy.appliedModules[0], 'profile:legacy');
    assert.ok(!legacy.appliedModules.includes('post.code-aware'));
    const aggressive = await search({ owner: 'acme', name: 'shop', rawQuery: 'refresh access token session', profile: 'Aggressive' });
    assert.equal(aggressive.profile, 'aggressive');
    assert.ok(aggressive.appliedModules.includes('post.parent-child'));
    assert.ok(aggressive.warnings.some((w) => w.includes('profile `Aggressive` was read as `aggressive`')));
    const unknown = await search({ owner: 'acme', name: 'shop', rawQuery: 'hash', profile: 'turbo' });
    assert.equal(unknown.profile, 'balanced');
    assert.ok(unknown.warnings.some((w) => w.includes('unknown profile `turbo`')));
  });

  test('debug output carries the plan and per-module timings', async () => {
    const res = await search({ owner: 'acme', name: 'shop', rawQuery: 'format_currency', debug: true });
    assert.equal(res.debug.plan.profile, 'balanced');
    const modules = res.debug.timings.map((t) => t.module);
    for (const m of ['input.sanitizer', 'retrieval.search', 'retrieval.fetch', 'post.code-aware', 'response']) assert.ok(modules.includes(m), `${m} in ${modules}`);
    assert.match(res.debug.keywordQuery, /"format"/);
  });

  test('a burst of concurrent searches all answer, each as it would alone', async () => {
    // More searches than the isolate's search slots (default 2): the rest wait their turn.
    const queries = ['RetryWithBackoff', 'session token', 'evict_oldest', 'discount', 'invoice total', 'cache'];
    const alone = [];
    for (const q of queries) alone.push(await search({ owner: 'acme', name: 'shop', rawQuery: q }));
    const burst = await Promise.all(
      [...queries, ...queries].map((q) => search({ owner: 'acme', name: 'shop', rawQuery: q })),
    );
    burst.forEach((res, i) => {
      const want = alone[i % queries.length];
      assert.ok(want.matches.length > 0, `${queries[i % queries.length]} finds something`);
      assert.deepEqual(res.matches.map((m) => m.metadata.chunkId), want.matches.map((m) => m.metadata.chunkId), queries[i % queries.length]);
    });
  });

  test('a repository without an index answers INDEX_NOT_READY', async () => {
    const res = await search({ owner: 'nobody', name: 'nothing', rawQuery: 'retry' });
    assert.equal(res.noResults, true);
    assert.equal(res.contextMissing, true);
    assert.equal(res.noResultsReason, 'INDEX_NOT_READY');
    assert.deepEqual(res.matches, []);
    const strict = await searchError({ owner: 'nobody', name: 'nothing', rawQuery: 'retry', allowEmptyContext: false });
    assert.deepEqual([strict.status, strict.code], [409, 'INDEX_NOT_READY']);
  });

  test('bad input is a 4xx with a stable code, never a 500', async () => {
    const cases = [
      [{ rawQuery: 'x', topK: 5 }, 'TUNING_PARAMETER_REJECTED'],
      [{ rawQuery: 'x', neighborLimit: 5, minScore: 0.2 }, 'TUNING_PARAMETER_REJECTED'],
      [{ rawQuery: '   ' }, 'EMPTY_QUERY'],
      [{}, 'EMPTY_QUERY'],
      [{ rawQuery: 'x', colour: 'red' }, 'UNKNOWN_FIELD'],
      [{ rawQuery: 'x', filters: { size: 1 } }, 'UNKNOWN_FIELD'],
      [{ rawQuery: 42 }, 'INVALID_REQUEST'],
      [{ rawQuery: 'x', owner: '../etc', name: 'x' }, 'INVALID_REQUEST'],
      [[1, 2], 'INVALID_REQUEST'],
    ];
    for (const [body, code] of cases) {
      const e = await searchError(body);
      assert.equal(e.code, code, JSON.stringify(body));
    }
    const tuning = await searchError({ rawQuery: 'x', topK: 5 });
    assert.match(tuning.message, /topK/);
    assert.match(tuning.message, /balanced/);
    const broken = await er.request('POST', '/v1/search', { body: '{"rawQuery": ', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.status, 400);
    assert.equal(broken.body.error.code, 'INVALID_JSON');
    const get = await er.request('GET', '/v1/search');
    assert.equal(get.status, 405);
    const nowhere = await er.request('POST', '/v1/search/elsewhere', { body: { rawQuery: 'x' } });
    assert.equal(nowhere.status, 404);
    // FTS5 syntax and odd characters in the query are only text.
    for (const q of ['"unbalanced AND (NEAR* OR -x:y', "'; DROP TABLE chunks; --", '*', '{a b}^', '\u0000\u0001 retry', 'ретрай 重试 ✓']) {
      const res = await search({ owner: 'acme', name: 'shop', rawQuery: q });
      assert.ok(!res.warnings.some((w) => w.includes('failed')), `${q}: ${res.warnings}`);
    }
  });
});

describe('simple and global tools', () => {
  test('simple fills owner/name from the last READY repository', async () => {
    const res = await search({ rawQuery: 'charge the capacitor' }, '/v1/search/simple');
    assert.deepEqual([res.repoOwner, res.repoName], ['doc', 'brown']);
    assert.ok(res.warnings.some((w) => w.includes('filled automatically with doc/brown')), JSON.stringify(res.warnings));
    const ignored = await search({ rawQuery: 'retry', filters: { paths: 'x' } }, '/v1/search/simple');
    assert.ok(ignored.warnings.some((w) => w.includes('`filters` is not accepted by repo.rag_search_simple')));
  });

  test('global searches every READY repository and labels matches', async () => {
    const res = await search({ rawQuery: 'retry with backoff', displayRepoOwner: 'all', displayRepoName: 'repos' }, '/v1/search/global');
    const repos = new Set(res.matches.map((m) => `${m.metadata.repoOwner}/${m.metadata.repoName}`));
    assert.deepEqual([...repos].sort(), ['acme/shop', 'doc/brown']);
    assert.deepEqual([res.repoOwner, res.repoName], ['all', 'repos']);
    const simple = await search({ rawQuery: 'retry with backoff' }, '/v1/search/simple-global');
    assert.ok(simple.matches.length > 0);
  });
});

describe('edgerag search (CLI)', () => {
  const cli = async (...args) => {
    try {
      const { stdout, stderr } = await promisify(execFile)(await cliBinary(), ['search', ...args, '--server', er.url]);
      return { code: 0, stdout, stderr };
    } catch (e) {
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  test('prints ranked matches with paths and line spans', async () => {
    const out = await cli('where', 'is', 'RetryWithBackoff', '--repo', 'acme/shop');
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^acme\/shop · profile balanced · \d+ match/);
    assert.match(out.stdout, /\n {3}1\. src\/net\/retry\.go:\d+-\d+/);
    assert.match(out.stdout, /modules: profile:balanced/);
    const json = await cli('LruCache', '--repo', 'acme/shop', '--json', '--profile', 'conservative');
    const body = JSON.parse(json.stdout);
    await assertSchema('search-response', body);
    assert.equal(body.profile, 'conservative');
    const bad = await cli('x', '--repo', 'nobody/nothing');
    assert.equal(bad.code, 0, 'an empty answer is still an answer');
    assert.match(bad.stdout, /no matches \(INDEX_NOT_READY\)/);
  });
});

describe('MCP over streamable HTTP', () => {
  const rpc = async (message, expectStatus = 200) => {
    const r = await er.request('POST', '/mcp', { body: message, headers: { accept: 'application/json, text/event-stream' } });
    assert.equal(r.status, expectStatus, r.text);
    return r.body;
  };

  test('initialize, list tools, call them', async () => {
    const init = await rpc({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
    assert.equal(init.result.protocolVersion, '2025-03-26');
    assert.ok(init.result.capabilities.tools);
    const none = await er.request('POST', '/mcp', { body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    assert.equal(none.status, 202);
    const list = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    assert.deepEqual(
      list.result.tools.map((t) => t.name),
      [
        'repo.rag_search',
        'repo.rag_search_simple',
        'repo.rag_search_global',
        'repo.rag_search_simple_global',
        'repo.rag_index_status',
        'repo.find_symbol',
        'repo.symbol_references',
        'repo.read_file_range',
        'repo.list_files',
        'repo.outline',
        'repo.grep',
        'repo.map',
        'repo.impact',
      ],
    );
    assert.ok(list.result.tools.every((t) => t.inputSchema.type === 'object' && t.description.length > 20));

    const call = await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'repo.rag_search', arguments: { owner: 'acme', name: 'shop', rawQuery: 'LruCache put evicts' } } });
    assert.equal(call.id, 3);
    assert.equal(call.result.isError, false);
    await assertSchema('search-response', call.result.structuredContent);
    assert.equal(call.result.structuredContent.matches[0].path, 'src/storage/cache.rs');
    assert.deepEqual(JSON.parse(call.result.content[0].text), call.result.structuredContent);

    const status = await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'repo.rag_index_status', arguments: { repoOwner: 'acme', repoName: 'shop' } } });
    assert.equal(status.result.isError, false);
    assert.equal(status.result.structuredContent.ready, true);
    await assertSchema('repo-status', status.result.structuredContent);
    const all = await rpc({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'repo.rag_index_status', arguments: {} } });
    assert.equal(all.result.structuredContent.repos.length, 2);
  });

  test('tool errors, protocol errors and batches', async () => {
    const tuning = await rpc({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'repo.rag_search', arguments: { rawQuery: 'x', topK: 3 } } });
    assert.equal(tuning.result.isError, true);
    assert.equal(tuning.result.structuredContent.error.code, 'TUNING_PARAMETER_REJECTED');
    const missing = await rpc({ jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'repo.rag_index_status', arguments: { repoOwner: 'x', repoName: 'y' } } });
    assert.equal(missing.result.isError, true);
    const unknown = await rpc({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'repo.nope' } });
    assert.equal(unknown.error.code, -32602);
    const method = await rpc({ jsonrpc: '2.0', id: 7, method: 'does/not/exist' });
    assert.equal(method.error.code, -32601);
    const parse = await er.request('POST', '/mcp', { body: '{"jsonrpc": "2.0",', headers: { 'content-type': 'application/json' } });
    assert.equal(parse.status, 400);
    assert.equal(parse.body.error.code, -32700);
    const batch = await rpc([
      { jsonrpc: '2.0', id: 10, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: {} },
      { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'repo.rag_search_simple', arguments: { rawQuery: 'flux' } } },
    ]);
    assert.deepEqual(batch.map((r) => r.id), [10, 11]);
    const get = await er.request('GET', '/mcp');
    assert.equal(get.status, 405);
  });
});

describe('configured profiles', () => {
  test('SEARCH_PROFILES overrides are clamped by the guard and reported', async () => {
    // Restart on the same state with the configuration var set (keep the directory on stop).
    const dir = er.persistDir;
    const keep = process.env.EDGERAG_E2E_KEEP;
    process.env.EDGERAG_E2E_KEEP = '1';
    await er.stop();
    if (keep === undefined) delete process.env.EDGERAG_E2E_KEEP;
    else process.env.EDGERAG_E2E_KEEP = keep;
    cleanup.push(dir);
    er = await startEdgerag({
      persistDir: dir,
      vars: {
        OPENAI_BASE_URL: embed.url,
        SEARCH_CONCURRENCY: 'many',
        KEYWORD_INDEX_CACHE_MB: 'lots',
        SEARCH_PROFILES: JSON.stringify({
          profiles: {
            balanced: { retrieval: { topK: 100 }, postProcessing: { maxContextTokens: 9000, neighbor: { strategy: 'CALL_GRAPH' } } },
            docs: { extends: 'conservative', generation: { locale: 'pt', instructionsTemplate: 'Responda {{query}} sobre {{repoOwner}}/{{repoName}} em {{locale}}.' } },
          },
        }),
      },
    });
    const res = await search({ owner: 'acme', name: 'shop', rawQuery: 'cache' });
    assert.ok(res.warnings.some((w) => w.includes('retrieval.topK = 100') && w.includes('40 applied')), JSON.stringify(res.warnings));
    assert.ok(res.warnings.some((w) => w.includes('postProcessing.maxContextTokens = 9000')));
    // The repository is code with a graph: CALL_GRAPH runs as configured, without a fallback.
    assert.ok(!res.warnings.some((w) => w.includes('CALL_GRAPH')), JSON.stringify(res.warnings));
    assert.ok(res.appliedModules.includes('guard.clamp'));
    // An unusable search-slot count is reported and the default used (the search still answers).
    assert.ok(res.warnings.some((w) => w.startsWith('SEARCH_CONCURRENCY must be')), JSON.stringify(res.warnings));
    assert.ok(res.warnings.some((w) => w.startsWith('KEYWORD_INDEX_CACHE_MB must be')), JSON.stringify(res.warnings));
    assert.ok(res.appliedModules.includes('post.neighbor-expand:CALL_GRAPH'), JSON.stringify(res.appliedModules));
    assert.match(er.logs(), /"event":"rag_parameter_guard"/);
    const docs = await search({ owner: 'acme', name: 'shop', rawQuery: 'invoice total', profile: 'docs' });
    assert.equal(docs.profile, 'docs');
    assert.equal(docs.instructions, 'Responda invoice total sobre acme/shop em pt.');
  });
});

describe('in-memory BM25 copies', () => {
  const queries = [
    'RetryWithBackoff', 'how is the access token refreshed before it expires?', 'least recently used cache eviction',
    'parse the config file', 'http handler returns an error', 'user session', 'test', 'value', 'checkout cart total price',
  ];
  const copies = async (namespaces, filters = []) => {
    const r = await er.request('POST', '/__test/search/keyword-copies', { body: { namespaces, queries, filters, limit: 20 } });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };

  test('a namespace at rest is answered from its copy with exactly FTS5\'s ids and scores', async () => {
    const filters = [{ languages: ['go'] }, { paths: ['src/**/*.ts'] }, { languages: ['rust', 'python'] }];
    const r = await copies(['repo:acme/shop', 'repo:doc/brown'], filters);
    assert.deepEqual(r.mismatches, []);
    assert.equal(r.asked, queries.length * (filters.length + 1));
    // Every query of both namespaces came from the copies (neither holds a token FTS5 might read otherwise).
    assert.equal(r.answeredByCopy, 2 * r.asked);
    assert.ok(r.hits > 50, `only ${r.hits} hits to compare`);
  });

  test('a write moves the namespace\'s generation: the next query rebuilds its copy', async () => {
    // (Runs last: it adds a READY repository.)
    const upload = (files) => er.indexFiles('live/notes', files);
    const ask = async (queries) => {
      const r = await er.request('POST', '/__test/search/keyword-copies', { body: { namespaces: ['repo:live/notes'], queries, limit: 10 } });
      assert.equal(r.status, 200, r.text);
      return r.body;
    };
    await upload([{ path: 'src/a.py', content: 'def retry_alpha():\n    return 1\n' }]);
    const before = await ask(['retry alpha', 'omega']);
    assert.deepEqual(before.mismatches, []);
    assert.equal(before.answeredByCopy, 2);
    await upload([{ path: 'src/b.py', content: 'def retry_omega():\n    return 2\n' }]);
    // A copy kept from before the write would not know `omega`: FTS5 does.
    const after = await ask(['retry alpha', 'omega']);
    assert.deepEqual(after.mismatches, []);
    assert.equal(after.answeredByCopy, 2);
    assert.ok(after.hits > before.hits, `${before.hits} → ${after.hits}`);
  });

  test('a search builds a missing copy after it answers, one build however many ask', async () => {
    // (Runs last: it adds a READY repository.)
    const ns = 'repo:bg/notes';
    const files = [
      { path: 'src/retry.py', content: 'def retry_session(value):\n    """Retry the session with backoff."""\n    return value\n' },
      { path: 'docs/retry.md', content: '# Retries\n\nThe session is retried with exponential backoff.\n' },
    ];
    await er.indexFiles('bg/notes', files);
    // At rest: unchanged for KEYWORD_INDEX_QUIET_MS (2 s by default).
    await new Promise((r) => setTimeout(r, 2200));
    const state = async (body = {}) => {
      const r = await er.request('POST', '/__test/search/keyword-copies/state', { body: { namespace: ns, ...body } });
      assert.equal(r.status, 200, r.text);
      return r.body;
    };
    // The job's end stored the namespace's snapshot: the isolate's copy is read from it (or built
    // from the rows when there is none), once.
    const built = () =>
      er.logs().split('\n').filter((l) => /"event":"keyword_copy_(built|loaded)"/.test(l) && l.includes(ns));
    const ask = async () => {
      const r = await er.request('POST', '/v1/search', { body: { owner: 'bg', name: 'notes', rawQuery: 'retry the session with backoff' } });
      assert.equal(r.status, 200, r.text);
      return r.body.matches.map((m) => `${m.path}:${m.startLine}:${m.score}`);
    };
    // Every background build waits 1.5 s first: the searches must answer without it.
    assert.deepEqual(await state({ buildDelayMs: 1500 }), { held: false, building: false });
    try {
      const first = await Promise.all([ask(), ask(), ask(), ask()]);
      assert.ok(first[0].length > 0, 'nothing matched');
      for (const answer of first) assert.deepEqual(answer, first[0]);
      assert.deepEqual(await state(), { held: false, building: true }, 'answered before the copy was built');
      let now = await state();
      for (let i = 0; now.building && i < 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        now = await state();
      }
      assert.deepEqual(now, { held: true, building: false });
      assert.equal(built().length, 1, built().join('\n'));
      // Answered from the copy now: the same matches, the same scores.
      assert.deepEqual(await ask(), first[0]);
    } finally {
      await state({ buildDelayMs: 0 });
    }
  });

  test('a namespace holding a character past what was measured of FTS5\'s tokenizer stays with FTS5', async () => {
    // (Runs last: it adds a READY repository.) Ø, ł and combining accents are measured and copied;
    // a tag character (U+E0041) is not.
    const files = [
      { path: 'docs/strasse.md', content: '# Die Straße\n\nSmørrebrød, Łódź, cafe\u0301: retry the session. \u{E0041}\n' },
      { path: 'src/cache.py', content: 'def retry_session(value):\n    return value\n' },
    ];
    await er.indexFiles('intl/notes', files);
    const r = await copies(['repo:intl/notes']);
    assert.deepEqual(r.mismatches, []);
    assert.ok(r.hits > 0, 'the namespace matched nothing');
    assert.equal(r.answeredByCopy, 0);
  });
});
