// The hostile-request table: requests a careless or malicious client sends — broken JSON, wrong
// shapes, unknown fields, bad names and refs, bad globs, broken archives, malformed MCP, huge
// fields — each must get its 4xx status with a stable error code, never a 5xx, and the worker must
// still answer a normal request afterwards.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';

import { makeTarGz, startEdgerag, startHashEmbedder } from './harness.mjs';

let embed;
let er;

const MB = 1024 * 1024;
const json = (o) => ({ body: JSON.stringify(o), headers: { 'content-type': 'application/json' } });
const raw = (text, type = 'application/json') => ({ body: text, headers: { 'content-type': type } });
const gz = (buf) => ({ body: buf, headers: { 'content-type': 'application/gzip' } });
const rpc = (o) => ({ body: typeof o === 'string' ? o : JSON.stringify(o), headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
// A GitHub webhook delivery with these headers (content type JSON unless given).
const hook = (headers, body = '{}') => ({ body, headers: { 'content-type': 'application/json', ...headers } });
const push = { 'x-github-event': 'push', 'x-github-delivery': 'd-1' };
const signedPush = { ...push, 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` };
const call = (name, args) => rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

// [name, method, path, request, status, code]. For MCP tool calls that fail inside the result
// (HTTP 200, `isError`), status is 'tool' and code is the tool error's code.
const CASES = [
  // JSON bodies
  ['upload: truncated JSON', 'POST', '/v1/repos/o/n/files', raw('{"files": ['), 400, 'INVALID_JSON'],
  ['upload: empty body', 'POST', '/v1/repos/o/n/files', raw(''), 400, 'INVALID_JSON'],
  ['upload: JSON null', 'POST', '/v1/repos/o/n/files', raw('null'), 400, 'INVALID_REQUEST'],
  ['upload: JSON array', 'POST', '/v1/repos/o/n/files', raw('[]'), 400, 'INVALID_REQUEST'],
  ['upload: unknown field', 'POST', '/v1/repos/o/n/files', json({ files: [], extra: 1 }), 400, 'INVALID_REQUEST'],
  ['upload: files is a string', 'POST', '/v1/repos/o/n/files', json({ files: 'nope' }), 400, 'INVALID_REQUEST'],
  ['upload: content is a number', 'POST', '/v1/repos/o/n/files', json({ files: [{ path: 'a', content: 7 }] }), 400, 'INVALID_REQUEST'],
  ['upload: file without a path', 'POST', '/v1/repos/o/n/files', json({ files: [{ content: 'x' }] }), 400, 'INVALID_REQUEST'],
  ['upload: replace is a string', 'POST', '/v1/repos/o/n/files', json({ files: [], replace: 'yes' }), 400, 'INVALID_REQUEST'],
  ['upload: text/plain body', 'POST', '/v1/repos/o/n/files', raw('hello', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
  ['upload: invalid UTF-8 JSON', 'POST', '/v1/repos/o/n/files', raw(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 400, 'INVALID_JSON'],
  ['upload: deeply nested arrays (wrong shape before any depth limit)', 'POST', '/v1/repos/o/n/files', raw('['.repeat(5000) + ']'.repeat(5000)), 400, 'INVALID_REQUEST'],
  ['chunk: options nested 5000 deep', 'POST', '/v1/chunk', raw('{"content":"x","options":' + '{"a":'.repeat(5000) + '1' + '}'.repeat(5001)), 400, 'INVALID_JSON'],
  ['index: unknown field', 'POST', '/v1/repos/o/n/index', json({ ref: 'main', branch: 'x' }), 400, 'INVALID_REQUEST'],
  ['index: ref is a number', 'POST', '/v1/repos/o/n/index', json({ ref: 5 }), 400, 'INVALID_REQUEST'],
  ['delete files: path instead of paths', 'DELETE', '/v1/repos/o/n/files', json({ path: 'a' }), 400, 'INVALID_REQUEST'],
  ['delete files: paths is an object', 'DELETE', '/v1/repos/o/n/files', json({ paths: { a: 1 } }), 400, 'INVALID_REQUEST'],
  ['chunk: both content and files', 'POST', '/v1/chunk', json({ content: 'x', files: [] }), 400, 'INVALID_REQUEST'],
  ['chunk: nothing to chunk', 'POST', '/v1/chunk', json({}), 400, 'INVALID_REQUEST'],
  ['chunk: unknown preset', 'POST', '/v1/chunk', json({ content: 'x', options: { preset: 'huge' } }), 400, 'UNKNOWN_PRESET'],
  ['chunk: maxLines is a string', 'POST', '/v1/chunk', json({ content: 'x', options: { maxLines: 'ten' } }), 400, 'INVALID_OPTIONS'],
  ['chunk: maxLines 0', 'POST', '/v1/chunk', json({ content: 'x', options: { maxLines: 0 } }), 400, 'INVALID_OPTIONS'],
  ['chunk: maxTokens 0', 'POST', '/v1/chunk', json({ content: 'x', options: { maxTokens: 0 } }), 400, 'INVALID_OPTIONS'],
  ['chunk: maxLines negative', 'POST', '/v1/chunk', json({ content: 'x', options: { maxLines: -1 } }), 400, 'INVALID_OPTIONS'],
  ['chunk: options is an array', 'POST', '/v1/chunk', json({ content: 'x', options: [1] }), 400, 'INVALID_OPTIONS'],
  ['chunk: unknown option', 'POST', '/v1/chunk', json({ content: 'x', options: { colour: 'red' } }), 400, 'INVALID_OPTIONS'],
  ['chunk: unknown field', 'POST', '/v1/chunk', json({ content: 'x', colour: 'red' }), 400, 'INVALID_REQUEST'],
  // archives
  ['archive: not an archive', 'POST', '/v1/repos/o/n/files', gz(Buffer.from('definitely not an archive')), 400, 'INVALID_ARCHIVE'],
  ['archive: gzip of garbage', 'POST', '/v1/repos/o/n/files', gz(gzipSync(Buffer.from('garbage '.repeat(100)))), 400, 'INVALID_ARCHIVE'],
  ['archive: empty body', 'POST', '/v1/repos/o/n/files', gz(Buffer.alloc(0)), 400, 'INVALID_ARCHIVE'],
  ['archive: truncated gzip', 'POST', '/v1/repos/o/n/files', gz(() => makeTarGz([{ path: 'a.txt', content: 'x'.repeat(5000) }]).subarray(0, 40)), 400, 'INVALID_ARCHIVE'],
  ['archive: unknown query parameter', 'POST', '/v1/repos/o/n/files?bogus=1', gz(() => makeTarGz([{ path: 'a.txt', content: 'x' }])), 400, 'INVALID_REQUEST'],
  ['archive: bad ref in the query', 'POST', '/v1/repos/o/n/files?ref=..%2Fx', gz(() => makeTarGz([{ path: 'a.txt', content: 'x' }])), 400, 'INVALID_REF'],
  ['archive: zip content type', 'POST', '/v1/repos/o/n/files', raw('PK\u0003\u0004', 'application/zip'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
  // names and refs
  ['name: space in owner', 'POST', '/v1/repos/bad%20owner/n/files', json({ files: [] }), 400, 'INVALID_REPO'],
  ['name: dot-dot traversal', 'POST', '/v1/repos/o/..%2F..%2Fetc/index', json({}), 400, 'INVALID_REPO'],
  ['name: owner is ..', 'GET', '/v1/repos/../n/status', {}, 404, 'NOT_FOUND'],
  ['name: non-ASCII owner', 'GET', '/v1/repos/%C3%A4/n/status', {}, 400, 'INVALID_REPO'],
  ['name: 101-character name', 'GET', `/v1/repos/o/${'x'.repeat(101)}/status`, {}, 400, 'INVALID_REPO'],
  ['name: NUL in name', 'GET', '/v1/repos/o/a%00b/files', {}, 400, 'INVALID_REPO'],
  ['ref: parent traversal', 'POST', '/v1/repos/o/n/index', json({ ref: '../../x' }), 400, 'INVALID_REF'],
  ['ref: empty', 'POST', '/v1/repos/o/n/index', json({ ref: '' }), 400, 'INVALID_REF'],
  ['ref: option injection', 'POST', '/v1/repos/o/n/index', json({ ref: '--upload-pack=x' }), 400, 'INVALID_REF'],
  ['ref: newline', 'POST', '/v1/repos/o/n/index', json({ ref: 'main\nx' }), 400, 'INVALID_REF'],
  ['ref: 300 characters', 'POST', '/v1/repos/o/n/index', json({ ref: 'r'.repeat(300) }), 400, 'INVALID_REF'],
  ['job: unknown id', 'GET', '/v1/jobs/job_doesnotexist', {}, 404, 'JOB_NOT_FOUND'],
  ['route: unknown', 'GET', '/v1/nope', {}, 404, 'NOT_FOUND'],
  ['route: wrong method', 'PUT', '/v1/chunk', json({}), 405, 'METHOD_NOT_ALLOWED'],
  ['route: unknown search tool', 'POST', '/v1/search/everything', json({ rawQuery: 'x' }), 404, 'NOT_FOUND'],
  // search bodies and globs
  ['search: blank query', 'POST', '/v1/search', json({ rawQuery: '   ' }), 400, 'EMPTY_QUERY'],
  ['search: no query', 'POST', '/v1/search', json({}), 400, 'EMPTY_QUERY'],
  ['search: query is a number', 'POST', '/v1/search', json({ rawQuery: 5 }), 400, 'INVALID_REQUEST'],
  ['search: body is an array', 'POST', '/v1/search', json([1, 2]), 400, 'INVALID_REQUEST'],
  ['search: unknown field', 'POST', '/v1/search', json({ rawQuery: 'x', colour: 'red' }), 400, 'UNKNOWN_FIELD'],
  ['search: tuning parameter', 'POST', '/v1/search', json({ rawQuery: 'x', topK: 100 }), 400, 'TUNING_PARAMETER_REJECTED'],
  ['glob: unclosed class [a-', 'POST', '/v1/search', json({ rawQuery: 'x', filters: { paths: ['[a-'] } }), 400, 'INVALID_REQUEST'],
  ['glob: unclosed alternation', 'POST', '/v1/search', json({ rawQuery: 'x', filters: { paths: ['src/{a,b'] } }), 400, 'INVALID_REQUEST'],
  ['glob: paths is a number', 'POST', '/v1/search', json({ rawQuery: 'x', filters: { paths: 5 } }), 400, 'INVALID_REQUEST'],
  ['glob: unknown filter', 'POST', '/v1/search', json({ rawQuery: 'x', filters: { size: 5 } }), 400, 'UNKNOWN_FIELD'],
  ['glob: filters is a string', 'POST', '/v1/search', json({ rawQuery: 'x', filters: 'src/*' }), 400, 'INVALID_REQUEST'],
  ['search: broken JSON', 'POST', '/v1/search/global', raw('{"rawQuery":'), 400, 'INVALID_JSON'],
  ['search: form content type', 'POST', '/v1/search', raw('rawQuery=x', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
  // MCP
  ['mcp: not JSON', 'POST', '/mcp', rpc('{"jsonrpc": "2.0",'), 400, -32700],
  ['mcp: empty batch', 'POST', '/mcp', rpc([]), 400, -32600],
  ['mcp: batch over the limit', 'POST', '/mcp', rpc(Array.from({ length: 21 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))), 400, -32600],
  ['mcp: neither request nor notification', 'POST', '/mcp', rpc({ jsonrpc: '2.0' }), 400, -32600],
  ['mcp: params without method', 'POST', '/mcp', rpc({ jsonrpc: '2.0', params: {} }), 400, -32600],
  ['mcp: wrong jsonrpc version, no id', 'POST', '/mcp', rpc({ jsonrpc: '1.0', method: 'ping' }), 400, -32600],
  ['mcp: a bare number', 'POST', '/mcp', rpc('42'), 400, -32600],
  ['mcp: GET', 'GET', '/mcp', {}, 405, 'METHOD_NOT_ALLOWED'],
  ['mcp: unknown tool', 'POST', '/mcp', call('repo.nope', {}), 'rpc', -32602],
  ['mcp: arguments are a list', 'POST', '/mcp', call('repo.rag_search', [1]), 'rpc', -32602],
  ['mcp: blank query', 'POST', '/mcp', call('repo.rag_search', { rawQuery: ' ' }), 'tool', 'EMPTY_QUERY'],
  ['mcp: bad glob', 'POST', '/mcp', call('repo.rag_search', { rawQuery: 'x', filters: { paths: ['[a-'] } }), 'tool', 'INVALID_REQUEST'],
  ['mcp: status with half a repository', 'POST', '/mcp', call('repo.rag_index_status', { repoOwner: 'a' }), 'tool', 'INVALID_REQUEST'],
  // GitHub webhooks and repository registration
  ['webhook: no X-GitHub-Event', 'POST', '/v1/webhooks/github', hook({}), 400, 'WEBHOOK_EVENT_MISSING'],
  ['webhook: no X-GitHub-Delivery', 'POST', '/v1/webhooks/github', hook({ 'x-github-event': 'push' }), 400, 'WEBHOOK_DELIVERY_MISSING'],
  ['webhook: delivery id of 200 characters', 'POST', '/v1/webhooks/github', hook({ ...push, 'x-github-delivery': 'd'.repeat(200) }), 400, 'WEBHOOK_DELIVERY_INVALID'],
  ['webhook: unsigned push (a bearer token does not count)', 'POST', '/v1/webhooks/github', hook(push), 401, 'WEBHOOK_SIGNATURE_MISSING'],
  ['webhook: form-encoded payload', 'POST', '/v1/webhooks/github', hook({ ...signedPush, 'content-type': 'application/x-www-form-urlencoded' }, 'payload=%7B%7D'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
  ['webhook: broken JSON', 'POST', '/v1/webhooks/github', hook(signedPush, '{"ref":'), 400, 'INVALID_JSON'],
  ['webhook: payload without a repository', 'POST', '/v1/webhooks/github', hook(signedPush, '{"ref":"refs/heads/main"}'), 400, 'WEBHOOK_NO_REPOSITORY'],
  ['webhook: repository that is not registered', 'POST', '/v1/webhooks/github', hook(signedPush, JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'nobody/nothing' } })), 404, 'REPO_NOT_REGISTERED'],
  ['webhook: GET', 'GET', '/v1/webhooks/github', {}, 405, 'METHOD_NOT_ALLOWED'],
  ['index: empty webhook secret', 'POST', '/v1/repos/o/n/index', json({ webhookSecret: '' }), 400, 'INVALID_WEBHOOK_SECRET'],
  ['index: webhook secret of 257 bytes', 'POST', '/v1/repos/o/n/index', json({ webhookSecret: 's'.repeat(257) }), 400, 'INVALID_WEBHOOK_SECRET'],
  ['index: webhook secret is a number', 'POST', '/v1/repos/o/n/index', json({ webhookSecret: 42 }), 400, 'INVALID_REQUEST'],
  ['index: sync interval 0', 'POST', '/v1/repos/o/n/index', json({ syncIntervalMinutes: 0 }), 400, 'INVALID_SYNC_INTERVAL'],
  ['index: sync interval over 30 days', 'POST', '/v1/repos/o/n/index', json({ syncIntervalMinutes: 50_000 }), 400, 'INVALID_SYNC_INTERVAL'],
  ['index: negative sync interval', 'POST', '/v1/repos/o/n/index', json({ syncIntervalMinutes: -5 }), 400, 'INVALID_REQUEST'],
  ['index: sync interval is a string', 'POST', '/v1/repos/o/n/index', json({ syncIntervalMinutes: '60' }), 400, 'INVALID_REQUEST'],
  // huge fields
  ['huge: upload over the body limit', 'POST', '/v1/repos/o/n/files', json({ files: [{ path: 'big.txt', content: 'x'.repeat(2 * MB) }] }), 413, 'PAYLOAD_TOO_LARGE'],
  ['huge: chunk over the body limit', 'POST', '/v1/chunk', json({ content: 'x'.repeat(2 * MB) }), 413, 'PAYLOAD_TOO_LARGE'],
  ['huge: index body over 64 KiB', 'POST', '/v1/repos/o/n/index', json({ ref: 'x'.repeat(70_000) }), 413, 'PAYLOAD_TOO_LARGE'],
  ['huge: search body over 256 KiB', 'POST', '/v1/search', json({ rawQuery: 'x'.repeat(300_000) }), 413, 'PAYLOAD_TOO_LARGE'],
  ['huge: MCP body over 512 KiB', 'POST', '/mcp', call('repo.rag_search', { rawQuery: 'x'.repeat(600_000) }), 413, 'PAYLOAD_TOO_LARGE'],
  ['huge: 20 001 paths to delete', 'DELETE', '/v1/repos/o/n/files', json({ paths: Array.from({ length: 20_001 }, (_, i) => `f${i}`) }), 400, 'TOO_MANY_FILES'],
  ['huge: 1001 files to chunk', 'POST', '/v1/chunk', json({ files: Array.from({ length: 1001 }, (_, i) => ({ path: `f${i}.txt`, content: 'x' })) }), 400, 'TOO_MANY_FILES'],
  ['huge: key name of 101 characters', 'POST', '/v1/keys', json({ name: 'n'.repeat(101), scopes: ['read'], namespaces: ['a/*'] }), 400, 'INVALID_KEY_REQUEST'],
  ['key: unknown scope', 'POST', '/v1/keys', json({ name: 'n', scopes: ['root'], namespaces: ['a/*'] }), 400, 'INVALID_KEY_REQUEST'],
  ['key: bad namespace pattern', 'POST', '/v1/keys', json({ name: 'n', scopes: ['read'], namespaces: ['a/b/c'] }), 400, 'INVALID_KEY_REQUEST'],
];

before(async () => {
  embed = await startHashEmbedder();
  // Small body limit so the "huge" cases stay cheap.
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, MAX_UPLOAD_BYTES: String(MB) } });
  // One READY repository so searches get past "nothing is indexed".
  const r = await er.request('POST', '/v1/repos/o/n/files', { body: { files: [{ path: 'README.md', content: '# Hello\n\nA small repository.\n' }] } });
  assert.equal(r.status, 202, r.text);
  assert.equal((await er.waitForJob(r.body.job.id)).status, 'SUCCEEDED');
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

test(`the hostile table has at least 60 cases, each with a stable 4xx answer`, async () => {
  assert.ok(CASES.length >= 60, `${CASES.length} cases`);
  const failures = [];
  for (const [name, method, path, request, status, code] of CASES) {
    const body = typeof request.body === 'function' ? request.body() : request.body;
    const headers = { authorization: `Bearer ${er.token}`, ...(request.headers ?? {}) };
    const res = await fetch(`${er.url}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed;
    try { parsed = JSON.parse(text); } catch { parsed = undefined; }
    let got;
    if (status === 'tool') {
      got = res.status === 200 && parsed?.result?.isError ? parsed.result.structuredContent?.error?.code : `${res.status} ${text.slice(0, 200)}`;
    } else if (status === 'rpc') {
      got = res.status === 200 ? parsed?.error?.code : `${res.status} ${text.slice(0, 200)}`;
    } else if (typeof code === 'number') {
      got = res.status === status ? parsed?.error?.code : `${res.status} ${text.slice(0, 200)}`;
    } else {
      got = res.status === status ? parsed?.error?.code : `${res.status} ${text.slice(0, 200)}`;
      if (res.status === status && typeof parsed?.error?.message !== 'string') got = `no message: ${text.slice(0, 200)}`;
    }
    if (res.status >= 500) failures.push(`${name}: 5xx ${res.status} ${text.slice(0, 200)}`);
    else if (got !== code) failures.push(`${name}: expected ${status} ${code}, got ${got}`);
  }
  assert.deepEqual(failures, []);
  // Still healthy, still answering.
  const ok = await er.request('POST', '/v1/search', { body: { rawQuery: 'small repository' } });
  assert.equal(ok.status, 200, ok.text);
});
