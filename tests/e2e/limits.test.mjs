// The limits ledger end to end: an upload (with a large generated source file), a GitHub index,
// a signed push, searches, a chunk-plan run and a scheduled run, then the ledger
// (GET /__test/ledger) holds every stage they caused, each figure within its budget of
// Cloudflare's limits (src/limits.json); the report printed on stderr says which stages fit the
// free plan. The harness checks the same budgets for every other e2e file when it stops a worker.
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import {
  LIMITS, ledgerOverBudget, makeTarGz, sleep, startEdgerag, startGitHubMock, startHashEmbedder,
} from './harness.mjs';

const SECRET = 'limits-secret-0123';
const PREFIX = 'acme-hooked-0123abc/';
let version = 1;
let er;
let embed;
let github;

/** A Rust file of `n` small functions, each calling the previous one. */
function manyFunctions(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push(`/// Step ${i} of the pipeline.\npub fn step_${i}(x: u64) -> u64 {\n    ${i ? `step_${i - 1}(x) + ${i}` : 'x'}\n}\n`);
  }
  return out.join('\n');
}

// A generated table of literals (≈ 660 KB): its syntax tree would be far over the memory budget.
function literalTable(rows) {
  const row = (i) => `    [${Array.from({ length: 40 }, (_, j) => (i * 31 + j) % 251).join(', ')}]`;
  return `pub static TABLE: [[u8; 40]; ${rows}] = [\n${Array.from({ length: rows }, (_, i) => row(i)).join(',\n')}\n];\n`;
}

function tarball() {
  return makeTarGz([
    { path: PREFIX, type: 'dir' },
    { path: `${PREFIX}README.md`, content: `# Hooked\n\nRelease ${version}: the retry budget and the backoff.\n` },
    { path: `${PREFIX}src/lib.rs`, content: `pub fn version() -> u32 {\n    ${version}\n}\n${manyFunctions(50)}` },
  ]);
}

function push() {
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    before: '0'.repeat(40),
    after: String(version).repeat(40),
    deleted: false,
    repository: { name: 'hooked', full_name: 'acme/hooked', owner: { login: 'acme', name: 'acme' }, default_branch: 'main' },
  });
  return er.request('POST', '/v1/webhooks/github', {
    body,
    token: null,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    },
  });
}

const pct = (value, limit) => `${Math.round((100 * value) / limit)}%`;

before(async () => {
  embed = await startHashEmbedder();
  github = await startGitHubMock({ 'acme/hooked': () => tarball() });
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, GITHUB_API_URL: github.url } });
});

after(async () => {
  await er?.stop();
  await github?.stop();
  await embed?.stop();
});

