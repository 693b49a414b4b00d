// The MCP server as clients we did not write see it: the official TypeScript SDKs over streamable
// HTTP with a scoped bearer key — `@modelcontextprotocol/sdk` (v1, the `initialize` handshake at
// 2025-11-25) and `@modelcontextprotocol/client` (v2, which probes `server/discover` and speaks
// the 2026-07-28 revision). Each lists the tools, calls every one on a fixture repository,
// validates each result against the tool's `outputSchema`, and finds no way from a key for one
// repository into another.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import Ajv2020 from 'ajv/dist/2020.js';

import { startEdgerag, startHashEmbedder } from './harness.mjs';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'graph', 'python', 'app');
const FILES = readdirSync(FIXTURE)
  .filter((f) => f.endsWith('.py'))
  .sort()
  .map((f) => ({ path: `app/${f}`, content: readFileSync(join(FIXTURE, f), 'utf8') }));

let embed;
let er;
let reader; // read on acme/* only

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, PUBLIC_READS: 'false' } });
  // `acme/sdk` last: the simple tools answer from the latest READY repository the key may read.
  for (const [repo, files] of [
    ['other/sdk', [{ path: 'secret/hidden.py', content: 'def hidden_symbol():\n    return "slugify"\n' }]],
    ['acme/sdk', FILES],
  ]) {
    const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files } });
    assert.equal(r.status, 202, r.text);
    const job = await er.waitForJob(r.body.job.id);
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  }
  const key = await er.request('POST', '/v1/keys', { body: { name: 'sdk', scopes: ['read'], namespaces: ['acme/*'] } });
  assert.equal(key.status, 201, key.text);
  reader = key.body.token;
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

const headers = () => ({ Authorization: `Bearer ${reader}` });

async function connectV1() {
  const client = new ClientV1({ name: 'edgerag-e2e', version: '1.0.0' });
  await client.connect(new TransportV1(new URL(`${er.url}/mcp`), { requestInit: { headers: headers() } }));
  return client;
}

async function connectV2() {
  const client = new ClientV2({ name: 'edgerag-e2e', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new TransportV2(new URL(`${er.url}/mcp`), { requestInit: { headers: headers() } }));
  return client;
}

const mine = { repoOwner: 'acme', repoName: 'sdk' };
const theirs = { repoOwner: 'other', repoName: 'sdk' };

/** One call of every tool, with arguments that reach the fixture repository. */
async function callsFor(client) {
  const found = await client.callTool({ name: 'repo.find_symbol', arguments: { ...mine, name: 'slugify' } });
  const id = found.structuredContent?.symbols?.[0]?.id ?? 'none';
  return {
    'repo.rag_search': { ...{ owner: 'acme', name: 'sdk' }, rawQuery: 'slugify a user name' },
    'repo.rag_search_simple': { rawQuery: 'slugify' },
    'repo.rag_search_global': { rawQuery: 'slugify' },
    'repo.rag_search_simple_global': { rawQuery: 'slugify' },
    'repo.rag_index_status': mine,
    'repo.find_symbol': { ...mine, name: 'slugify' },
    'repo.symbol_references': { ...mine, id, direction: 'callers' },
    'repo.read_file_range': { ...mine, path: 'app/util.py', start: 1, end: 5 },
    'repo.list_files': { ...mine, prefix: 'app' },
    'repo.outline': { ...mine, path: 'app/models.py' },
    'repo.grep': { ...mine, pattern: 'slugify(' },
    'repo.map': { ...mine, maxTokens: 1000 },
    'repo.impact': { ...mine, changes: [{ path: 'app/util.py', startLine: 7, endLine: 9 }] },
  };
}

/** The same tools aimed at the repository the key may not read. */
const intrusions = {
  'repo.rag_search': { owner: 'other', name: 'sdk', rawQuery: 'hidden_symbol' },
  'repo.rag_index_status': theirs,
  'repo.find_symbol': { ...theirs, name: 'hidden_symbol' },
  'repo.symbol_references': { ...theirs, id: 'x' },
  'repo.read_file_range': { ...theirs, path: 'secret/hidden.py', start: 1, end: 2 },
  'repo.list_files': theirs,
  'repo.outline': { ...theirs, path: 'secret' },
  'repo.grep': { ...theirs, pattern: 'hidden_symbol' },
  'repo.map': theirs,
  'repo.impact': { ...theirs, changes: [{ path: 'secret/hidden.py' }] },
};

async function exercise(client) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  const calls = await callsFor(client);
  assert.deepEqual([...names].sort(), Object.keys(calls).sort());
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  for (const tool of tools) {
    assert.ok(tool.title, `${tool.name} has a title`);
    assert.deepEqual(
      [tool.annotations?.readOnlyHint, tool.annotations?.idempotentHint, tool.annotations?.openWorldHint],
      [true, true, false],
      tool.name,
    );
    assert.equal(tool.outputSchema?.type, 'object', tool.name);
    const validate = ajv.compile(tool.outputSchema);
    // The SDK validates `structuredContent` against `outputSchema` itself and throws when it
    // does not conform; the check below says which part failed.
    const result = await client.callTool({ name: tool.name, arguments: calls[tool.name] });
    assert.equal(result.isError ?? false, false, `${tool.name}: ${JSON.stringify(result).slice(0, 400)}`);
    assert.ok(validate(result.structuredContent), `${tool.name}: ${ajv.errorsText(validate.errors)}`);
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent, tool.name);
  }
  // A failed call is a tool result with an error body, which the output schema also describes.
  const bad = await client.callTool({ name: 'repo.grep', arguments: { ...mine, pattern: '(', regex: true } });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.error.code, 'INVALID_PATTERN');
  for (const [name, args] of Object.entries(intrusions)) {
    const r = await client.callTool({ name, arguments: args });
    const text = JSON.stringify(r);
    assert.equal(r.isError, true, `${name} reached other/sdk: ${text.slice(0, 300)}`);
    assert.doesNotMatch(text, /hidden_symbol\(|secret\/hidden/, name);
  }
  // Global search with this key never returns the other repository.
  const global = await client.callTool({ name: 'repo.rag_search_global', arguments: { rawQuery: 'hidden_symbol slugify' } });
  assert.doesNotMatch(JSON.stringify(global.structuredContent), /secret\/hidden/);
}

