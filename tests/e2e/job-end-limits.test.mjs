// A job's end on a namespace of more pages of stored graphs than a message has statements: 156
// Python files that import, subclass and call each other across packages, indexed by a worker
// whose stored graphs are resolved about one file a page (`GRAPH_PAGE_BYTES`) and whose queue
// invocations keep under 50 statements (`BATCH_D1_STATEMENTS`). Every message of the job's end
// builds the namespace's symbol table again before it resolves its pages; read from the stored
// graphs that took a statement per page — more than the message's whole budget here, so the end
// could never progress within it. Read from each file's stored definitions it takes a few. Then:
// the job SUCCEEDED and the repository ready, every queue invocation within the 50 statements,
// the end in several messages each starting where the last stopped, and the stored edges and
// ranks those of one resolution over every stored graph at once (`/__test/graph/unsplit`, the
// unbounded resolution). Last, files whose stored definitions are missing or of another format
// are read from their graphs, with the same outcome.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { ledgerOverBudget, sleep, startEdgerag, startHashEmbedder } from './harness.mjs';

const PACKAGES = 6;
const MODULES = 25;
const BATCH_STATEMENTS = 50;
/** About one stored file graph a page (each is 6–12 KB of JSON). */
const PAGE_BYTES = 8_000;
const NS = 'repo:acme/ends';
let er;
let embed;

/** Module `i` of package `p`: a base class, a helper, and a model that subclasses another
 *  package's base and calls its helper, an inherited method and its own methods. */
function module(p, i, version = 0) {
  const q = (p + 1) % PACKAGES;
  const j = (i * 7 + 3) % MODULES;
  return [
    `"""Module ${i} of package ${p} (version ${version}): models over pkg${q}.mod${j}."""`,
    `from pkg${q}.mod${j} import Base${q}x${j}, helper_${q}_${j}`,
    '',
    '',
    `class Base${p}x${i}:`,
    `    """The base of package ${p}, module ${i}."""`,
    '',
    `    def scale_${p}_${i}(self, x):`,
    `        return x * ${i + 2}`,
    '',
    `    def shift_${p}_${i}(self, x):`,
    `        return self.scale_${p}_${i}(x) + ${version}`,
    '',
    '',
    `def helper_${p}_${i}(x):`,
    `    """Adds ${i}."""`,
    `    return x + ${i}`,
    '',
    '',
    `class Model${p}x${i}(Base${q}x${j}):`,
    `    def run_${p}_${i}(self, x):`,
    `        return helper_${q}_${j}(x) + self.scale_${q}_${j}(x) + helper_${p}_${i}(x)`,
    '',
    `    def walk_${p}_${i}(self, items):`,
    `        return [self.run_${p}_${i}(v) + self.shift_${q}_${j}(v) for v in items]`,
    '',
  ].join('\n');
}

function repository() {
  const files = [];
  for (let p = 0; p < PACKAGES; p++) {
    files.push({ path: `pkg${p}/__init__.py`, content: '' });
    for (let i = 0; i < MODULES; i++) files.push({ path: `pkg${p}/mod${i}.py`, content: module(p, i) });
  }
  return files;
}

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({
    vars: {
      OPENAI_BASE_URL: embed.url,
      GRAPH_PAGE_BYTES: String(PAGE_BYTES),
      BATCH_D1_STATEMENTS: String(BATCH_STATEMENTS),
      FILES_PER_MESSAGE: '20',
    },
  });
});

after(async () => {
  await er?.stop();
  await embed?.stop();
});

/** The ledger once it stopped growing (an invocation is in it once it ended). */
async function settledLedger() {
  let stages = [];
  for (let i = 0, seen = -1; i < 20; i++) {
    ({ stages } = await er.ledger());
    const n = stages.reduce((sum, st) => sum + st.invocations, 0);
    if (n === seen) break;
    seen = n;
    await sleep(250);
  }
  return stages;
}

/** The job end's resolution lines logged since `from` (a log offset). */
function resolutionLines(from) {
  const logs = er.logs().slice(from);
  const lines = (event) => logs.split('\n').filter((l) => l.includes(`"${event}"`));
  return { resolved: lines('graph_resolved'), continued: lines('graph_resolution_continued'), logs };
}

const figure = (line, name) => Number(new RegExp(`"${name}":"(\\d+)"`).exec(line)?.[1]);

/** Waits for the job's last message to be in the ledger, then asserts every invocation within
 *  its budgets and every queue invocation within the statement budget. */
async function assertWithinBudget(logs) {
  for (let i = 0; i < 100 && !/"stage_done"[^\n]*"stage":"finish"/.test(er.logs().slice(logs)); i++) await sleep(100);
  const stages = await settledLedger();
  assert.deepEqual(ledgerOverBudget(stages), [], 'every invocation within its budget');
  const queues = stages.filter((st) => st.kind === 'queue');
  assert.ok(queues.length > 0, JSON.stringify(stages));
  const over = queues.filter((st) => st.max.d1Statements > BATCH_STATEMENTS);
  assert.deepEqual(over.map((st) => `${st.stage} ${st.max.d1Statements}`), [], `queue invocations within ${BATCH_STATEMENTS} statements`);
  return queues;
}

