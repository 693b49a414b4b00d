// Scoped API keys end to end in workerd: the API token mints keys for `a/*`, a read-only key and an
// admin key; a key for `a/*` can use its own repositories but cannot read, search, write, delete or
// list `b/*` through HTTP or MCP; a global search with it never returns `b`; a revoked key is
// refused on its next request; writes are audited; a key over its rate limit gets 429 +
// Retry-After. Reads are private here (PUBLIC_READS=false) so anonymous requests are refused too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { startEdgerag, startHashEmbedder } from './harness.mjs';

let embed;
let er;
let keyA; // read+write on a/*
let readerA; // read on a/x only
let admin; // admin on a/* (admin routes need no namespace)

const files = (word) => [
  { path: 'src/lib.rs', content: `/// ${word} handles shared widgets.\npub fn ${word}_widget() -> u32 {\n    42\n}\n` },
  { path: 'README.md', content: `# ${word}\n\nThe ${word} project explains widgets.\n` },
];

async function mint(body, token) {
  const r = await er.request('POST', '/v1/keys', { body, token });
  assert.equal(r.status, 201, r.text);
  assert.match(r.body.token, /^erk_[0-9a-f]{16}_[0-9a-f]{64}$/);
  assert.equal(r.body.key.id, r.body.token.slice(4, 20));
  return r.body;
}

async function indexed(repo, word, token = er.token) {
  return (await er.indexFiles(repo, files(word), { token })).id;
}

function expectDenied(r, status, code) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body?.error?.code, code, r.text);
}

async function mcp(token, name, args) {
  const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
  const r = await er.request('POST', '/mcp', { body, token, headers: { accept: 'application/json, text/event-stream' } });
  assert.equal(r.status, 200, r.text);
  return r.body.result;
}

const toolJson = (result) => JSON.parse(result.content[0].text);

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, PUBLIC_READS: 'false', RATE_LIMIT_PER_MINUTE: '1000' } });
  keyA = await mint({ name: 'team a', scopes: ['read', 'write'], namespaces: ['a/*'] });
  readerA = await mint({ name: 'a reader', scopes: ['read'], namespaces: ['a/x'] });
  admin = await mint({ name: 'ops', scopes: ['admin'], namespaces: ['a/*'] });
  // `b/y` is written with the API token, `a/x` with a's own key.
  await indexed('b/y', 'bravo');
  await indexed('a/x', 'alpha', keyA.token);
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

describe('minting and listing keys', () => {
  test('only the API token or an admin key may mint, list or revoke keys', async () => {
    const body = { name: 'x', scopes: ['read'], namespaces: ['a/*'] };
    expectDenied(await er.request('POST', '/v1/keys', { body, token: null }), 401, 'UNAUTHORIZED');
    expectDenied(await er.request('POST', '/v1/keys', { body, token: keyA.token }), 403, 'SCOPE_FORBIDDEN');
    expectDenied(await er.request('GET', '/v1/keys', { token: readerA.token }), 403, 'SCOPE_FORBIDDEN');
    expectDenied(await er.request('GET', '/v1/audit', { token: keyA.token }), 403, 'SCOPE_FORBIDDEN');
    const byAdmin = await mint(body, admin.token);
    assert.equal(byAdmin.key.createdBy, admin.key.id);
  });

  test('a listing shows every key but never a secret or its hash', async () => {
    const r = await er.request('GET', '/v1/keys');
    assert.equal(r.status, 200, r.text);
    const ids = r.body.keys.map((k) => k.id);
    for (const k of [keyA, readerA, admin]) assert.ok(ids.includes(k.key.id), ids.join());
    const a = r.body.keys.find((k) => k.id === keyA.key.id);
    assert.deepEqual(a.scopes, ['read', 'write']);
    assert.deepEqual(a.namespaces, ['a/*']);
    assert.ok(!r.text.includes(keyA.token.slice(21)), 'the secret is listed');
    assert.ok(!/secret/i.test(r.text), r.text);
    const rows = await er.d1('SELECT secret_hash FROM api_keys WHERE id = ?', keyA.key.id);
    assert.equal(rows.length, 1);
    assert.ok(!rows[0].secret_hash.includes(keyA.token.slice(21)));
    assert.ok(!er.logs().includes(keyA.token.slice(21)), 'a secret reached the log');
  });

  test('bad key requests are 400 with a stable code', async () => {
    for (const body of [
      { name: '', scopes: ['read'], namespaces: ['a/*'] },
      { name: 'n', scopes: [], namespaces: ['a/*'] },
      { name: 'n', scopes: ['root'], namespaces: ['a/*'] },
      { name: 'n', scopes: ['read'], namespaces: [] },
      { name: 'n', scopes: ['read'], namespaces: ['a'] },
      { name: 'n', scopes: ['read'], namespaces: ['*/x'] },
    ]) {
      expectDenied(await er.request('POST', '/v1/keys', { body }), 400, 'INVALID_KEY_REQUEST');
    }
    expectDenied(await er.request('POST', '/v1/keys', { body: { name: 'n', scopes: ['read'], namespaces: ['a/*'], extra: 1 } }), 400, 'INVALID_REQUEST');
    expectDenied(await er.request('DELETE', '/v1/keys/0000000000000000'), 404, 'KEY_NOT_FOUND');
  });
});

