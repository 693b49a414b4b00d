// Freshness end to end in workerd: a repository registered with a webhook secret and a sync
// interval is re-indexed by a signed GitHub push; unsigned, wrongly signed, replayed and
// irrelevant deliveries are refused or ignored with stable codes and start nothing; a push during
// an active upload job is queued and fetched after it; the scheduled run (workerd's
// `/cdn-cgi/handler/scheduled`) re-syncs a repository whose interval elapsed and resumes a job
// whose worker died; a fetch queued behind a job that fails starts when it fails.
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  applyMigrations, assertSchema, makeTarGz, sleep, startEdgerag, startGitHubMock, startHashEmbedder,
} from './harness.mjs';

const SECRET = 'push-secret-0123';
const PREFIX = 'acme-hooks-0123abc/';
let version = 1;

function tarball() {
  return makeTarGz([
    { path: PREFIX, type: 'dir' },
    { path: `${PREFIX}README.md`, content: `# Hooks\n\nRelease notes for version ${version}.\n` },
    { path: `${PREFIX}src/lib.rs`, content: `pub fn version() -> u32 {\n    ${version}\n}\n` },
  ]);
}

/**
 * An OpenAI-compatible embeddings proxy that can hold requests (a stage stuck mid-flight): while
 * held, requests wait; `release()` forwards them. `seen` counts requests that arrived.
 */
async function startGate(target) {
  let held = false;
  let failures = 0;
  let waiting = [];
  const stats = { seen: 0, failed: 0 };
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    stats.seen++;
    const forward = async () => {
      if (failures > 0) {
        failures--;
        stats.failed++;
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"injected"}}');
        return;
      }
      try {
        const up = await fetch(`${target}${req.url.replace(/^\/v1/, '')}`, {
          method: req.method, headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks),
        });
        res.writeHead(up.status, { 'content-type': 'application/json' }).end(Buffer.from(await up.arrayBuffer()));
      } catch (e) {
        res.writeHead(502).end(String(e));
      }
    };
    if (held) waiting.push(forward);
    else await forward();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    stats,
    hold: () => { held = true; },
    release: () => { held = false; const w = waiting; waiting = []; w.forEach((f) => f()); },
    drop: () => { waiting = []; },
    /** The next `n` requests (held ones included) get a 500. */
    failNext: (n) => { failures = n; },
    waitFor: async (n) => {
      for (let i = 0; i < 300 && stats.seen < n; i++) await sleep(100);
      assert.ok(stats.seen >= n, `the embedder saw ${stats.seen} requests, expected ${n}`);
    },
    stop: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}

const sign = (body, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

function pushPayload({ ref = 'refs/heads/main', repo = 'acme/hooks', extra = {} } = {}) {
  const [owner, name] = repo.split('/');
  return {
    ref,
    before: '0'.repeat(40),
    after: '1'.repeat(40),
    deleted: false,
    repository: { name, full_name: repo, owner: { login: owner, name: owner }, default_branch: 'main' },
    ...extra,
  };
}

/** A delivery as GitHub sends it; `signature: null` leaves the header out. */
async function deliver(er, { event = 'push', payload = pushPayload(), delivery = randomUUID(), secret = SECRET, signature, headers = {} } = {}) {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const h = { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': delivery, ...headers };
  const sig = signature === undefined ? sign(body, secret) : signature;
  if (sig !== null) h['x-hub-signature-256'] = sig;
  // No bearer token: the signature is the authentication.
  const r = await er.request('POST', '/v1/webhooks/github', { body, headers: h, token: null });
  return { ...r, delivery };
}

function expectError(r, status, code) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body?.error?.code, code, r.text);
}

const tarballRequests = (github) => github.requests.filter((q) => q.url.startsWith('/repos/acme/hooks/tarball')).length;
const jobsOf = (er, ns) => er.d1('SELECT id, source, status FROM repo_rag_index_job WHERE namespace = ? ORDER BY queued_at, rowid', ns);

let embed;
let gate;
let github;
let er;

before(async () => {
  embed = await startHashEmbedder();
  gate = await startGate(embed.url);
  github = await startGitHubMock({ 'acme/hooks': () => tarball(), 'acme/plain': () => tarball() });
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: gate.url, GITHUB_API_URL: github.url, MAX_ATTEMPTS: '5' } });
});