describe('the limits ledger', () => {
  test('a stage over a budget is reported, and a ledger without stages or figures is an error', () => {
    const within = Object.fromEntries(LIMITS.limits.filter((l) => l.figure).map((l) => [l.figure, l.budget]));
    assert.deepEqual(ledgerOverBudget([{ kind: 'queue', stage: 'q', max: within }]), []);
    assert.deepEqual(ledgerOverBudget([{ kind: 'test', stage: 'POST /__test/vectors/suite', max: { ...within, d1Statements: 7937 } }]), []);
    const over = ledgerOverBudget([{ kind: 'queue', stage: 'q', max: { ...within, d1Statements: 501 } }]);
    assert.deepEqual(over, [['queue q', 'd1Statements', 501, 500]]);
    assert.throws(() => ledgerOverBudget(undefined), /no stages/);
    assert.throws(() => ledgerOverBudget([{ kind: 'http', stage: 'GET /x', max: {} }]), /has no figure/);
  });

  test('index, push, search, plan and scheduled invocations all stay within their budgets', async () => {
    await er.request('DELETE', '/__test/ledger');
    const files = [
      { path: 'src/steps.rs', content: manyFunctions(500) },
      { path: 'docs/guide.md', content: '# Guide\n\n' + 'The retry budget doubles each attempt.\n\n'.repeat(400) },
      { path: 'web/app.min.js', content: 'var a=1;'.repeat(20_000) },
      ...Array.from({ length: 40 }, (_, i) => ({ path: `pkg/m${i}.py`, content: `def handler_${i}(event):\n    return event.get("id", ${i})\n` })),
    ];
    await er.indexFiles('acme/limits', files, { timeoutMs: 240_000 });

    const indexed = await er.request('POST', '/v1/repos/acme/hooked/index', { body: { ref: 'main', webhookSecret: SECRET } });
    assert.equal(indexed.status, 202, indexed.text);
    assert.equal((await er.waitForJob(indexed.body.job.id)).status, 'SUCCEEDED');
    version = 2;
    const pushed = await push();
    assert.equal(pushed.status, 202, pushed.text);
    assert.equal((await er.waitForJob(pushed.body.job.id)).status, 'SUCCEEDED');

    for (const rawQuery of ['where does the retry budget double', 'step_499', 'handler event id']) {
      const r = await er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'limits', rawQuery } });
      assert.equal(r.status, 200, r.text);
    }
    const plan = await er.request('POST', '/v1/repos/acme/limits/plans', { body: { strategy: 'per-node', batchSize: 1000 } });
    assert.equal(plan.status, 202, plan.text);
    for (let i = 0; ; i++) {
      const r = await er.request('GET', `/v1/repos/acme/limits/plans/${plan.body.run.id}`);
      if (r.body.run.status === 'READY') break;
      assert.notEqual(r.body.run.status, 'FAILED', r.text);
      assert.ok(i < 600, `plan run still ${r.body.run.status}`);
      await sleep(200);
    }
    await er.scheduled();

    const { stages } = await er.ledger();
    const kinds = new Set(stages.map((s) => s.kind));
    assert.deepEqual([...kinds].sort(), ['http', 'queue', 'scheduled'], JSON.stringify(stages.map((s) => s.stage)));
    const stage = (kind, pattern) => {
      const s = stages.filter((x) => x.kind === kind && pattern.test(x.stage));
      assert.ok(s.length, `no ${kind} stage matches ${pattern}: ${stages.map((x) => x.stage).join(', ')}`);
      return s;
    };
    // The seams reported: statements, sends, embedding batches, fetches, memory and time.
    const upload = stage('http', /^POST \/v1\/repos\/\*\/\*\/files$/)[0].max;
    assert.ok(upload.d1Statements > 0 && upload.queueMaxMessageBytes > 0 && upload.queueMaxSendBatch > 0, JSON.stringify(upload));
    const queues = stages.filter((s) => s.kind === 'queue');
    assert.ok(queues.length >= 3, queues.map((s) => s.stage).join(', '));
    assert.ok(queues.some((s) => s.max.embedMaxInputs > 0), 'an embedding request was recorded');
    assert.ok(queues.some((s) => s.max.subrequests > 0 && s.max.queueBatch > 0), 'queue batches and fetches were recorded');
    assert.ok(queues.every((s) => s.max.d1Statements > 0 && s.max.wallMs > 0 && s.max.memoryBytes > 0), JSON.stringify(queues));
    stage('http', /^POST \/v1\/search$/);
    stage('http', /^POST \/v1\/webhooks\/github$/);
    stage('http', /^POST \/v1\/repos\/\*\/\*\/plans$/);

    // The report: each stage's largest figures against the paid limit, and what the free plan refuses.
    const measured = LIMITS.limits.filter((l) => l.figure);
    const lines = ['[limits] stage — invocations — largest figures (% of the paid limit) — free plan'];
    for (const s of stages) {
      const figures = measured
        .filter((l) => s.max[l.figure] > 0)
        .map((l) => `${l.figure} ${Math.round(s.max[l.figure])} (${pct(s.max[l.figure], l.paid)})`);
      const overFree = measured.filter((l) => s.max[l.figure] > l.free).map((l) => l.figure);
      const free = overFree.length ? `not on free: ${overFree.join(', ')}` : 'fits free';
      lines.push(`[limits] ${s.kind} ${s.stage} — ${s.invocations} — ${figures.join(', ')} — ${free}`);
    }
    process.stderr.write(`${lines.join('\n')}\n`);

    assert.deepEqual(ledgerOverBudget(stages), [], 'every invocation stays within its budget');
  });

  // A file's whole unresolved code graph is one D1 value (`graph_files.graph`), many times its
  // source: 2,000 small functions (≈ 180 KB, still within the parse budget, which 3,000 are
  // not) make a value over the 1 MB budget (D1's limit is 2 MB; workerd's local D1 does not
  // enforce it). Such a file keeps its chunks and loses its graph.
  test('a file of 2,000 functions stays within the D1 value budget: its graph is refused, its chunks indexed', async () => {
    await er.request('DELETE', '/__test/ledger');
    try {
      const summary = await er.indexFiles('acme/huge', [{ path: 'src/steps.rs', content: manyFunctions(2000) }], { timeoutMs: 240_000 });
      const over = ledgerOverBudget((await er.ledger()).stages);
      assert.deepEqual(over, []);
      const [chunks] = await er.d1("SELECT COUNT(*) AS n FROM chunks WHERE namespace = 'repo:acme/huge' AND path = 'src/steps.rs'");
      assert.ok(chunks.n > 100, `chunks of the big file: ${chunks.n} (${JSON.stringify(summary)})`);
      const [graphs] = await er.d1("SELECT COUNT(*) AS n FROM graph_files WHERE namespace = 'repo:acme/huge'");
      assert.equal(graphs.n, 0, 'the oversized file graph is not stored');
      const [nodes] = await er.d1("SELECT COUNT(*) AS n FROM graph_nodes WHERE namespace = 'repo:acme/huge'");
      assert.equal(nodes.n, 0, 'nor its nodes');
      // The job's status tells the user: the file is indexed with a warning.
      const status = await er.request('GET', '/v1/repos/acme/huge/status');
      assert.equal(status.status, 200, status.text);
      assert.deepEqual(status.body.job.warnings, [{ path: 'src/steps.rs', code: 'GRAPH_TOO_LARGE' }]);
      assert.equal(status.body.job.files.skipped, 0, 'indexed, not skipped');
    } finally {
      // An overflow is reported here, not again by the harness when the worker stops.
      await er.request('DELETE', '/__test/ledger');
    }
  });

  // A file whose syntax tree would be over the memory budget (hundreds of thousands of tokens)
  // stops its parse at a budget: it is cut without the tree, searchable, without a code graph,
  // and the job says so.
  test('a file too large to parse within the memory budget is indexed without its syntax tree, with a warning', async () => {
    await er.request('DELETE', '/__test/ledger');
    try {
      const files = [
        { path: 'src/table.rs', content: literalTable(3500) },
        { path: 'src/lib.rs', content: manyFunctions(3) },
      ];
      await er.indexFiles('acme/table', files, { timeoutMs: 240_000 });
      assert.deepEqual(ledgerOverBudget((await er.ledger()).stages), []);
      const status = await er.request('GET', '/v1/repos/acme/table/status');
      assert.equal(status.status, 200, status.text);
      assert.deepEqual(status.body.job.warnings, [{ path: 'src/table.rs', code: 'PARSE_OVER_BUDGET' }]);
      const rows = await er.d1("SELECT metadata FROM chunks WHERE namespace = 'repo:acme/table' AND path = 'src/table.rs'");
      assert.ok(rows.length > 10, `chunks of the table: ${rows.length}`);
      assert.ok(rows.every((r) => JSON.parse(r.metadata).fallback === 'PARSE_OVER_BUDGET'), 'every chunk says why');
      const [nodes] = await er.d1("SELECT COUNT(*) AS n FROM graph_nodes WHERE namespace = 'repo:acme/table' AND path = 'src/table.rs'");
      assert.equal(nodes.n, 0, 'no code graph for it');
      const [others] = await er.d1("SELECT COUNT(*) AS n FROM graph_nodes WHERE namespace = 'repo:acme/table' AND path = 'src/lib.rs'");
      assert.ok(others.n > 0, 'the other file keeps its graph');
    } finally {
      await er.request('DELETE', '/__test/ledger');
    }
  });
});