describe('a key for a/* over HTTP', () => {
  test('reads and writes its own namespace', async () => {
    const status = await er.request('GET', '/v1/repos/a/x/status', { token: keyA.token });
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.ready, true);
    const filesR = await er.request('GET', '/v1/repos/a/x/files', { token: readerA.token });
    assert.equal(filesR.status, 200, filesR.text);
    assert.equal(filesR.body.files.length, 2);
  });

  test('cannot read, write, delete or list b/*', async () => {
    const t = keyA.token;
    expectDenied(await er.request('GET', '/v1/repos/b/y/status', { token: t }), 403, 'NAMESPACE_FORBIDDEN');
    expectDenied(await er.request('GET', '/v1/repos/b/y/files', { token: t }), 403, 'NAMESPACE_FORBIDDEN');
    expectDenied(await er.request('POST', '/v1/repos/b/y/files', { body: { files: files('evil') }, token: t }), 403, 'NAMESPACE_FORBIDDEN');
    expectDenied(await er.request('POST', '/v1/repos/b/y/index', { body: {}, token: t }), 403, 'NAMESPACE_FORBIDDEN');
    expectDenied(await er.request('DELETE', '/v1/repos/b/y/files', { body: { paths: ['README.md'] }, token: t }), 403, 'NAMESPACE_FORBIDDEN');
    expectDenied(await er.request('DELETE', '/v1/repos/b/y', { token: t }), 403, 'NAMESPACE_FORBIDDEN');
    // Case does not get around a pattern.
    expectDenied(await er.request('GET', '/v1/repos/B/y/status', { token: t }), 403, 'NAMESPACE_FORBIDDEN');
    const list = await er.request('GET', '/v1/repos', { token: t });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.repos.map((r) => `${r.owner}/${r.name}`), ['a/x']);
    const all = await er.request('GET', '/v1/repos');
    assert.deepEqual(all.body.repos.map((r) => `${r.owner}/${r.name}`), ['a/x', 'b/y']);
    // b's job is as unknown to a's key as a job that does not exist.
    const bJob = (await er.d1("SELECT id FROM repo_rag_index_job WHERE namespace = 'repo:b/y'"))[0].id;
    expectDenied(await er.request('GET', `/v1/jobs/${bJob}`, { token: t }), 404, 'JOB_NOT_FOUND');
    assert.equal((await er.request('GET', `/v1/jobs/${bJob}`)).status, 200);
    // b is untouched.
    const bFiles = await er.request('GET', '/v1/repos/b/y/files');
    assert.equal(bFiles.body.files.length, 2);
  });

  test('a read-only key cannot write even its own namespace', async () => {
    expectDenied(await er.request('POST', '/v1/repos/a/x/files', { body: { files: files('x') }, token: readerA.token }), 403, 'SCOPE_FORBIDDEN');
    expectDenied(await er.request('GET', '/v1/repos/a/other/status', { token: readerA.token }), 403, 'NAMESPACE_FORBIDDEN');
  });

  test('searches never reach b', async () => {
    const t = keyA.token;
    expectDenied(await er.request('POST', '/v1/search', { body: { owner: 'b', name: 'y', rawQuery: 'bravo widget' }, token: t }), 403, 'NAMESPACE_FORBIDDEN');
    expectDenied(await er.request('POST', '/v1/search', { body: { repoOwner: 'b', repoName: 'y', rawQuery: 'bravo' }, token: t }), 403, 'NAMESPACE_FORBIDDEN');
    for (const path of ['/v1/search/global', '/v1/search/simple-global']) {
      const r = await er.request('POST', path, { body: { rawQuery: 'bravo widget' }, token: t });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.body.matches.length > 0, `${path}: ${r.text}`);
      assert.ok(r.body.matches.every((m) => m.metadata.repoOwner === 'a'), `${path}: ${r.text}`);
      assert.ok(!r.text.includes('bravo_widget'), `${path} leaked b: ${r.text}`);
    }
    // The same global search with the API token does reach b (the filter is the key's).
    const root = await er.request('POST', '/v1/search/global', { body: { rawQuery: 'bravo widget' } });
    assert.ok(root.body.matches.some((m) => m.metadata.repoOwner === 'b'), root.text);
    // `simple` fills from the last READY repository the key may read (b/y is not it).
    const simple = await er.request('POST', '/v1/search/simple', { body: { rawQuery: 'widget' }, token: t });
    assert.equal(simple.status, 200, simple.text);
    assert.ok(simple.body.matches.length > 0 && simple.body.matches.every((m) => m.metadata.repoOwner === 'a'), simple.text);
  });
});

