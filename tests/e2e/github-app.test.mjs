// The GitHub App, against the fake GitHub: installation webhooks (HMAC under the app's secret) add,
// index, refresh and remove repositories with no per-repository set-up; a private repository's
// tarball is fetched with an installation token (the app's JWT signed by WebCrypto, the token
// cached), never a personal or user token; forged and replayed deliveries do nothing; a
// repository indexed through the API keeps using GITHUB_TOKEN. One worker for the whole file.
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import { makeTarGz, sleep, startEdgerag, startGitHubMock, startHashEmbedder } from './harness.mjs';

const APP_ID = '4242';
const SECRET = 'app-webhook-secret';
const INSTALLATION = 7;

let version = 1;
const tarball = (repo) => () =>
  makeTarGz([
    { path: 'p-0123abc/', type: 'dir' },
    { path: 'p-0123abc/src/lib.rs', content: `// ${repo}\npub fn version() -> u32 {\n    ${version}\n}\n` },
  ]);

let embed;
let gh;
let er;

before(async () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  // GitHub hands out PKCS#1 PEM keys; a secret set from an environment variable often has `\n`.
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).trim().replace(/\n/g, '\\n');
  embed = await startHashEmbedder();
  gh = await startGitHubMock(
    { 'acme/private': tarball('acme/private'), 'acme/second': tarball('acme/second'), 'acme/public': tarball('acme/public') },
    { app: { id: APP_ID, publicKey, installations: { [INSTALLATION]: ['acme/private', 'acme/second'] } } },
  );
  er = await startEdgerag({
    vars: {
      OPENAI_BASE_URL: embed.url,
      GITHUB_API_URL: gh.url,
      GITHUB_TOKEN: 'ghp_personal',
      GITHUB_APP_ID: APP_ID,
      GITHUB_APP_PRIVATE_KEY: pem,
      GITHUB_APP_WEBHOOK_SECRET: SECRET,
    },
  });
});

after(async () => {
  await er?.stop();
  await gh?.stop();
  await embed?.stop();
});

async function deliver(event, payload, { delivery = randomUUID(), secret = SECRET } = {}) {
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const r = await fetch(`${er.url}/v1/webhooks/github`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, 'x-hub-signature-256': signature },
    body,
  });
  return { status: r.status, body: await r.json(), delivery };
}

/** Wait until the repository's latest job is done (and a job newer than `afterJob`). */
async function ready(repo, afterJob) {
  const end = Date.now() + 120_000;
  for (;;) {
    const s = await er.request('GET', `/v1/repos/${repo}/status`);
    const job = s.body?.job;
    if (job && job.id !== afterJob && (job.status === 'SUCCEEDED' || job.status === 'FAILED')) {
      assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
      return job;
    }
    if (Date.now() > end) throw new Error(`${repo} not indexed: ${s.text}`);
    await sleep(300);
  }
}

const installation = { id: INSTALLATION, account: { login: 'acme' } };
const tarballAuth = (repo) => gh.requests.filter((r) => r.url.startsWith(`/repos/${repo}/tarball`)).map((r) => r.authorization);

describe('the GitHub App', () => {
  test('an installation adds and indexes its private repositories with installation tokens; forged and replayed deliveries do nothing', async () => {
    const created = { action: 'created', installation, repositories: [{ full_name: 'acme/private', private: true }] };
    const forged = await deliver('installation', created, { secret: 'not-the-secret' });
    assert.deepEqual([forged.status, forged.body.error.code], [401, 'WEBHOOK_SIGNATURE_INVALID']);
    assert.equal((await er.d1('SELECT COUNT(*) AS n FROM github_repos'))[0].n, 0);

    const added = await deliver('installation', created);
    assert.equal(added.status, 202, JSON.stringify(added.body));
    assert.deepEqual([added.body.outcome, added.body.repositories], ['added', ['acme/private']]);
    await ready('acme/private');
    const auths = tarballAuth('acme/private');
    assert.ok(auths.length >= 1 && auths.every((a) => /^Bearer ghs_/.test(a)), JSON.stringify(auths));
    const files = await er.request('GET', '/v1/repos/acme/private/files');
    assert.deepEqual(files.body.files.map((f) => f.path), ['src/lib.rs']);

    const replay = await deliver('installation', created, { delivery: added.delivery });
    assert.deepEqual([replay.status, replay.body.outcome], [200, 'duplicate']);

    // A second repository joins the installation: indexed with the cached installation token.
    const joined = await deliver('installation_repositories', { action: 'added', installation, repositories_added: [{ full_name: 'acme/second' }], repositories_removed: [] });
    assert.deepEqual([joined.status, joined.body.outcome], [202, 'added']);
    await ready('acme/second');
    assert.ok(tarballAuth('acme/second').every((a) => /^Bearer ghs_/.test(a)));
    assert.equal(gh.requests.filter((r) => r.url === `/app/installations/${INSTALLATION}/access_tokens`).length, 1, 'the installation token is cached');
    assert.ok(!gh.requests.some((r) => r.url.startsWith('/repos/acme/') && r.authorization === 'Bearer ghp_personal'), 'no personal token for the app\'s repositories');
  });

  test('a push re-indexes; a repository removed from the installation leaves the index', async () => {
    const before = await er.request('GET', '/v1/repos/acme/private/status');
    version = 2;
    const push = { ref: 'refs/heads/main', after: 'abc', installation, repository: { full_name: 'acme/private', name: 'private', owner: { login: 'acme' }, default_branch: 'main' } };
    const pushed = await deliver('push', push);
    assert.equal(pushed.status, 202, JSON.stringify(pushed.body));
    await ready('acme/private', before.body.job.id);
    const line = await er.request('GET', '/v1/repos/acme/private/files/src/lib.rs/lines?start=3&end=3');
    assert.equal(line.body.text, '    2');

    const removed = await deliver('installation_repositories', { action: 'removed', installation, repositories_added: [], repositories_removed: [{ full_name: 'acme/second' }] });
    assert.deepEqual([removed.status, removed.body.outcome, removed.body.repositories], [200, 'removed', ['acme/second']]);
    const gone = await er.request('GET', '/v1/repos/acme/second/status');
    assert.equal(gone.status, 404);
    assert.deepEqual(await er.d1("SELECT namespace FROM github_repos ORDER BY namespace"), [{ namespace: 'repo:acme/private' }]);
    assert.equal((await er.d1("SELECT COUNT(*) AS n FROM chunks WHERE namespace = 'repo:acme/second'"))[0].n, 0);
  });

  test('a repository indexed through the API keeps using GITHUB_TOKEN', async () => {
    const r = await er.request('POST', '/v1/repos/acme/public/index', { body: {} });
    assert.equal(r.status, 202, r.text);
    const job = await er.waitForJob(r.body.job.id);
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
    assert.deepEqual([...new Set(tarballAuth('acme/public'))], ['Bearer ghp_personal']);
  });
});
