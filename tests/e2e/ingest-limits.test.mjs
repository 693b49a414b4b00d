// Ingestion within its budgets when the work is split: a generated repository of 240 Python files
// that import, subclass and call each other across packages, and a text file just under 1 MiB,
// indexed by a worker whose knobs make a small repository take the split paths —
// `GRAPH_PAGE_BYTES` (the job's cross-file resolution reads and resolves the stored file graphs
// a few KB at a time instead of 4 MB) and `BATCH_D1_STATEMENTS` (a queue batch hands its
// remaining messages to new ones, and the job's end its remaining pages and steps to a follow-up
// message, once its own statements near 50 instead of 500). Then: every invocation within the
// budgets of src/limits.json and every queue invocation, the job's end included, within those 50
// statements; the splits taken (their log lines); the job SUCCEEDED only once its end was done;
// the stored edges and ranks equal to one resolution over every stored graph at once
// (`/__test/graph/unsplit`), the chunks those of `/v1/chunk` over the same files, and searches
// answered from them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { ledgerOverBudget, sleep, startEdgerag, startHashEmbedder } from './harness.mjs';

const PACKAGES = 8;
const MODULES = 30;
/** The statement budget of a queue invocation given to the worker: small, yet above what indexing
 *  the 1 MB text file alone takes (43: a file's rows are written in one transaction, so a file is
 *  never split across messages). */
const BATCH_STATEMENTS = 50;
let er;
let embed;

/** Module `i` of package `p`: a base class, a helper, and a model that subclasses another
 *  package's base, calls its helper and an inherited method. */
function module(p, i) {
  const q = (p + 1) % PACKAGES;
  const j = (i * 7 + 3) % MODULES;
  return [
    `"""Module ${i} of package ${p}: models over pkg${q}.mod${j}."""`,
    `from pkg${q}.mod${j} import Base${q}x${j}, helper_${q}_${j}`,
    '',
    '',
    `class Base${p}x${i}:`,
    `    def scale_${p}_${i}(self, x):`,
    `        return x * ${i + 2}`,
    '',
    '',
    `def helper_${p}_${i}(x):`,
    `    return x + ${i}`,
    '',
    '',
    `class Model${p}x${i}(Base${q}x${j}):`,
    `    def run_${p}_${i}(self, x):`,
    `        return helper_${q}_${j}(x) + self.scale_${q}_${j}(x) + helper_${p}_${i}(x)`,
    '',
  ].join('\n');
}

/** A Rust file of `n` small functions, each calling the previous one: its code graph is ≈ 0.9 KB a
 *  function, so 1,070 make a graph just under the 1 MB value budget (stored), whose JSON escaped in a
 *  row array would be over it. */
function manyFunctions(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push(`/// Step ${i} of the pipeline.\npub fn step_${i}(x: u64) -> u64 {\n    ${i ? `step_${i - 1}(x) + ${i}` : 'x'}\n}\n`);
  }
  return out.join('\n');
}

function repository() {
  const files = [{ path: 'steps/src/lib.rs', content: manyFunctions(1070) }];
  for (let p = 0; p < PACKAGES; p++) {
    files.push({ path: `pkg${p}/__init__.py`, content: '' });
    for (let i = 0; i < MODULES; i++) files.push({ path: `pkg${p}/mod${i}.py`, content: module(p, i) });
  }
  // Just under 1 MiB: one staged value of it would be over the 1 MB value budget.
  const line = 'The ledger keeps every invocation within half of the platform limit.\n';
  files.push({ path: 'notes/large.txt', content: line.repeat(Math.floor(1_040_000 / line.length)) });
  return files;
}

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({
    vars: {
      OPENAI_BASE_URL: embed.url,
      GRAPH_PAGE_BYTES: '60000',
      BATCH_D1_STATEMENTS: String(BATCH_STATEMENTS),
      FILES_PER_MESSAGE: '20',
    },
  });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

