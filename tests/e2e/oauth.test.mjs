// Sign-in as the MCP authorization spec (2025-11-25) asks, against the fake GitHub: the official
// MCP TypeScript SDK's OAuth client discovers the metadata from the 401, registers, signs in (the
// browser's steps driven here: consent page, GitHub, callback), calls tools, refreshes, and is
// refused a repository its user may not pull. Then the hostile cases, each a 4xx with a stable
// code and nothing issued; a client known by its metadata document; admins named in config.
// One worker for the whole file.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, auth } from '@modelcontextprotocol/sdk/client/auth.js';

import { startEdgerag, startGitHubMock, startHashEmbedder } from './harness.mjs';
import { createServer } from 'node:http';

const CLIENT_ID = 'Iv1.e2e';
const CLIENT_SECRET = 'github-client-secret';
const ACCESS_SECONDS = 900;
const CALLBACK = 'http://127.0.0.1:9/callback'; // never contacted: the test reads the redirect

let embed;
let gh;
let er;
const users = {
  alice: { id: 1, repos: ['acme/app'] },
  carol: { id: 3, repos: [] },
};

before(async () => {
  embed = await startHashEmbedder();
  gh = await startGitHubMock({}, { oauth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, users } });
  er = await startEdgerag({
    vars: {
      OPENAI_BASE_URL: embed.url,
      PUBLIC_READS: 'false',
      GITHUB_API_URL: gh.url,
      GITHUB_OAUTH_URL: gh.url,
      GITHUB_CLIENT_ID: CLIENT_ID,
      GITHUB_CLIENT_SECRET: CLIENT_SECRET,
      OAUTH_ADMINS: 'carol',
      OAUTH_ACCESS_TOKEN_SECONDS: String(ACCESS_SECONDS),
    },
  });
  for (const [repo, files] of [
    ['other/secret', [{ path: 'hidden.py', content: 'def hidden_symbol():\n    return 1\n' }]],
    ['acme/app', [{ path: 'app/util.py', content: 'def slugify(name):\n    return name.lower()\n' }]],
  ]) {
    await er.indexFiles(repo, files);
  }
});

after(async () => {
  await er?.stop();
  await gh?.stop();
  await embed?.stop();
});

const b64url = (buf) => buf.toString('base64url');
const pkcePair = () => {
  const verifier = b64url(randomBytes(32));
  return { verifier, challenge: b64url(createHash('sha256').update(verifier).digest()) };
};
const form = (fields) => ({ 'content-type': 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() });
const post = async (path, fields) => {
  const { body, ...headers } = form(fields);
  const r = await fetch(`${er.url}${path}`, { method: 'POST', headers, body });
  return { status: r.status, body: await r.json() };
};
const issuedAccessTokens = async () => (await er.d1("SELECT COUNT(*) AS n FROM oauth_tokens WHERE kind = 'access'"))[0].n;

/**
 * The browser: the consent page (keeps its cookie), "Sign in with GitHub", GitHub (signed in as
 * `login`), the worker's callback. Returns the client's redirect (with the code) and what a
 * replay needs.
 */
async function browse(authorizationUrl, login) {
  gh.signedIn = login;
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  const html = await page.text();
  assert.equal(page.status, 200, html);
  assert.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  const cookie = page.headers.get('set-cookie').split(';')[0];
  const request = html.match(/name="request" value="([^"]+)"/)[1];
  const consent = await fetch(`${er.url}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request, decision: 'allow' }),
  });
  assert.equal(consent.status, 302, await consent.text());
  const github = await fetch(consent.headers.get('location'), { redirect: 'manual' });
  assert.equal(github.status, 302);
  const callbackUrl = github.headers.get('location');
  assert.ok(callbackUrl.startsWith(`${er.url}/oauth/callback?`), callbackUrl);
  const back = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie } });
  assert.equal(back.status, 302, await back.text());
  return { redirect: new URL(back.headers.get('location')), callbackUrl, cookie, request };
}

/** A registered public client (RFC 7591). */
async function register(redirectUris = [CALLBACK]) {
  const r = await fetch(`${er.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'raw e2e client', redirect_uris: redirectUris, token_endpoint_auth_method: 'none' }),
  });
  assert.equal(r.status, 201);
  return (await r.json()).client_id;
}