describe('a key for a/* over MCP', () => {
  test('tool calls on b are refused and listings leave b out', async () => {
    const t = keyA.token;
    const denied = await mcp(t, 'repo.rag_search', { repoOwner: 'b', repoName: 'y', rawQuery: 'bravo' });
    assert.equal(denied.isError, true);
    assert.match(denied.content[0].text, /NAMESPACE_FORBIDDEN/);
    const status = await mcp(t, 'repo.rag_index_status', { repoOwner: 'b', repoName: 'y' });
    assert.equal(status.isError, true);
    assert.match(status.content[0].text, /NAMESPACE_FORBIDDEN/);
    // Both spellings at once, naming two repositories: the access check reads the one the tool
    // answers for, so a key for a/x cannot read b/y's status by naming a/x beside it.
    const mixed = await mcp(t, 'repo.rag_index_status', { owner: 'a', name: 'x', repoOwner: 'b', repoName: 'y' });
    assert.equal(mixed.isError, true, JSON.stringify(mixed));
    assert.match(mixed.content[0].text, /NAMESPACE_FORBIDDEN/);
    const padded = await mcp(t, 'repo.rag_index_status', { repoOwner: ' b ', repoName: 'y ' });
    assert.equal(padded.isError, true, JSON.stringify(padded));
    assert.match(padded.content[0].text, /NAMESPACE_FORBIDDEN/);
    const own = await mcp(t, 'repo.rag_index_status', { repoOwner: 'a', repoName: 'x' });
    assert.ok(!own.isError, JSON.stringify(own));
    const list = toolJson(await mcp(t, 'repo.rag_index_status', {}));
    assert.deepEqual(list.repos.map((r) => `${r.owner}/${r.name}`), ['a/x']);
    const global = toolJson(await mcp(t, 'repo.rag_search_global', { rawQuery: 'bravo widget' }));
    assert.ok(global.matches.length > 0);
    assert.ok(global.matches.every((m) => m.metadata.repoOwner === 'a'), JSON.stringify(global));
  });
});

