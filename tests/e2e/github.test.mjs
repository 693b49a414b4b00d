// GitHub fetch: the worker downloads a real gzip tarball from a local GitHub REST double (with the
// redirect GitHub does), stages it and indexes it; hostile entries are skipped with reasons;
// a second fetch of a changed tarball re-indexes incrementally; a missing repository fails fast.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { assertSchema, makeTarGz, startEdgerag, startGitHubMock, startHashEmbedder } from './harness.mjs';

const PREFIX = 'acme-widgets-0123abc/';
const BIG = 'x'.repeat(1024 * 1024 + 10) + '\n';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]);

function tarball(version) {
  const entries = [
    { path: PREFIX, type: 'dir' },
    // Before the .gitignore that excludes it: the worker reads ignore files in a first pass.
    { path: `${PREFIX}logs/debug.log`, content: 'noise\n' },
    { path: `${PREFIX}.gitignore`, content: '*.log\n' },
    { path: `${PREFIX}src/.mcpignore`, content: 'generated/\n' },
    { path: `${PREFIX}src/generated/api.rs`, content: 'pub fn generated() {}\n' },
    { path: `${PREFIX}README.md`, content: `# Widgets\n\nWidgets for everyone (version ${version}).\n` },
    { path: `${PREFIX}src/`, type: 'dir' },
    { path: `${PREFIX}src/widgets/`, type: 'dir' },
    { path: `${PREFIX}src/widgets/core/gear.rs`, content: 'pub fn turn(gear: &mut Gear) {\n    gear.angle += 1;\n}\n' },
    { path: `${PREFIX}src/widgets/spring.py`, content: version === 1 ? 'def stretch(n):\n    return n * 2\n' : 'def stretch(n):\n    return n * 3\n' },
    { path: `${PREFIX}node_modules/left-pad/index.js`, content: 'module.exports = () => 1;\n' },
    { path: `${PREFIX}dist/bundle.js`, content: 'var a=1;\n' },
    { path: `${PREFIX}.git/config`, content: '[core]\n' },
    { path: `${PREFIX}assets/logo.png`, content: PNG },
    { path: `${PREFIX}data/huge.txt`, content: BIG },
    { path: `${PREFIX}../../../etc/cron.d/evil`, content: '* * * * * root rm -rf /\n' },
    { path: `${PREFIX}link-to-passwd`, type: 'symlink', target: '/etc/passwd' },
    { path: `${PREFIX}hardlink`, type: 'hardlink', target: `${PREFIX}README.md` },
    { path: `${PREFIX}dev-null`, type: 'char' },
  ];
  if (version === 1) entries.push({ path: `${PREFIX}docs/old.md`, content: '# Old\n\nremoved in version 2\n' });
  return makeTarGz(entries);
}

let embed;
let github;
let er;
let version = 1;

before(async () => {
  embed = await startHashEmbedder();
  github = await startGitHubMock({ 'acme/widgets': (ref) => (ref === undefined || ref === 'main' ? tarball(version) : undefined) });
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, GITHUB_API_URL: github.url, GITHUB_TOKEN: 'gh-test-token' } });
});

after(async () => {
  await er?.stop();
  await github?.stop();
  await embed?.stop();
});

