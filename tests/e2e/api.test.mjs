// Every API error path answers 4xx JSON `{error:{code,message}}` with a stable code (validated
// against schemas/error.schema.json), never a 500; plus the stateless /v1/chunk endpoint.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';

import { assertSchema, coreChunks, makeTarGz, startEdgerag, startHashEmbedder } from './harness.mjs';

const LIMIT = 64 * 1024;
let embed;
let er;

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({
    vars: { OPENAI_BASE_URL: embed.url, PUBLIC_READS: 'false', MAX_UPLOAD_BYTES: String(LIMIT), MAX_ARCHIVE_BYTES: String(16 * 1024 * 1024) },
  });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

async function expectError(res, status, code) {
  assert.equal(res.status, status, `${code}: ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  await assertSchema('error', res.body);
  assert.equal(res.body.error.code, code, res.text);
  assert.ok(res.body.error.message.length > 0);
}

describe('errors', () => {
  test('auth', async () => {
    const body = { files: [{ path: 'a.md', content: '# A\n' }] };
    await expectError(await er.request('POST', '/v1/repos/o/n/files', { body, token: null }), 401, 'UNAUTHORIZED');
    await expectError(await er.request('POST', '/v1/repos/o/n/files', { body, token: 'wrong' }), 401, 'UNAUTHORIZED');
    const r = await er.request('POST', '/v1/repos/o/n/index', { body: {}, token: null });
    await expectError(r, 401, 'UNAUTHORIZED');
    assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    await expectError(await er.request('DELETE', '/v1/repos/o/n', { token: null }), 401, 'UNAUTHORIZED');
    await expectError(await er.request('DELETE', '/v1/repos/o/n/files', { body: { paths: [] }, token: null }), 401, 'UNAUTHORIZED');
    // PUBLIC_READS=false: reads need the token too.
    await expectError(await er.request('GET', '/v1/repos', { token: null }), 401, 'UNAUTHORIZED');
    await expectError(await er.request('GET', '/v1/jobs/job_x', { token: null }), 401, 'UNAUTHORIZED');
    await expectError(await er.request('GET', '/v1/repos/o/n/status', { token: null }), 401, 'UNAUTHORIZED');
    const ok = await er.request('GET', '/v1/repos');
    assert.equal(ok.status, 200);
    await assertSchema('repos-response', ok.body);
    // /health stays open.
    const health = await er.request('GET', '/health', { token: null });
    assert.equal(health.status, 200);
    await assertSchema('health-response', health.body);
    assert.equal(health.body.database, true);
  });

  test('bodies: broken JSON, unknown fields, wrong types, media types, size', async () => {
    const raw = (body, ct = 'application/json') => er.request('POST', '/v1/repos/o/n/files', { body, headers: { 'content-type': ct } });
    await expectError(await raw('{"files": ['), 400, 'INVALID_JSON');
    await expectError(await raw(''), 400, 'INVALID_JSON');
    await expectError(await raw(JSON.stringify({ files: [], extra: 1 })), 400, 'INVALID_REQUEST');
    await expectError(await raw(JSON.stringify({ files: [{ path: 'a', content: 'x', mode: 1 }] })), 400, 'INVALID_REQUEST');
    await expectError(await raw(JSON.stringify({ files: 'nope' })), 400, 'INVALID_REQUEST');
    await expectError(await raw(JSON.stringify({ files: [{ path: 'a', content: 7 }] })), 400, 'INVALID_REQUEST');
    await expectError(await raw('hello', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectError(await raw(JSON.stringify({ files: [{ path: 'big.txt', content: 'x'.repeat(LIMIT) }] })), 413, 'PAYLOAD_TOO_LARGE');
    await expectError(await er.request('POST', '/v1/repos/o/n/index', { body: { ref: 'main', branch: 'x' } }), 400, 'INVALID_REQUEST');
    await expectError(await er.request('DELETE', '/v1/repos/o/n/files', { body: { path: 'a' } }), 400, 'INVALID_REQUEST');
  });

  test('archives: not gzip, corrupt gzip, truncated tar, bomb guard', async () => {
    const tgz = (body) => er.request('POST', '/v1/repos/o/n/files', { body, headers: { 'content-type': 'application/gzip' } });
    await expectError(await tgz(Buffer.from('definitely not an archive')), 400, 'INVALID_ARCHIVE');
    const good = makeTarGz([{ path: 'a.md', content: '# A\n'.repeat(400) }]);
    const corrupt = Buffer.from(good);
    corrupt.fill(0x41, 20, 60);
    await expectError(await tgz(corrupt), 400, 'INVALID_ARCHIVE');
    await expectError(await tgz(good.subarray(0, Math.floor(good.length / 2))), 400, 'INVALID_ARCHIVE');
    const tar = makeTarGz([{ path: 'a.md', content: '# A\n' }], { gzip: false });
    await expectError(await tgz(gzipSync(tar.subarray(0, 700))), 400, 'INVALID_ARCHIVE');
    // Zeros compress ~1000:1: a small body that would unpack past MAX_ARCHIVE_BYTES (16 MiB here).
    const bomb = makeTarGz([{ path: 'zeros.txt', content: Buffer.alloc(40 * 1024 * 1024) }]);
    assert.ok(bomb.length < LIMIT, `bomb is ${bomb.length} bytes`);
    await expectError(await tgz(bomb), 413, 'ARCHIVE_TOO_LARGE');
    await expectError(await er.request('POST', '/v1/repos/o/n/files?bogus=1', { body: good, headers: { 'content-type': 'application/gzip' } }), 400, 'INVALID_REQUEST');
    // Nothing was staged by the refused archives.
    const jobs = await er.d1("SELECT COUNT(*) AS n FROM job_files WHERE namespace = 'repo:o/n' AND path = 'a.md'");
    assert.deepEqual(jobs, [{ n: 0 }]);
  });

  test('names, ids and routes', async () => {
    await expectError(await er.request('POST', '/v1/repos/bad%20owner/n/files', { body: { files: [] } }), 400, 'INVALID_REPO');
    await expectError(await er.request('POST', '/v1/repos/o/..%2F..%2Fetc/index', { body: {} }), 400, 'INVALID_REPO');
    await expectError(await er.request('POST', '/v1/repos/o/n/index', { body: { ref: '../../x' } }), 400, 'INVALID_REF');
    await expectError(await er.request('POST', '/v1/repos/o/n/index', { body: { ref: '' } }), 400, 'INVALID_REF');
    await expectError(await er.request('GET', '/v1/jobs/job_doesnotexist'), 404, 'JOB_NOT_FOUND');
    await expectError(await er.request('GET', '/v1/repos/nobody/nothing/status'), 404, 'REPO_NOT_FOUND');
    await expectError(await er.request('DELETE', '/v1/repos/nobody/nothing'), 404, 'REPO_NOT_FOUND');
    await expectError(await er.request('DELETE', '/v1/repos/nobody/nothing/files', { body: { paths: ['a'] } }), 404, 'REPO_NOT_FOUND');
    await expectError(await er.request('GET', '/v1/nope'), 404, 'NOT_FOUND');
    await expectError(await er.request('PUT', '/v1/repos/o/n/files', { body: {} }), 405, 'METHOD_NOT_ALLOWED');
    await expectError(await er.request('GET', '/v1/chunk'), 405, 'METHOD_NOT_ALLOWED');
  });

  test('bad files inside a valid upload are skipped with reasons, the rest indexed', async () => {
    const files = [
      { path: 'ok.md', content: '# OK\n\nfine\n' },
      { path: '/etc/passwd', content: 'root:x:0:0' },
      { path: 'a/../../b.txt', content: 'x' },
      { path: '', content: 'x' },
      { path: 'bin.dat', content: 'abc\u0000def' },
      { path: 'dist/app.js', content: 'x' },
      { path: 'big.txt', content: 'y'.repeat(20 * 1024) },
    ];
    const small = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, MAX_FILE_BYTES: '16384' } });
    try {
      const r = await small.request('POST', '/v1/repos/o/mixed/files', { body: { files } });
      assert.equal(r.status, 202, r.text);
      await assertSchema('job-accepted', r.body);
      assert.deepEqual(
        r.body.skipped.map((s) => s.reason).sort(),
        ['ABSOLUTE_PATH', 'BINARY_FILE', 'FILE_TOO_LARGE', 'IGNORED_DIR', 'INVALID_PATH', 'PATH_TRAVERSAL'],
      );
      const job = await small.waitForJob(r.body.job.id);
      assert.equal(job.status, 'SUCCEEDED');
      assert.equal(job.files.added, 1);
      assert.deepEqual(await small.d1('SELECT path FROM files'), [{ path: 'ok.md' }]);
    } finally {
      await small.stop();
    }
  });
});

describe('POST /v1/chunk', () => {
  test('same chunks as the native core, with options and per-file errors', async () => {
    const files = [
      { path: 'guide.md', content: '# Guide\n\nIntro.\n\n## Install\n\nRun it.\n\n### Deep\n\nstays with install\n' },
      { path: 'src/app.py', content: 'import os\n\n\ndef main():\n    return os.getcwd()\n\n\nclass App:\n    def run(self):\n        return 1\n' },
    ];
    const r = await er.request('POST', '/v1/chunk', { body: { files } });
    assert.equal(r.status, 200, r.text);
    await assertSchema('chunk-response', r.body);
    const expected = await coreChunks(files);
    assert.deepEqual(r.body.files.flatMap((f) => f.chunks), expected);
    assert.equal(r.body.chunkCount, expected.length);

    const single = await er.request('POST', '/v1/chunk', { body: { path: 'x.rs', content: 'fn a() {}\n', options: { preset: 'compact', overlapLines: 0 } } });
    assert.equal(single.status, 200);
    assert.equal(single.body.files[0].language, 'rust');
    assert.equal(single.body.files[0].chunks[0].text, 'fn a() {}');
    assert.equal(single.body.warnings, undefined);
    // A preset name that is not one of today's is refused with an error naming the known ones.
    const old = await er.request('POST', '/v1/chunk', { body: { path: 'x.rs', content: 'fn a() {}\n', options: { preset: 'old-name', overlapLines: 0 } } });
    assert.equal(old.status, 400, old.text);
    await assertSchema('error', old.body);
    assert.equal(old.body.error.code, 'UNKNOWN_PRESET');
    assert.ok(old.body.error.message.includes('old-name') && old.body.error.message.includes('compact'), old.text);

    const bad = await er.request('POST', '/v1/chunk', { body: { files: [{ path: 'ok.txt', content: 'fine\n' }, { path: 'b.bin', content: 'a\u0000b' }] } });
    assert.equal(bad.status, 200);
    await assertSchema('chunk-response', bad.body);
    assert.equal(bad.body.files[0].chunks.length, 1);
    assert.deepEqual(bad.body.files[1].chunks, []);
    assert.equal(bad.body.files[1].error.code, 'BINARY_FILE');

    await expectError(await er.request('POST', '/v1/chunk', { body: { content: 'x', files: [] } }), 400, 'INVALID_REQUEST');
    await expectError(await er.request('POST', '/v1/chunk', { body: {} }), 400, 'INVALID_REQUEST');
    await expectError(await er.request('POST', '/v1/chunk', { body: { content: 'x', options: { preset: 'huge' } } }), 400, 'UNKNOWN_PRESET');
    await expectError(await er.request('POST', '/v1/chunk', { body: { content: 'x', options: { maxLines: 'ten' } } }), 400, 'INVALID_OPTIONS');
    await expectError(await er.request('POST', '/v1/chunk', { body: { content: 'x', colour: 'red' } }), 400, 'INVALID_REQUEST');
    await expectError(await er.request('POST', '/v1/chunk', { body: { content: 'x'.repeat(LIMIT + 1) } }), 413, 'PAYLOAD_TOO_LARGE');
  });
});