describe('revocation, tokens and audit', () => {
  test('anonymous and unknown tokens get stable 401s', async () => {
    expectDenied(await er.request('GET', '/v1/repos', { token: null }), 401, 'UNAUTHORIZED');
    expectDenied(await er.request('GET', '/v1/repos', { token: 'wrong' }), 401, 'UNAUTHORIZED');
    const forged = `${keyA.token.slice(0, 21)}${'0'.repeat(64)}`;
    const r = await er.request('GET', '/v1/repos', { token: forged });
    expectDenied(r, 401, 'UNAUTHORIZED');
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
  });

  test('a revoked key is refused on its next request', async () => {
    const k = await mint({ name: 'short-lived', scopes: ['read'], namespaces: ['a/*'] });
    assert.equal((await er.request('GET', '/v1/repos/a/x/status', { token: k.token })).status, 200);
    const del = await er.request('DELETE', `/v1/keys/${k.key.id}`, { token: admin.token });
    assert.equal(del.status, 200, del.text);
    assert.ok(del.body.revokedAt);
    expectDenied(await er.request('GET', '/v1/repos/a/x/status', { token: k.token }), 401, 'KEY_REVOKED');
    const listed = (await er.request('GET', '/v1/keys')).body.keys.find((x) => x.id === k.key.id);
    assert.ok(listed.revokedAt);
  });

  test('every write is in the audit log with its key, route, namespace and job', async () => {
    const job = await indexed('a/x', 'again', keyA.token);
    const r = await er.request('GET', `/v1/audit?key=${keyA.key.id}`, { token: admin.token });
    assert.equal(r.status, 200, r.text);
    const rec = r.body.records.find((x) => x.jobId === job);
    assert.ok(rec, r.text);
    assert.deepEqual(
      { keyId: rec.keyId, method: rec.method, route: rec.route, namespace: rec.namespace, status: rec.status },
      { keyId: keyA.key.id, method: 'POST', route: '/v1/repos/a/x/files', namespace: 'repo:a/x', status: 202 },
    );
    assert.match(rec.at, /^\d{4}-\d\d-\d\dT/);
    // Reads are not audited; the API token's writes are, under its own name.
    const all = (await er.request('GET', '/v1/audit?limit=1000')).body.records;
    assert.ok(all.every((x) => x.method !== 'GET'), JSON.stringify(all));
    assert.ok(all.some((x) => x.keyId === 'api-token' && x.route === '/v1/keys'), JSON.stringify(all));
    expectDenied(await er.request('GET', '/v1/audit?limit=0'), 400, 'INVALID_REQUEST');
  });
});

describe('rate limits', () => {
  test('a key over its per-minute limit gets 429 with Retry-After; other keys are unaffected', async () => {
    const limited = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, PUBLIC_READS: 'false', RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const made = await limited.request('POST', '/v1/keys', { body: { name: 'l', scopes: ['read'], namespaces: ['*'] } });
      assert.equal(made.status, 201, made.text);
      const t = made.body.token;
      const statuses = [];
      let last;
      for (let i = 0; i < 8; i++) {
        last = await limited.request('GET', '/v1/repos', { token: t });
        statuses.push(last.status);
      }
      // A window boundary may fall inside the loop (at most 6 OKs then): at least one 429 in 8, none before the 4th.
      assert.ok(statuses.includes(429), statuses.join());
      const refused = statuses.indexOf(429);
      assert.ok(refused >= 3, statuses.join());
      const r429 = await limited.request('GET', '/v1/repos', { token: t });
      if (r429.status === 429) {
        assert.equal(r429.body.error.code, 'RATE_LIMITED');
        const after = Number(r429.headers.get('retry-after'));
        assert.ok(after >= 1 && after <= 60, r429.headers.get('retry-after'));
      }
      // The API token is not a key: never limited.
      for (let i = 0; i < 5; i++) assert.equal((await limited.request('GET', '/v1/repos')).status, 200);
    } finally {
      await limited.stop();
    }
  });
});