describe('official MCP SDK clients', () => {
  test('@modelcontextprotocol/sdk (v1) connects with the 2025-11-25 handshake and every tool conforms', async () => {
    const client = await connectV1();
    try {
      assert.equal(client.getServerVersion()?.name, 'edgerag');
      assert.equal(client.transport?.protocolVersion ?? '2025-11-25', '2025-11-25');
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  test('@modelcontextprotocol/client (v2) discovers the server and speaks 2026-07-28; every tool conforms', async () => {
    const client = await connectV2();
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.equal(client.getServerVersion()?.name, 'edgerag');
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  test('a modern request with mismatched headers or an unknown version is 400 with a modern error', async () => {
    const meta = (v) => ({ 'io.modelcontextprotocol/protocolVersion': v, 'io.modelcontextprotocol/clientCapabilities': {} });
    const post = (body, extra) => er.request('POST', '/mcp', { body, token: reader, headers: { accept: 'application/json, text/event-stream', ...extra } });
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta('2026-07-28') } };
    const ok = await post(list, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.result.resultType, 'complete');
    const mismatch = await post(list, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.error.code, -32020);
    const old = { ...list, params: { _meta: meta('1900-01-01') } };
    const unsupported = await post(old, { 'mcp-protocol-version': '1900-01-01', 'mcp-method': 'tools/list' });
    assert.equal(unsupported.status, 400);
    assert.equal(unsupported.body.error.code, -32022);
    assert.ok(unsupported.body.error.data.supported.includes('2026-07-28'));
    // Mcp-Name may arrive Base64-encoded (`=?base64?…?=`): it is decoded, then compared.
    const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { _meta: meta('2026-07-28'), name: 'repo.list_files', arguments: { ...mine, limit: 1 } } };
    const callHeaders = (name) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name });
    const b64 = (s) => `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;
    const encoded = await post(call, callHeaders(b64('repo.list_files')));
    assert.equal(encoded.status, 200, encoded.text);
    assert.equal(encoded.body.result.isError ?? false, false, encoded.text);
    for (const bad of [b64('repo.outline'), '=?base64?not base64!?=', 'cmVwby5saXN0X2ZpbGVz']) {
      const r = await post(call, callHeaders(bad));
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
      assert.equal(r.body.error.code, -32020, bad);
    }
    const discover = { jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: meta('2026-07-28') } };
    const found = await post(discover, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' });
    assert.equal(found.status, 200, found.text);
    assert.deepEqual(found.body.result.supportedVersions, ['2026-07-28']);
  });
});