after(async () => {
  gate?.release();
  await er?.stop();
  await github?.stop();
  await gate?.stop();
  await embed?.stop();
});

describe('push webhooks', () => {
  test('registering a repository takes a webhook secret and a sync interval, and never shows the secret', async () => {
    expectError(await er.request('POST', '/v1/repos/acme/hooks/index', { body: { webhookSecret: '' } }), 400, 'INVALID_WEBHOOK_SECRET');
    expectError(await er.request('POST', '/v1/repos/acme/hooks/index', { body: { webhookSecret: 'x'.repeat(257) } }), 400, 'INVALID_WEBHOOK_SECRET');
    expectError(await er.request('POST', '/v1/repos/acme/hooks/index', { body: { syncIntervalMinutes: 0 } }), 400, 'INVALID_SYNC_INTERVAL');
    expectError(await er.request('POST', '/v1/repos/acme/hooks/index', { body: { syncIntervalMinutes: 43201 } }), 400, 'INVALID_SYNC_INTERVAL');
    assert.equal((await jobsOf(er, 'repo:acme/hooks')).length, 0, 'refused requests start nothing');

    const r = await er.request('POST', '/v1/repos/acme/hooks/index', { body: { ref: 'main', webhookSecret: SECRET, syncIntervalMinutes: 60 } });
    assert.equal(r.status, 202, r.text);
    await assertSchema('job-accepted', r.body);
    assert.equal(r.body.queuedAfter, undefined);
    const job = await er.waitForJob(r.body.job.id);
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
    assert.equal(job.files.added, 2);

    const shown = [
      r.text,
      (await er.request('GET', '/v1/repos/acme/hooks/status')).text,
      (await er.request('GET', '/v1/repos')).text,
      (await er.request('GET', `/v1/jobs/${job.id}`)).text,
    ].join('\n');
    assert.ok(!shown.includes(SECRET), 'the secret appears in no response');
    assert.ok(!er.logs().includes(SECRET), 'the secret is never logged');
    const status = await er.request('GET', '/v1/repos/acme/hooks/status');
    await assertSchema('repo-status', status.body);
    assert.match(status.body.github.lastSyncAt, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual({ ...status.body.github, lastSyncAt: 'set' }, { ref: 'main', webhook: true, syncIntervalMinutes: 60, lastSyncAt: 'set', queuedFetch: null });
    const [row] = await er.d1('SELECT ref, sync_interval_minutes, webhook_secret IS NOT NULL AS has_secret FROM github_repos WHERE namespace = ?', 'repo:acme/hooks');
    assert.deepEqual(row, { ref: 'main', sync_interval_minutes: 60, has_secret: 1 });
  });

  test('a signed push to the tracked branch re-indexes it incrementally', async () => {
    version = 2;
    const before = tarballRequests(github);
    const r = await deliver(er);
    assert.equal(r.status, 202, r.text);
    await assertSchema('webhook-response', r.body);
    assert.equal(r.body.outcome, 'queued');
    assert.equal(r.body.namespace, 'repo:acme/hooks');
    assert.equal(r.body.delivery, r.delivery);
    assert.equal(r.body.job.source, 'github');
    const job = await er.waitForJob(r.body.job.id);
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
    assert.deepEqual({ changed: job.files.changed, unchanged: job.files.unchanged, added: job.files.added }, { changed: 2, unchanged: 0, added: 0 });
    assert.equal(tarballRequests(github), before + 1);
    assert.equal(github.requests.at(-2).url, '/repos/acme/hooks/tarball/main');
    const chunks = await er.d1("SELECT COUNT(*) AS n FROM chunks WHERE namespace = ? AND text LIKE '%version 2%'", 'repo:acme/hooks');
    assert.equal(chunks[0].n, 1, 'the pushed content is searchable');

    // GitHub redelivers the same delivery: nothing happens a second time.
    const replay = await deliver(er, { delivery: r.delivery });
    assert.equal(replay.status, 200, replay.text);
    await assertSchema('webhook-response', replay.body);
    assert.equal(replay.body.outcome, 'duplicate');
    assert.equal(replay.body.job, undefined);
    assert.equal(tarballRequests(github), before + 1);
    assert.equal((await jobsOf(er, 'repo:acme/hooks')).length, 2);
  });

  test('unsigned, wrongly signed and malformed deliveries are refused and start nothing', async () => {
    const jobsBefore = (await jobsOf(er, 'repo:acme/hooks')).length;
    expectError(await deliver(er, { signature: null }), 401, 'WEBHOOK_SIGNATURE_MISSING');
    expectError(await deliver(er, { secret: 'not-the-secret' }), 401, 'WEBHOOK_SIGNATURE_INVALID');
    expectError(await deliver(er, { signature: 'sha256=abc' }), 401, 'WEBHOOK_SIGNATURE_INVALID');
    expectError(await deliver(er, { signature: sign('{}').replace('sha256=', 'sha1=') }), 401, 'WEBHOOK_SIGNATURE_INVALID');
    // A signature of another body (a tampered payload).
    const body = JSON.stringify(pushPayload());
    expectError(await deliver(er, { payload: body, signature: sign(`${body} `) }), 401, 'WEBHOOK_SIGNATURE_INVALID');
    // An API token is no substitute for the signature.
    const withToken = await er.request('POST', '/v1/webhooks/github', {
      body, headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': randomUUID() },
    });
    expectError(withToken, 401, 'WEBHOOK_SIGNATURE_MISSING');

    // A forged delivery does not burn its id: the genuine one with that id still counts.
    const id = randomUUID();
    expectError(await deliver(er, { delivery: id, secret: 'forged' }), 401, 'WEBHOOK_SIGNATURE_INVALID');
    assert.equal((await jobsOf(er, 'repo:acme/hooks')).length, jobsBefore, 'no job for any refused delivery');
    const genuine = await deliver(er, { delivery: id });
    assert.equal(genuine.status, 202, genuine.text);
    assert.equal((await er.waitForJob(genuine.body.job.id)).status, 'SUCCEEDED');
  });

  test('irrelevant and unusable deliveries get a clear 2xx or 4xx with a stable code', async () => {
    const jobsBefore = (await jobsOf(er, 'repo:acme/hooks')).length;
    const ignored = async (options, reason) => {
      const r = await deliver(er, options);
      assert.equal(r.status, 200, r.text);
      await assertSchema('webhook-response', r.body);
      assert.equal(r.body.outcome, 'ignored');
      assert.match(r.body.reason, reason);
    };
    await ignored({ event: 'ping', payload: { zen: 'Keep it logically awesome.', repository: pushPayload().repository } }, /^ping/);
    await ignored({ event: 'issues', payload: { action: 'opened', repository: pushPayload().repository } }, /event `issues` is not handled/);
    await ignored({ payload: pushPayload({ ref: 'refs/heads/feature' }) }, /refs\/heads\/feature is not the tracked ref \(main\)/);
    await ignored({ payload: pushPayload({ extra: { deleted: true } }) }, /deleted/);
    assert.equal((await jobsOf(er, 'repo:acme/hooks')).length, jobsBefore, 'ignored deliveries start no job');

    expectError(await deliver(er, { payload: pushPayload({ repo: 'acme/unknown' }) }), 404, 'REPO_NOT_REGISTERED');
    // Registered through the API without a secret: its webhooks are refused.
    const plain = await er.request('POST', '/v1/repos/acme/plain/index', { body: {} });
    assert.equal(plain.status, 202, plain.text);
    await er.waitForJob(plain.body.job.id);
    expectError(await deliver(er, { payload: pushPayload({ repo: 'acme/plain' }) }), 403, 'WEBHOOK_NOT_CONFIGURED');
    assert.equal((await er.request('GET', '/v1/repos/acme/plain/status')).body.github.webhook, false);
    expectError(await deliver(er, { headers: { 'x-github-event': '' } }), 400, 'WEBHOOK_EVENT_MISSING');
    expectError(await deliver(er, { headers: { 'x-github-delivery': '' } }), 400, 'WEBHOOK_DELIVERY_MISSING');
    expectError(await deliver(er, { headers: { 'x-github-delivery': 'd'.repeat(129) } }), 400, 'WEBHOOK_DELIVERY_INVALID');
    expectError(await deliver(er, { payload: 'payload=%7B%7D', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await deliver(er, { payload: '{"ref": ' }), 400, 'INVALID_JSON');
    expectError(await deliver(er, { payload: { ref: 'refs/heads/main' } }), 400, 'WEBHOOK_NO_REPOSITORY');
    expectError(await er.request('GET', '/v1/webhooks/github', { token: null }), 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('a fetch during an active upload job', () => {
  test('a push while an upload is indexing is queued and fetched after it, not answered "reused"', async () => {
    version = 3;
    gate.hold();
    const seen = gate.stats.seen;
    const upload = await er.request('POST', '/v1/repos/acme/hooks/files', {
      body: { files: [{ path: 'notes/extra.md', content: '# Extra\n\nAn uploaded note.\n' }] },
    });
    assert.equal(upload.status, 202, upload.text);
    await gate.waitFor(seen + 1); // the upload job is now stuck in its embed stage
    const tarballsBefore = tarballRequests(github);

    const push = await deliver(er);
    assert.equal(push.status, 202, push.text);
    assert.equal(push.body.outcome, 'queuedAfter');
    assert.equal(push.body.job.id, upload.body.job.id, 'the answer names the job the fetch waits for');
    // The API's index request takes the same path.
    const api = await er.request('POST', '/v1/repos/acme/hooks/index', { body: { ref: 'main' } });
    assert.equal(api.status, 202, api.text);
    assert.equal(api.body.reused, false);
    assert.equal(api.body.queuedAfter, upload.body.job.id);
    await sleep(500);
    assert.equal(tarballRequests(github), tarballsBefore, 'nothing is fetched while the upload is active');
    assert.deepEqual(await er.d1('SELECT after_job, trigger FROM pending_fetches'), [{ after_job: upload.body.job.id, trigger: 'api' }]);
    const waiting = await er.request('GET', '/v1/repos/acme/hooks/status');
    await assertSchema('repo-status', waiting.body);
    assert.equal(waiting.body.github.queuedFetch.afterJob, upload.body.job.id);
    assert.equal(waiting.body.github.queuedFetch.trigger, 'api');

    gate.release();
    const uploaded = await er.waitForJob(upload.body.job.id);
    assert.equal(uploaded.status, 'SUCCEEDED', JSON.stringify(uploaded.lastError));
    let fetchJob;
    for (let i = 0; i < 100 && !fetchJob; i++) {
      const rows = await jobsOf(er, 'repo:acme/hooks');
      fetchJob = rows.slice(rows.findIndex((j) => j.id === upload.body.job.id) + 1).find((j) => j.source === 'github');
      if (!fetchJob) await sleep(100);
    }
    assert.ok(fetchJob, 'a GitHub job started after the upload job');
    const fetched = await er.waitForJob(fetchJob.id);
    assert.equal(fetched.status, 'SUCCEEDED', JSON.stringify(fetched.lastError));
    assert.equal(tarballRequests(github), tarballsBefore + 1, 'fetched exactly once after the upload');
    assert.equal(fetched.files.deleted, 1, 'the GitHub tree replaces the uploaded note');
    const [{ n }] = await er.d1("SELECT COUNT(*) AS n FROM chunks WHERE namespace = ? AND text LIKE '%version 3%'", 'repo:acme/hooks');
    assert.equal(n, 1, 'the pushed content is indexed');
    assert.deepEqual(await er.d1('SELECT * FROM pending_fetches'), []);
  });

  test('a fetch queued behind a job that fails starts when it fails', async () => {
    version = 4;
    gate.hold();
    const seen = gate.stats.seen;
    const upload = await er.request('POST', '/v1/repos/acme/hooks/files', {
      body: { files: [{ path: 'notes/doomed.md', content: '# Doomed\n\nThis upload never gets embedded.\n' }] },
    });
    assert.equal(upload.status, 202, upload.text);
    await gate.waitFor(seen + 1);
    const push = await deliver(er);
    assert.equal(push.body.outcome, 'queuedAfter', push.text);
    const tarballsBefore = tarballRequests(github);
    gate.failNext(5); // MAX_ATTEMPTS deliveries of the upload's one embed message
    gate.release();
    const failed = await er.waitForJob(upload.body.job.id);
    assert.equal(failed.status, 'FAILED');
    assert.equal(failed.lastError.code, 'EMBED_BACKEND');
    let fetchJob;
    for (let i = 0; i < 100 && !fetchJob; i++) {
      const rows = await jobsOf(er, 'repo:acme/hooks');
      fetchJob = rows.slice(rows.findIndex((j) => j.id === upload.body.job.id) + 1).find((j) => j.source === 'github');
      if (!fetchJob) await sleep(100);
    }
    assert.ok(fetchJob, 'the queued fetch started after the failure');
    const fetched = await er.waitForJob(fetchJob.id);
    assert.equal(fetched.status, 'SUCCEEDED', JSON.stringify(fetched.lastError));
    assert.equal(tarballRequests(github), tarballsBefore + 1);
    const [{ n }] = await er.d1("SELECT COUNT(*) AS n FROM chunks WHERE namespace = ? AND text LIKE '%version 4%'", 'repo:acme/hooks');
    assert.equal(n, 1);
  });
});

describe('the scheduled run', () => {
  test('re-syncs a registered repository once its sync interval elapsed', async () => {
    const jobsBefore = (await jobsOf(er, 'repo:acme/hooks')).length;
    await er.scheduled(Date.now() + 30 * 60_000); // 30 min: not due (interval 60)
    assert.equal((await jobsOf(er, 'repo:acme/hooks')).length, jobsBefore, 'not due yet');
    const tarballsBefore = tarballRequests(github);
    await er.scheduled(Date.now() + 61 * 60_000);
    const rows = await jobsOf(er, 'repo:acme/hooks');
    assert.equal(rows.length, jobsBefore + 1, 'one re-sync job');
    const job = await er.waitForJob(rows.at(-1).id);
    assert.equal(job.source, 'github');
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
    assert.equal(job.files.unchanged, 2, 'nothing changed upstream: an incremental no-op');
    assert.equal(tarballRequests(github), tarballsBefore + 1);
    // acme/plain has no sync interval: never re-synced.
    assert.equal((await jobsOf(er, 'repo:acme/plain')).length, 1);
  });

  test('resumes a job whose worker died mid-ingestion', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'edgerag-webhooks-'));
    const ownGate = await startGate(embed.url);
    let second;
    try {
      await applyMigrations(dir);
      const vars = { OPENAI_BASE_URL: ownGate.url, GITHUB_API_URL: github.url };
      const first = await startEdgerag({ vars, persistDir: dir });
      ownGate.hold();
      const files = [
        { path: 'a.md', content: '# A\n\nalpha file\n' },
        { path: 'b.md', content: '# B\n\nbeta file\n' },
        { path: 'src/c.py', content: 'def gamma():\n    return 3\n' },
      ];
      const r = await first.request('POST', '/v1/repos/acme/died/files', { body: { files } });
      assert.equal(r.status, 202, r.text);
      await ownGate.waitFor(1);
      await first.stop(); // the worker dies with its embed message in flight
      ownGate.drop();
      ownGate.release();

      second = await startEdgerag({ vars, persistDir: dir });
      await sleep(3000);
      const stuck = await second.request('GET', `/v1/jobs/${r.body.job.id}`);
      assert.equal(stuck.body.status, 'RUNNING', `the job waits for lost messages: ${stuck.text}`);

      // Not quiet long enough yet (JOB_RESUME_SECONDS = 120): the run leaves it alone.
      await second.scheduled(Date.now() + 60_000);
      await sleep(1500);
      assert.equal((await second.request('GET', `/v1/jobs/${r.body.job.id}`)).body.status, 'RUNNING');

      await second.scheduled(Date.now() + 5 * 60_000);
      const job = await second.waitForJob(r.body.job.id);
      assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
      assert.deepEqual({ added: job.files.added, indexed: job.chunks.indexed }, { added: 3, indexed: 3 });
      const [{ n }] = await second.d1('SELECT COUNT(*) AS n FROM chunks WHERE namespace = ?', 'repo:acme/died');
      assert.equal(n, 3, 'every chunk indexed exactly once');
      assert.match(second.logs(), /job_resumed/);
    } finally {
      await second?.stop();
      await ownGate.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
