// Per-node chunk plans: a dry run counts one plan per graph node, a real run writes them as
// searchable `symbol-plan` chunks and keeps a run record; `summarize` is skipped without a
// generator and runs against an OpenAI-compatible chat server when one is configured (a local stub
// here), which also drives the search's LLM query transformers.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { assertSchema, keywordIndexIds, sleep, startEdgerag, startHashEmbedder } from './harness.mjs';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'graph', 'python', 'app');
const FILES = readdirSync(FIXTURE)
  .filter((f) => f.endsWith('.py'))
  .sort()
  .map((f) => ({ path: `app/${f}`, content: readFileSync(join(FIXTURE, f), 'utf8') }));
const REPO = 'acme/plans';
const NS = `repo:${REPO}`;
const SUMMARY = 'STUB SUMMARY: this code defines a value used by the application.';

/** An OpenAI-compatible `/chat/completions` stub recording what it was asked. */
async function startChatStub() {
  const requests = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    requests.push(body);
    const system = body.messages?.find((m) => m.role === 'system')?.content ?? '';
    const user = body.messages?.find((m) => m.role === 'user')?.content ?? '';
    // Summaries for the plans; for the search's transformers, the question back unchanged.
    const content = /summarize source code/i.test(system) ? SUMMARY : user.split('\n').pop();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content } }] }));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    stop: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}

async function indexFixture(er) {
  const r = await er.request('POST', `/v1/repos/${REPO}/files`, { body: { files: FILES } });
  assert.equal(r.status, 202, r.text);
  const job = await er.waitForJob(r.body.job.id);
  assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job.lastError));
}

async function startRun(er, body) {
  const r = await er.request('POST', `/v1/repos/${REPO}/plans`, { body });
  assert.equal(r.status, 202, r.text);
  await assertSchema('plan-run-response', r.body);
  assert.match(r.body.run.id, /^plan_[0-9a-f]{24}$/);
  return r.body.run;
}

async function waitForRun(er, id, { timeoutMs = 60_000 } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await er.request('GET', `/v1/repos/${REPO}/plans/${id}`);
    assert.equal(r.status, 200, r.text);
    if (r.body.run.status === 'READY' || r.body.run.status === 'FAILED') {
      await assertSchema('plan-run-response', r.body);
      return r.body.run;
    }
    if (Date.now() > end) throw new Error(`plan run ${id} still ${r.body.run.status}: ${r.text}\n${er.logs().slice(-4000)}`);
    await sleep(200);
  }
}

/** Expected plan kinds, from the graph the worker stored (doc plan iff signature or doc). */
async function graphCounts(er) {
  const [row] = await er.d1(
    `SELECT COUNT(*) AS nodes,
            SUM(CASE WHEN TRIM(COALESCE(signature, '')) <> '' OR TRIM(COALESCE(doc, '')) <> '' THEN 1 ELSE 0 END) AS doc
       FROM graph_nodes WHERE namespace = ?`,
    NS,
  );
  return { nodes: row.nodes, doc: row.doc, code: row.nodes - row.doc };
}

const planChunks = (er) =>
  er.d1("SELECT id, path, text, metadata, symbol_name FROM chunks WHERE namespace = ? AND type = 'symbol-plan' ORDER BY id", NS);