describe('ingestion split to stay within budget', () => {
  test('a repository indexed in pieces: within budget, and the outcome of the unsplit work', async () => {
    const files = repository();
    await er.request('DELETE', '/__test/ledger');
    const job = await er.indexFiles('acme/bulk', files, { timeoutMs: 240_000 });
    assert.equal(job.status, 'SUCCEEDED');

    // The job is SUCCEEDED only once its end is done: the resolution's last line is logged
    // before the job's completion, and the end took more than one message.
    let logs = er.logs();
    const lines = (event) => logs.split('\n').filter((l) => l.includes(`"${event}"`));
    const resolved = lines('graph_resolved');
    assert.equal(resolved.length, 1, `the resolution ended once, before the job succeeded:\n${resolved.join('\n')}`);
    const pages = Number(/"pages":"(\d+)"/.exec(resolved[0])?.[1]);
    assert.ok(pages >= 10, `resolution read the stored graphs in ${pages} pages: ${resolved[0]}`);
    const continued = lines('graph_resolution_continued');
    assert.ok(continued.length >= 1, 'the resolution went on in a follow-up message');
    // Each follow-up started after the last file the previous message wrote.
    const hops = [...continued, resolved[0]].map((l) => [/"from":"([^"]*)"/.exec(l)?.[1], /"to":"([^"]*)"/.exec(l)?.[1]]);
    for (let i = 1; i < hops.length; i++) assert.equal(hops[i][0], hops[i - 1][1], JSON.stringify(hops));
    assert.equal(hops[0][0], '', JSON.stringify(hops));
    assert.match(logs, /"batch_handed_over"/, 'a queue batch handed messages on at its statement budget');
    assert.match(logs, /"index_range_split"/, 'an index message split its range at its statement budget');
    const ended = logs.indexOf('"graph_resolved"');
    const succeeded = logs.indexOf('"job_succeeded"');
    assert.ok(ended >= 0 && succeeded > ended, 'the job succeeded after its end resolved the graph');
    // … and after it stored the vector snapshot at the namespace's generation.
    const parts = await er.d1("SELECT part, parts, generation FROM local_vector_snapshots WHERE namespace = 'repo:acme/bulk'");
    const [vectorGeneration] = await er.d1("SELECT generation FROM local_vector_generations WHERE namespace = 'repo:acme/bulk'");
    assert.ok(parts.length >= 1 && parts.every((p) => p.parts === parts.length && p.generation === vectorGeneration.generation), JSON.stringify({ parts, vectorGeneration }));
    const prepared = logs.indexOf('"vector_snapshot_prepared"', ended);
    assert.ok(prepared > ended && prepared < succeeded, 'the snapshot was prepared between the resolution and the completion');

    // The code graph: the edges and ranks of one resolution over every stored graph at once.
    const check = await er.request('POST', '/__test/graph/unsplit', { body: { namespace: 'repo:acme/bulk' } });
    assert.equal(check.status, 200, check.text);
    const g = check.body;
    assert.equal(g.files, PACKAGES * (MODULES + 1) + 1, JSON.stringify(g));
    const [steps] = await er.d1("SELECT length(graph) AS n FROM graph_files WHERE namespace = 'repo:acme/bulk' AND path = 'steps/src/lib.rs'");
    assert.ok(steps?.n > 900_000 && steps.n <= 1_000_000, `the large file graph is stored whole: ${JSON.stringify(steps)}`);
    assert.ok(g.pages >= 10, JSON.stringify(g));
    assert.ok(g.crossFileResolved >= 3 * PACKAGES * MODULES, `cross-file edges resolved: ${JSON.stringify(g)}`);
    assert.equal(g.edgeDifference, null);
    assert.equal(g.edgesEqual, true);
    assert.equal(g.storedEdges, g.edges);
    assert.equal(g.rankDifference, null);
    assert.equal(g.ranksEqual, true);
    // The ledger: every invocation within src/limits.json's budgets, and every queue invocation —
    // the job end's included — within the worker's statement budget.
    // (An invocation is in the ledger once it ended: the one that completed the job ends after
    // its last message's `stage_done` line.)
    for (let i = 0; i < 100 && !/"stage_done"[^\n]*"stage":"finish"/.test(er.logs().slice(succeeded)); i++) await sleep(100);
    let stages = [];
    for (let i = 0, seen = -1; i < 20; i++) {
      ({ stages } = await er.ledger());
      const n = stages.reduce((sum, st) => sum + st.invocations, 0);
      if (n === seen) break;
      seen = n;
      await sleep(250);
    }
    assert.deepEqual(ledgerOverBudget(stages), [], 'every invocation within its budget');
    const queueStages = stages.filter((st) => st.kind === 'queue');
    assert.ok(queueStages.some((st) => st.stage === 'edgerag-index'), JSON.stringify(stages.map((st) => st.stage)));
    const overBatch = queueStages.filter((st) => st.max.d1Statements > BATCH_STATEMENTS);
    assert.deepEqual(overBatch.map((st) => `${st.stage} ${st.max.d1Statements}`), [], `queue invocations within ${BATCH_STATEMENTS} statements`);
    const valueMax = Math.max(...stages.filter((st) => st.kind !== 'test').map((st) => st.max.d1MaxValueBytes));
    assert.ok(valueMax > 500_000 && valueMax <= 1_000_000, `largest bound value ${valueMax}`);
    const handedOver = logs.split('\n').filter((l) => l.includes('"batch_handed_over"')).length;
    const queues = stages.filter((s) => s.kind === 'queue' || s.max.d1Statements > 100).map((s) => `${s.stage} ${s.invocations}× max ${s.max.d1Statements} statements`);
    process.stderr.write(`[ingest-limits] graph ${JSON.stringify({ ...g, edgeDifference: undefined, rankDifference: undefined })}; ${pages} pages; ${handedOver} batches handed over; the job's end in ${lines('job_end_handed_on').length + 1} messages; ${queues.join('; ')}; largest value ${valueMax} B\n`);
    // An inherited method reached through another file's base class: resolved, not external.
    const [inherited] = await er.d1(
      "SELECT dst, resolution FROM graph_edges WHERE namespace = 'repo:acme/bulk' AND path = 'pkg0/mod0.py' AND dst_name LIKE '%scale_1_3'",
    );
    assert.ok(inherited?.dst, JSON.stringify(inherited));

    // The chunks: those the core makes of the same files (the large file's too).
    const chunked = await er.request('POST', '/v1/chunk', { body: { files } });
    assert.equal(chunked.status, 200, chunked.text);
    const expected = chunked.body.files.flatMap((f) => f.chunks.map((c) => c.id)).sort();
    const stored = (await er.d1("SELECT id FROM chunks WHERE namespace = 'repo:acme/bulk'")).map((r) => r.id).sort();
    assert.deepEqual(stored, expected);
    assert.ok(chunked.body.files.find((f) => f.path === 'notes/large.txt').chunks.length > 100);
    const [staged] = await er.d1("SELECT COUNT(*) AS n FROM job_files WHERE content IS NOT NULL OR content_tail IS NOT NULL");
    assert.equal(staged.n, 0, 'staged content is cleared, both parts');

    // Deleting two packages (62 files, one index message of deletions): within the budget too,
    // and the graph is still that of one resolution over what is left.
    await er.request('DELETE', '/__test/ledger');
    const gone = files.filter((f) => /^pkg[67]\//.test(f.path)).map((f) => f.path);
    const del = await er.request('DELETE', '/v1/repos/acme/bulk/files', { body: { paths: gone } });
    assert.equal(del.status, 202, del.text);
    const deleted = await er.waitForJob(del.body.job.id, { timeoutMs: 120_000 });
    assert.equal(deleted.status, 'SUCCEEDED', JSON.stringify(deleted));
    assert.equal(deleted.files.deleted, gone.length);
    const after = await er.request('POST', '/__test/graph/unsplit', { body: { namespace: 'repo:acme/bulk' } });
    assert.equal(after.body.files, g.files - gone.length, JSON.stringify(after.body));
    assert.equal(after.body.edgeDifference, null);
    assert.equal(after.body.rankDifference, null);
    const [left] = await er.d1("SELECT COUNT(*) AS n FROM files WHERE namespace = 'repo:acme/bulk' AND (path LIKE 'pkg6/%' OR path LIKE 'pkg7/%')");
    assert.equal(left.n, 0);
    let deleteStages = [];
    for (let i = 0, seen = -1; i < 20; i++) {
      ({ stages: deleteStages } = await er.ledger());
      const n = deleteStages.reduce((sum, st) => sum + st.invocations, 0);
      if (n === seen && deleteStages.some((st) => st.stage === 'edgerag-index')) break;
      seen = n;
      await sleep(250);
    }
    const deleteOver = deleteStages.filter((st) => st.kind === 'queue' && st.max.d1Statements > BATCH_STATEMENTS);
    assert.deepEqual(deleteOver.map((st) => `${st.stage} ${st.max.d1Statements}`), [], 'deletions within the statement budget');

    // Searches answered from them.
    for (const [rawQuery, path] of [['helper_5_17', 'pkg5/mod17.py'], ['ledger keeps every invocation', 'notes/large.txt']]) {
      const r = await er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'bulk', rawQuery } });
      assert.equal(r.status, 200, r.text);
      const paths = JSON.stringify(r.body);
      assert.ok(paths.includes(path), `${rawQuery}: ${paths.slice(0, 500)}`);
    }
  });
});