function authorizeUrl({ clientId, redirectUri = CALLBACK, challenge, resource = `${er.url}/mcp`, scope, state = 'client-state', method = 'S256' }) {
  const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state });
  if (challenge) q.set('code_challenge', challenge);
  if (method) q.set('code_challenge_method', method);
  if (resource) q.set('resource', resource);
  if (scope) q.set('scope', scope);
  return `${er.url}/oauth/authorize?${q}`;
}

/** A code for `login` through the whole browser flow. */
async function code(clientId, login, opts = {}) {
  const { verifier, challenge } = pkcePair();
  const flow = await browse(authorizeUrl({ clientId, challenge, ...opts }), login);
  assert.equal(flow.redirect.searchParams.get('state'), opts.state ?? 'client-state');
  assert.equal(flow.redirect.searchParams.get('iss'), er.url);
  return { code: flow.redirect.searchParams.get('code'), verifier, flow };
}

async function tokens(clientId, login, opts = {}) {
  const c = await code(clientId, login, opts);
  const r = await post('/oauth/token', {
    grant_type: 'authorization_code',
    code: c.code,
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_verifier: c.verifier,
    resource: opts.resource ?? `${er.url}/mcp`,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** An in-memory OAuthClientProvider, as an MCP client application keeps one. */
class MemoryProvider {
  constructor() {
    this.redirectUrl = CALLBACK;
    this.clientMetadata = {
      client_name: 'edgerag e2e (MCP SDK)',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() { return 'sdk-state'; }
  clientInformation() { return this.client; }
  saveClientInformation(c) { this.client = c; }
  tokens() { return this.saved; }
  saveTokens(t) { this.saved = t; }
  redirectToAuthorization(url) { this.authorizationUrl = url; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
}

const mine = { repoOwner: 'acme', repoName: 'app' };
const theirs = { repoOwner: 'other', repoName: 'secret' };

describe('sign-in with GitHub (OAuth 2.1)', () => {
  test('the MCP SDK discovers, registers, signs in, calls tools, refreshes, and is refused what GitHub refuses', async () => {
    const serverUrl = new URL(`${er.url}/mcp`);
    // Without a token: 401 naming the protected-resource metadata.
    const anon = await er.request('POST', '/mcp', { token: null, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    assert.equal(anon.status, 401);
    assert.match(anon.headers.get('www-authenticate'), new RegExp(`resource_metadata="${er.url}/.well-known/oauth-protected-resource/mcp"`));

    const provider = new MemoryProvider();
    const first = new Client({ name: 'edgerag-e2e', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    await assert.rejects(first.connect(transport), UnauthorizedError);
    assert.ok(provider.client?.client_id?.startsWith('ec_'), 'registered by RFC 7591');
    const authUrl = new URL(provider.authorizationUrl);
    assert.equal(authUrl.origin + authUrl.pathname, `${er.url}/oauth/authorize`);
    assert.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authUrl.searchParams.get('resource'), `${er.url}/mcp`);

    const { redirect } = await browse(provider.authorizationUrl, 'alice');
    assert.equal(redirect.searchParams.get('state'), 'sdk-state');
    await transport.finishAuth(redirect.searchParams.get('code'));
    assert.ok(provider.saved.access_token.startsWith('eat_') && provider.saved.refresh_token.startsWith('ert_'));

    const client = new Client({ name: 'edgerag-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'repo.list_files'));
      const listed = await client.callTool({ name: 'repo.list_files', arguments: mine });
      assert.equal(listed.isError ?? false, false, JSON.stringify(listed));
      assert.match(JSON.stringify(listed.structuredContent), /app\/util\.py/);
      const refused = await client.callTool({ name: 'repo.read_file_range', arguments: { ...theirs, path: 'hidden.py', start: 1, end: 2 } });
      assert.equal(refused.isError, true);
      assert.doesNotMatch(JSON.stringify(refused), /hidden_symbol/);
      const global = await client.callTool({ name: 'repo.rag_search_global', arguments: { rawQuery: 'hidden_symbol slugify' } });
      assert.doesNotMatch(JSON.stringify(global.structuredContent), /hidden\.py/);
    } finally {
      await client.close();
    }

    // GitHub now lets alice pull other/secret: the refresh asks again, the new token reads it.
    users.alice.repos = ['acme/app', 'other/secret'];
    const before = provider.saved;
    assert.equal(await auth(provider, { serverUrl }), 'AUTHORIZED');
    assert.notEqual(provider.saved.access_token, before.access_token);
    assert.notEqual(provider.saved.refresh_token, before.refresh_token);
    const again = new Client({ name: 'edgerag-e2e', version: '1.0.0' });
    await again.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
    try {
      const now = await again.callTool({ name: 'repo.read_file_range', arguments: { ...theirs, path: 'hidden.py', start: 1, end: 2 } });
      assert.equal(now.isError ?? false, false, JSON.stringify(now));
    } finally {
      await again.close();
      users.alice.repos = ['acme/app'];
    }

    // The rotated-out refresh token, replayed: refused, and the whole sign-in ends.
    const issued = await issuedAccessTokens();
    const replay = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: before.refresh_token, client_id: provider.client.client_id });
    assert.equal(replay.status, 400);
    assert.deepEqual([replay.body.error, replay.body.code], ['invalid_grant', 'REFRESH_TOKEN_REUSED']);
    assert.equal(await issuedAccessTokens(), issued);
    const ended = await er.request('POST', '/mcp', { token: provider.saved.access_token, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    assert.deepEqual([ended.status, ended.body.error.code], [401, 'TOKEN_REVOKED']);
  });

  test('metadata: protected resources and the authorization server', async () => {
    const prm = await er.request('GET', '/.well-known/oauth-protected-resource/v1', { token: null });
    assert.equal(prm.status, 200);
    assert.equal(prm.body.resource, `${er.url}/v1`);
    assert.deepEqual(prm.body.authorization_servers, [er.url]);
    const asm = await er.request('GET', '/.well-known/oauth-authorization-server', { token: null });
    assert.equal(asm.body.issuer, er.url);
    assert.deepEqual(asm.body.code_challenge_methods_supported, ['S256']);
    assert.equal(asm.body.client_id_metadata_document_supported, true);
    assert.equal(asm.headers.get('access-control-allow-origin'), '*');
  });

  test('hostile input: every step refuses with a stable code and issues nothing', async () => {
    const clientId = await register();
    const { challenge } = pkcePair();
    const issued = await issuedAccessTokens();
    const page = async (opts) => {
      const r = await fetch(authorizeUrl({ clientId, challenge, ...opts }), { redirect: 'manual' });
      const body = await r.json();
      assert.equal(r.headers.get('set-cookie'), null);
      return [r.status, body.error.code];
    };
    assert.deepEqual(await page({ redirectUri: 'http://127.0.0.1:9/other' }), [400, 'REDIRECT_URI_MISMATCH']);
    assert.deepEqual(await page({ redirectUri: `${CALLBACK}/` }), [400, 'REDIRECT_URI_MISMATCH']);
    assert.deepEqual(await page({ clientId: 'ec_unknown' }), [400, 'CLIENT_UNKNOWN']);
    assert.deepEqual(await page({ method: 'plain' }), [400, 'PKCE_REQUIRED']);
    assert.deepEqual(await page({ challenge: null, method: null }), [400, 'PKCE_REQUIRED']);
    assert.deepEqual(await page({ resource: 'https://evil.example/mcp' }), [400, 'INVALID_TARGET']);
    assert.deepEqual(await page({ scope: 'write' }), [400, 'INVALID_SCOPE']);
    const badRegistration = await fetch(`${er.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://evil.example/cb'] }),
    });
    assert.equal(badRegistration.status, 400);
    assert.equal((await badRegistration.json()).code, 'REDIRECT_URI_INVALID');

    // Wrong PKCE verifier: refused, and the code is used up.
    const c1 = await code(clientId, 'alice');
    const exchange = (c, extra = {}) =>
      post('/oauth/token', { grant_type: 'authorization_code', code: c.code, client_id: clientId, redirect_uri: CALLBACK, code_verifier: c.verifier, ...extra });
    const wrong = await exchange(c1, { code_verifier: pkcePair().verifier });
    assert.deepEqual([wrong.status, wrong.body.error, wrong.body.code], [400, 'invalid_grant', 'PKCE_MISMATCH']);
    const late = await exchange(c1);
    assert.deepEqual([late.status, late.body.code], [400, 'CODE_REUSED']);
    // Redirect URI differing from the authorization request's.
    const c2 = await code(clientId, 'alice');
    const moved = await exchange(c2, { redirect_uri: 'http://127.0.0.1:9/other' });
    assert.deepEqual([moved.status, moved.body.code], [400, 'REDIRECT_URI_MISMATCH']);
    // A token for another resource than the code's.
    const c3 = await code(clientId, 'alice');
    const target = await exchange(c3, { resource: `${er.url}/v1` });
    assert.deepEqual([target.status, target.body.error, target.body.code], [400, 'invalid_target', 'INVALID_TARGET']);
    // An expired code.
    const c4 = await code(clientId, 'alice');
    await er.request('POST', '/__test/oauth/age', { body: { seconds: 121 } });
    const stale = await exchange(c4);
    assert.deepEqual([stale.status, stale.body.code], [400, 'CODE_EXPIRED']);
    // State reuse: GitHub's callback replayed, from the same browser.
    const replayed = await fetch(c4.flow.callbackUrl, { redirect: 'manual', headers: { cookie: c4.flow.cookie } });
    assert.deepEqual([replayed.status, (await replayed.json()).error.code], [400, 'OAUTH_STATE_INVALID']);
    // Consent posted from another site (no cookie): refused, nothing sent to GitHub.
    const { challenge: ch } = pkcePair();
    const shown = await fetch(authorizeUrl({ clientId, challenge: ch }), { redirect: 'manual' });
    const request = (await shown.text()).match(/name="request" value="([^"]+)"/)[1];
    const csrf = await fetch(`${er.url}/oauth/authorize`, { method: 'POST', redirect: 'manual', ...form({ request, decision: 'allow' }) });
    assert.deepEqual([csrf.status, (await csrf.json()).error.code], [400, 'OAUTH_REQUEST_INVALID']);
    const unknownGrant = await post('/oauth/token', { grant_type: 'password', username: 'a', password: 'b' });
    assert.deepEqual([unknownGrant.status, unknownGrant.body.error], [400, 'unsupported_grant_type']);
    assert.equal(await issuedAccessTokens(), issued, 'no access token was issued by a refused request');

    // Tokens are bound to their resource: one for the API is refused on MCP, and the reverse.
    const api = await tokens(clientId, 'alice', { resource: `${er.url}/v1` });
    const repos = await er.request('GET', '/v1/repos', { token: api.access_token });
    assert.equal(repos.status, 200, repos.text);
    assert.deepEqual(repos.body.repos.map((r) => `${r.owner}/${r.name}`), ['acme/app']);
    const other = await er.request('GET', '/v1/repos/other/secret/status', { token: api.access_token });
    assert.deepEqual([other.status, other.body.error.code], [403, 'NAMESPACE_FORBIDDEN']);
    const onMcp = await er.request('POST', '/mcp', { token: api.access_token, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    assert.deepEqual([onMcp.status, onMcp.body.error.code], [401, 'TOKEN_WRONG_RESOURCE']);
    assert.match(onMcp.headers.get('www-authenticate'), /error="invalid_token"/);
    const write = await er.request('POST', '/v1/repos/acme/app/files', { token: api.access_token, body: { files: [] } });
    assert.deepEqual([write.status, write.body.error.code], [403, 'SCOPE_FORBIDDEN']);

    // Expired access token: refused; the refresh token still works.
    await er.request('POST', '/__test/oauth/age', { body: { seconds: ACCESS_SECONDS + 1 } });
    const expired = await er.request('GET', '/v1/repos', { token: api.access_token });
    assert.deepEqual([expired.status, expired.body.error.code], [401, 'TOKEN_EXPIRED']);
    const refreshed = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: api.refresh_token, client_id: clientId });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal((await er.request('GET', '/v1/repos', { token: refreshed.body.access_token })).status, 200);

    // Revoked: the access token and the refresh token both stop working.
    assert.equal((await post('/oauth/revoke', { token: refreshed.body.access_token })).status, 200);
    const revoked = await er.request('GET', '/v1/repos', { token: refreshed.body.access_token });
    assert.deepEqual([revoked.status, revoked.body.error.code], [401, 'TOKEN_REVOKED']);
    const afterRevoke = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: clientId });
    assert.deepEqual([afterRevoke.status, afterRevoke.body.code], [400, 'GRANT_REVOKED']);

    // GitHub stops accepting the user's token: the next refresh ends the sign-in.
    const live = await tokens(clientId, 'alice');
    gh.revokeUser('alice');
    const gone = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: live.refresh_token, client_id: clientId });
    assert.deepEqual([gone.status, gone.body.code], [400, 'GITHUB_SIGNIN_EXPIRED']);
  });

  test('a client known by its metadata document signs in; a document that names another client is refused', async () => {
    const docs = createServer((req, res) => {
      const self = `http://127.0.0.1:${docs.address().port}${req.url}`;
      const clientId = req.url === '/liar.json' ? 'https://evil.example/client.json' : self;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: clientId, client_name: 'Document client', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }));
    });
    await new Promise((r) => docs.listen(0, '127.0.0.1', r));
    try {
      const clientId = `http://127.0.0.1:${docs.address().port}/client.json`;
      const t = await tokens(clientId, 'alice');
      const tools = await er.request('POST', '/mcp', {
        token: t.access_token,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'doc', version: '1' } } },
      });
      assert.equal(tools.status, 200, tools.text);
      const { challenge } = pkcePair();
      const liar = await fetch(authorizeUrl({ clientId: `http://127.0.0.1:${docs.address().port}/liar.json`, challenge }), { redirect: 'manual' });
      assert.deepEqual([liar.status, (await liar.json()).error.code], [400, 'CLIENT_METADATA_INVALID']);
    } finally {
      await new Promise((r) => docs.close(r));
    }
  });

  test('admins named in configuration may manage; other users may not, whatever they ask for', async () => {
    const clientId = await register();
    const carol = await tokens(clientId, 'carol', { resource: `${er.url}/v1`, scope: 'read admin' });
    assert.equal(carol.scope, 'read admin');
    assert.equal((await er.request('GET', '/v1/keys', { token: carol.access_token })).status, 200);
    const alice = await tokens(clientId, 'alice', { resource: `${er.url}/v1`, scope: 'read admin' });
    assert.equal(alice.scope, 'read');
    const keys = await er.request('GET', '/v1/keys', { token: alice.access_token });
    assert.deepEqual([keys.status, keys.body.error.code], [403, 'SCOPE_FORBIDDEN']);
    // The audit log names the signed-in user.
    const made = await er.request('POST', '/v1/keys', { token: carol.access_token, body: { name: 'ci', scopes: ['read'], namespaces: ['acme/*'] } });
    assert.equal(made.status, 201, made.text);
    const audit = await er.d1("SELECT key_id FROM audit_log WHERE route = '/v1/keys' ORDER BY id DESC LIMIT 1");
    assert.equal(audit[0].key_id, 'user:carol');
  });
});