describe('per-node plans without a generator', () => {
  let embed;
  let er;
  before(async () => {
    embed = await startHashEmbedder();
    er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
    await indexFixture(er);
  });
  after(async () => {
    await er?.stop();
    await embed?.stop();
  });

  test('a dry run counts one plan per node in pages and writes nothing', async () => {
    const expected = await graphCounts(er);
    assert.ok(expected.nodes > 10 && expected.doc > 0 && expected.code > 0, JSON.stringify(expected));
    const started = await startRun(er, { strategy: 'per-node', dryRun: true, batchSize: 50 });
    assert.equal(started.params.dryRun, true);
    const run = await waitForRun(er, started.id);
    assert.equal(run.status, 'READY', JSON.stringify(run.lastError));
    assert.equal(run.processedNodes, expected.nodes);
    assert.equal(run.skippedChunks, expected.nodes);
    assert.equal(run.writtenChunks, 0);
    assert.equal(run.pages, Math.ceil(expected.nodes / 50) + (expected.nodes % 50 === 0 ? 1 : 0));
    assert.ok(run.durationMs >= 0 && run.rate >= 0);
    assert.ok(run.completedAt && run.startedAt);
    assert.deepEqual(await planChunks(er), [], 'a dry run writes no chunk');
  });

  test('limitNodes caps the run, includeKinds filters case-insensitively and warns about unknown kinds', async () => {
    const limited = await waitForRun(er, (await startRun(er, { dryRun: true, limitNodes: 3 })).id);
    assert.equal(limited.processedNodes, 3);
    const [{ n: methods }] = await er.d1("SELECT COUNT(*) AS n FROM graph_nodes WHERE namespace = ? AND kind = 'METHOD'", NS);
    assert.ok(methods > 0);
    const started = await startRun(er, { dryRun: true, includeKinds: ['method', 'Gizmo'], batchSize: 10 });
    assert.deepEqual(started.params.includeKinds, ['METHOD']);
    assert.equal(started.params.batchSize, 50, 'a batch size under the minimum is raised to it');
    assert.ok(started.warnings.some((w) => /Gizmo/.test(w)), JSON.stringify(started.warnings));
    assert.ok(started.warnings.some((w) => /batchSize 10/.test(w)), JSON.stringify(started.warnings));
    const run = await waitForRun(er, started.id);
    assert.equal(run.processedNodes, methods);
  });

  test('a real run writes one searchable plan chunk per node, highest priority first, and a rerun duplicates nothing', async () => {
    const expected = await graphCounts(er);
    const run = await waitForRun(er, (await startRun(er, { strategy: 'PER-NODE', batchSize: 50 })).id);
    assert.equal(run.status, 'READY', JSON.stringify(run.lastError));
    assert.equal(run.processedNodes, expected.nodes);
    assert.equal(run.writtenChunks, expected.nodes);
    assert.equal(run.skippedChunks, 0);
    assert.equal(run.summarizedChunks, 0);
    assert.equal(run.summarizeSkipped, expected.code, 'every code plan records summarize as skipped');
    const chunks = await planChunks(er);
    assert.equal(chunks.length, expected.nodes);

    const [slugify] = await er.d1("SELECT id FROM graph_nodes WHERE namespace = ? AND fqn = 'app.util.slugify'", NS);
    const doc = chunks.map((c) => ({ ...c, metadata: JSON.parse(c.metadata) })).find((c) => c.metadata.symbolId === slugify.id);
    assert.equal(doc.metadata.planId, `${slugify.id}:doc:explanation`);
    assert.deepEqual(doc.metadata.pipeline.stages, ['render-doc', 'embed', 'link-edges']);
    assert.deepEqual(doc.metadata.headingPath, ['app', 'util', 'slugify']);
    assert.match(doc.text, /^# Function `app\.util\.slugify`/);
    assert.match(doc.text, /Lowercase `text` and join its words with dashes\./);
    assert.match(doc.text, /Used by:\n- `app\.models\.User\.__init__`/, doc.text);
    const code = chunks.map((c) => JSON.parse(c.metadata)).find((m) => m.source === 'code');
    assert.ok(code.planId.endsWith(':code:snippet'));
    assert.deepEqual(code.pipeline.skipped, ['summarize']);
    assert.equal(code.pipeline.skipReason, 'no generator configured');

    // CALLS relations keep their confidence.
    const [createUser] = await er.d1("SELECT id FROM graph_nodes WHERE namespace = ? AND fqn = 'app.routes.create_user'", NS);
    const handler = chunks.map((c) => JSON.parse(c.metadata)).find((m) => m.symbolId === createUser.id);
    assert.ok(handler.relations.length > 0 && handler.relations.every((r) => r.kind === 'CALLS' && r.confidence >= 0));
    assert.ok(handler.usesMd.length > 0);

    // The same run again rewrites the same chunks.
    const again = await waitForRun(er, (await startRun(er, {})).id);
    assert.equal(again.writtenChunks, expected.nodes);
    assert.deepEqual((await planChunks(er)).map((c) => c.id), chunks.map((c) => c.id));
    const [{ n: vectors }] = await er.d1('SELECT COUNT(*) AS n FROM chunks WHERE namespace = ?', NS);
    assert.equal((await keywordIndexIds(er, NS)).length, vectors, 'FTS follows the chunks');
  });

  test('a plan chunk and the code it describes are one answer, the code; file line reads ignore plan chunks', async () => {
    const r = await er.request('POST', '/v1/search', {
      body: { owner: 'acme', name: 'plans', rawQuery: 'Lowercase text and join its words with dashes' },
    });
    assert.equal(r.status, 200, r.text);
    const shown = JSON.stringify(r.body.matches.map((m) => [m.path, m.startLine, m.endLine, m.snippet.slice(0, 40)]));
    const slugify = r.body.matches.filter((m) => m.path === 'app/util.py' && m.startLine <= 7 && m.endLine >= 7);
    assert.equal(slugify.length, 1, `one match holds slugify's lines: ${shown}`);
    assert.match(slugify[0].snippet, /def slugify/, shown);
    assert.ok(!r.body.matches.some((m) => /^# Function `app\.util\.slugify`/.test(m.snippet)), `no second answer for slugify: ${shown}`);
    const lines = await er.request('GET', `/v1/repos/${REPO}/files/app/util.py/lines?start=7&end=7`);
    assert.equal(lines.status, 200, lines.text);
    assert.equal(lines.body.text, 'def slugify(text):');
  });

  test('bad requests get stable 4xx codes and other repositories are not visible', async () => {
    const bad = async (body, status, code) => {
      const r = await er.request('POST', `/v1/repos/${REPO}/plans`, { body });
      assert.equal(r.status, status, r.text);
      await assertSchema('error', r.body);
      assert.equal(r.body.error.code, code);
    };
    await bad({ strategy: 'per-file' }, 400, 'UNKNOWN_STRATEGY');
    await bad({ limitNodes: 0 }, 400, 'INVALID_LIMIT');
    await bad({ batchSize: 'big' }, 400, 'INVALID_REQUEST');
    await bad({ dryRun: true, extra: 1 }, 400, 'INVALID_REQUEST');
    const missing = await er.request('POST', '/v1/repos/acme/never-indexed/plans', { body: {} });
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.error.code, 'REPO_NOT_FOUND');
    const unknown = await er.request('GET', `/v1/repos/${REPO}/plans/plan_000000000000000000000000`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'PLAN_RUN_NOT_FOUND');

    // A run of this repository is not visible through another one.
    const other = { files: [{ path: 'x.py', content: 'def x():\n    return 1\n' }] };
    const r = await er.request('POST', '/v1/repos/other/repo/files', { body: other });
    await er.waitForJob(r.body.job.id);
    const run = await startRun(er, { dryRun: true });
    const cross = await er.request('GET', `/v1/repos/other/repo/plans/${run.id}`);
    assert.equal(cross.status, 404, cross.text);

    // A key scoped to another namespace may not start or read runs here.
    const mint = await er.request('POST', '/v1/keys', { body: { name: 'elsewhere', scopes: ['read', 'write'], namespaces: ['other/*'] } });
    assert.equal(mint.status, 201, mint.text);
    const denied = await er.request('POST', `/v1/repos/${REPO}/plans`, { body: {}, token: mint.body.token });
    assert.equal(denied.status, 403, denied.text);
    const deniedRead = await er.request('GET', `/v1/repos/${REPO}/plans/${run.id}`, { token: mint.body.token });
    assert.equal(deniedRead.status, 403, deniedRead.text);
    const readOnly = await er.request('POST', '/v1/keys', { body: { name: 'reader', scopes: ['read'], namespaces: ['acme/*'] } });
    const noWrite = await er.request('POST', `/v1/repos/${REPO}/plans`, { body: {}, token: readOnly.body.token });
    assert.equal(noWrite.status, 403, noWrite.text);
    assert.equal((await er.request('GET', `/v1/repos/${REPO}/plans/${run.id}`, { token: readOnly.body.token })).status, 200);
  });
});

describe('per-node plans with an OpenAI-compatible generator (local stub), messages delivered twice', () => {
  let embed;
  let chat;
  let er;
  before(async () => {
    embed = await startHashEmbedder();
    chat = await startChatStub();
    er = await startEdgerag({
      vars: { OPENAI_BASE_URL: embed.url, GENERATOR: 'openai', GENERATOR_BASE_URL: chat.url, GENERATOR_MODEL: 'stub-chat', DELIVER_TWICE: '1' },
    });
    await indexFixture(er);
  });
  after(async () => {
    await er?.stop();
    await chat?.stop();
    await embed?.stop();
  });

  test('a capped run plans the highest-priority nodes first (handlers and methods)', async () => {
    const [{ n: top }] = await er.d1("SELECT COUNT(*) AS n FROM graph_nodes WHERE namespace = ? AND kind IN ('METHOD', 'ENDPOINT')", NS);
    assert.ok(top > 0);
    const run = await waitForRun(er, (await startRun(er, { limitNodes: top, batchSize: 50 })).id);
    assert.equal(run.writtenChunks, top);
    const kinds = await er.d1(
      `SELECT DISTINCT n.kind FROM chunks c JOIN graph_nodes n ON n.namespace = c.namespace AND n.id = json_extract(c.metadata, '$.symbolId')
        WHERE c.namespace = ? AND c.type = 'symbol-plan'`,
      NS,
    );
    assert.ok(kinds.length > 0 && kinds.every((k) => k.kind === 'METHOD' || k.kind === 'ENDPOINT'), JSON.stringify(kinds));
  });

  test('summarize runs the generator for every code plan and counts each page once', async () => {
    const expected = await graphCounts(er);
    const before = chat.requests.length;
    const run = await waitForRun(er, (await startRun(er, { strategy: 'per-node', batchSize: 50 })).id);
    assert.equal(run.status, 'READY', JSON.stringify(run.lastError));
    assert.equal(run.processedNodes, expected.nodes, 'duplicate page messages count once');
    assert.equal(run.writtenChunks, expected.nodes);
    assert.equal(run.summarizedChunks, expected.code);
    assert.equal(run.summarizeSkipped, 0);
    const asked = chat.requests.slice(before).filter((b) => /summarize source code/i.test(b.messages[0].content));
    assert.ok(asked.length >= expected.code, `${asked.length} summarize calls for ${expected.code} code plans`);
    assert.equal(asked[0].model, 'stub-chat');
    const chunks = await planChunks(er);
    assert.equal(chunks.length, expected.nodes, 'no duplicate chunks');
    const code = chunks.filter((c) => JSON.parse(c.metadata).source === 'code');
    assert.equal(code.length, expected.code);
    for (const c of code) {
      assert.ok(c.text.includes(SUMMARY), c.text);
      const meta = JSON.parse(c.metadata);
      assert.equal(meta.summary, SUMMARY);
      assert.deepEqual(meta.pipeline.skipped, []);
    }
  });

  test('the search runs its LLM query rewrite through the same chat endpoint', async () => {
    const before = chat.requests.length;
    const r = await er.request('POST', '/v1/search', {
      body: { owner: 'acme', name: 'plans', rawQuery: 'where are slugs made from text', profile: 'aggressive' },
    });
    assert.equal(r.status, 200, r.text);
    assert.ok(chat.requests.length > before, 'the search called the generator');
    assert.ok(r.body.appliedModules.some((m) => /^query\.(rewrite|translation|compression)$/.test(m)), JSON.stringify(r.body.appliedModules));
  });
});