/** A write to the worker's D1 (through the test build's SQL route; `?1` is the namespace). */
async function write(sql) {
  const r = await er.request('POST', '/__test/vectors/sql', { body: { namespace: NS, sql, params: [NS] } });
  assert.equal(r.status, 200, r.text);
  assert.ok(r.body.changes > 0, `${sql}: ${r.text}`);
}

/** The stored graph against one resolution over every stored graph at once. */
async function assertUnsplit(files) {
  const check = await er.request('POST', '/__test/graph/unsplit', { body: { namespace: NS } });
  assert.equal(check.status, 200, check.text);
  const g = check.body;
  assert.equal(g.files, files, JSON.stringify(g));
  assert.ok(g.crossFileResolved >= 3 * PACKAGES * MODULES, `cross-file edges resolved: ${JSON.stringify(g)}`);
  assert.equal(g.edgeDifference, null);
  assert.equal(g.edgesEqual, true);
  assert.equal(g.storedEdges, g.edges);
  assert.equal(g.rankDifference, null);
  assert.equal(g.ranksEqual, true);
  return g;
}

describe("a job's end over more pages of graphs than a message has statements", () => {
  test('progresses within its budget and resolves the graph of the unbounded resolution', async () => {
    const files = repository();
    await er.request('DELETE', '/__test/ledger');
    const from = er.logs().length;
    const job = await er.indexFiles('acme/ends', files, { timeoutMs: 300_000 });
    assert.equal(job.status, 'SUCCEEDED', JSON.stringify(job));
    const status = await er.request('GET', '/v1/repos/acme/ends/status', { token: null });
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.ready, true, JSON.stringify(status.body));

    const queues = await assertWithinBudget(from);

    const { resolved, continued, logs } = resolutionLines(from);
    assert.equal(resolved.length, 1, `the resolution ended once:\n${resolved.join('\n')}`);
    // More pages of stored graphs than a message's statements: the symbol table could not be
    // read from them in one message.
    const pages = figure(resolved[0], 'pages');
    const definitionPages = figure(resolved[0], 'definitionPages');
    assert.ok(pages > BATCH_STATEMENTS, `${pages} pages of stored graphs: ${resolved[0]}`);
    assert.ok(definitionPages >= 2 && definitionPages * 4 <= pages, `${definitionPages} pages of definitions, ${pages} of graphs`);
    // The end went on over several messages, each from where the last one stopped.
    assert.ok(continued.length >= 2, `${continued.length} follow-up messages`);
    const hops = [...continued, resolved[0]].map((l) => [/"from":"([^"]*)"/.exec(l)?.[1], /"to":"([^"]*)"/.exec(l)?.[1]]);
    assert.equal(hops[0][0], '', JSON.stringify(hops));
    for (let i = 1; i < hops.length; i++) assert.equal(hops[i][0], hops[i - 1][1], JSON.stringify(hops));
    for (const line of [...continued, resolved[0]]) {
      assert.equal(figure(line, 'definitionPages'), definitionPages, `each message reads the definitions: ${line}`);
    }
    const g = await assertUnsplit(files.length);
    const [stored] = await er.d1(
      'SELECT count(*) AS n, sum(definitions IS NOT NULL) AS d, sum(length(definitions)) AS dBytes, sum(length(graph)) AS gBytes FROM graph_files WHERE namespace = ?',
      NS,
    );
    assert.equal(stored.d, stored.n, 'every stored graph has its definitions beside it');
    process.stderr.write(
      `[job-end-limits] ${stored.n} graphs, ${stored.gBytes} B of graphs, ${stored.dBytes} B of definitions; ${pages} pages of graphs, ` +
        `${definitionPages} of definitions; the end in ${continued.length + 1} resolution messages; ` +
        `${queues.map((s) => `${s.stage} ${s.invocations}× max ${s.max.d1Statements} statements`).join('; ')}; ${g.edges} edges\n`,
    );
    assert.doesNotMatch(logs, /"graph_resolution_failed"/);

    // Files whose stored definitions are missing (stored before they were) or of another format
    // are read from their graphs: a job changing one file resolves the same graph as before.
    await write(`UPDATE graph_files SET definitions = NULL WHERE namespace = ?1 AND path IN ('pkg1/mod3.py', 'pkg4/mod20.py')`);
    await write(`UPDATE graph_files SET definitions = '{"v":0,"p":"?"}' WHERE namespace = ?1 AND path = 'pkg2/mod9.py'`);
    await er.request('DELETE', '/__test/ledger');
    const again = er.logs().length;
    const changed = files.map((f) => (f.path === 'pkg3/mod11.py' ? { ...f, content: module(3, 11, 1) } : f));
    const second = await er.indexFiles('acme/ends', changed, { timeoutMs: 300_000 });
    assert.equal(second.status, 'SUCCEEDED', JSON.stringify(second));
    const next = resolutionLines(again);
    assert.equal(next.resolved.length, 1, next.resolved.join('\n'));
    assert.doesNotMatch(next.logs, /"graph_resolution_failed"/);
    assert.ok(figure(next.resolved[0], 'definitionPages') > definitionPages, `graphs read for three files: ${next.resolved[0]}`);
    await assertWithinBudget(again);
    await assertUnsplit(files.length);
  });
});