test('fetches, filters and indexes a GitHub tarball', async () => {
  const r = await er.request('POST', '/v1/repos/acme/widgets/index', { body: { ref: 'main' } });
  assert.equal(r.status, 202, r.text);
  await assertSchema('job-accepted', r.body);
  assert.equal(r.body.job.source, 'github');
  const job = await er.waitForJob(r.body.job.id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  assert.equal(job.attempt, 1);

  const tarRequest = github.requests.find((q) => q.url.startsWith('/repos/acme/widgets/tarball'));
  assert.equal(tarRequest.url, '/repos/acme/widgets/tarball/main');
  assert.equal(tarRequest.authorization, 'Bearer gh-test-token');
  assert.equal(tarRequest.userAgent, 'edgerag');

  assert.deepEqual(job.files.added, 6);
  assert.deepEqual(job.skippedByReason, {
    BINARY_FILE: 1,
    FILE_TOO_LARGE: 1,
    IGNORED_DIR: 3,
    IGNORED_PATTERN: 2,
    LINK: 2,
    PATH_TRAVERSAL: 1,
    SPECIAL_FILE: 1,
  });
  assert.equal(job.files.skipped, 11);
  const traversal = job.skipped.find((s) => s.reason === 'PATH_TRAVERSAL');
  assert.equal(traversal.path, '../../../etc/cron.d/evil');

  const files = await er.d1('SELECT path FROM files WHERE namespace = ? ORDER BY path', 'repo:acme/widgets');
  assert.deepEqual(files.map((f) => f.path), [
    '.gitignore',
    'README.md',
    'docs/old.md',
    'src/.mcpignore',
    'src/widgets/core/gear.rs',
    'src/widgets/spring.py',
  ]);
  const paths = await er.d1('SELECT DISTINCT path FROM chunks');
  assert.ok(paths.every((p) => !p.path.includes('..') && !p.path.startsWith('/')), 'nothing outside the namespace');
  const [{ n }] = await er.d1('SELECT COUNT(*) AS n FROM local_vectors WHERE namespace = ?', 'repo:acme/widgets');
  assert.equal(n, job.chunks.indexed);

  const status = await er.request('GET', '/v1/repos/acme/widgets/status');
  await assertSchema('repo-status', status.body);
  assert.equal(status.body.ready, true);
  assert.equal(status.body.repo.source, 'github');
  assert.equal(status.body.repo.ref, 'main');
  const ns = await er.d1('SELECT checksum, fetched_at FROM namespaces WHERE id = ?', 'repo:acme/widgets');
  assert.match(ns[0].checksum, /^[0-9a-f]{64}$/);
  assert.ok(ns[0].fetched_at);
});

test('a second fetch re-indexes only what changed and drops what disappeared', async () => {
  version = 2;
  const r = await er.request('POST', '/v1/repos/acme/widgets/index', { body: { ref: 'main' } });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.body.reused, false, 'the previous job SUCCEEDED: a fresh job');
  const job = await er.waitForJob(r.body.job.id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
  assert.deepEqual(
    { added: job.files.added, changed: job.files.changed, unchanged: job.files.unchanged, deleted: job.files.deleted },
    { added: 0, changed: 2, unchanged: 3, deleted: 1 },
  );
  const files = await er.d1('SELECT path FROM files WHERE namespace = ? ORDER BY path', 'repo:acme/widgets');
  assert.deepEqual(files.map((f) => f.path), [
    '.gitignore',
    'README.md',
    'src/.mcpignore',
    'src/widgets/core/gear.rs',
    'src/widgets/spring.py',
  ]);
  const spring = await er.d1("SELECT text FROM chunks WHERE namespace = ? AND path = 'src/widgets/spring.py'", 'repo:acme/widgets');
  assert.deepEqual(spring.map((c) => c.text), ['def stretch(n):\n    return n * 3']);
  assert.deepEqual(await er.d1("SELECT COUNT(*) AS n FROM chunks WHERE path = 'docs/old.md'"), [{ n: 0 }]);
});

test('an unknown repository or ref fails without retries', async () => {
  const r = await er.request('POST', '/v1/repos/acme/nothing/index', { body: {} });
  assert.equal(r.status, 202, r.text);
  const job = await er.waitForJob(r.body.job.id);
  assert.equal(job.status, 'FAILED');
  assert.equal(job.lastError.code, 'REPO_NOT_FOUND');
  assert.equal(job.lastError.stage, 'fetch');
  assert.equal(job.attempt, 1, 'a 404 is not retried');
  const status = await er.request('GET', '/v1/repos/acme/nothing/status');
  assert.equal(status.body.ready, false);
  assert.equal(status.body.repo.status, 'FAILED');
  assert.equal(status.body.lastError.code, 'REPO_NOT_FOUND');

  const badRef = await er.waitForJob((await er.request('POST', '/v1/repos/acme/widgets/index', { body: { ref: 'no-such-branch' } })).body.job.id);
  assert.equal(badRef.status, 'FAILED');
  assert.equal(badRef.lastError.code, 'REPO_NOT_FOUND');
  // The indexed content of the repository is untouched by the failed fetch.
  const files = await er.d1('SELECT COUNT(*) AS n FROM files WHERE namespace = ?', 'repo:acme/widgets');
  assert.deepEqual(files, [{ n: 5 }]);
});
