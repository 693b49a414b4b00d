// A large repository end to end (driven by scripts/bench/large-repo.sh): a real tree from this
// machine, read in place through a hard-link listing under /tmp (no file data is copied and the
// original is never written), indexed by the `edgerag index` CLI through the local worker
// (workerd, local D1 + Queues), then re-indexed after a one-file change and after deleting a
// directory. Reports per step: time to READY, files and chunks (beside `edgerag chunk` over the
// same listing), the D1 size, searches during and after (latency, errors), and at the end the
// limits ledger's maxima per stage. Goals are printed beside the figures.
//
//   node scripts/bench/large-repo.mjs --tree DIR [--max-files N] [--embedder hash|real]
//        [--embed-url URL] [--label NAME] [--no-edits] [--end-only]
//
// `--max-files N`: the first top-level directories of DIR (in name order) until N files (a
// bounded run); `--embedder real`: the local MiniLM server (`--embed-url`, default a server this
// script starts) instead of the hash test embedder.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { ROOT, startEdgerag, startEmbedServer, startHashEmbedder } from '../../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const tree = opt('--tree', null);
if (!tree) throw new Error('--tree DIR is required');
const maxFiles = Number(opt('--max-files', '0'));
const embedderKind = opt('--embedder', 'hash');
const label = opt('--label', embedderKind === 'hash' ? 'large tree, hash embedder' : 'MiniLM');
const edits = !args.includes('--no-edits');
// `--end-only`: after the first index, only the job's end alone in a new isolate (no change and
// deletion steps).
const endOnly = args.includes('--end-only');
// LARGE_STATE=DIR: the worker's state is kept there at the end; a run that finds a state there
// skips the index and runs only the job's end alone in a new isolate on it.
const state = process.env.LARGE_STATE;
// LARGE_NO_SEARCHES_DURING=1: no searches while a step's job runs (the 12 after it still run), so
// that the ledger's figures are the queue stages' own.
const searchesDuring = !process.env.LARGE_NO_SEARCHES_DURING;
const reuse = Boolean(state) && existsSync(join(state, 'v3'));
const cli = process.env.EDGERAG_CLI ?? join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'cli', 'edgerag');
const repo = 'bench/large';
const s = (ms) => (ms / 1000).toFixed(1);

function countFiles(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) n += countFiles(join(dir, e.name));
    else if (e.isFile()) n += 1;
  }
  return n;
}

// 1. The listing: hard links of the tree (or of its first directories up to --max-files).
const work = mkdtempSync(join(tmpdir(), 'edgerag-large-'));
const listing = join(work, 'tree');
mkdirSync(listing);
let listed = 0;
for (const e of readdirSync(tree, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
  if (maxFiles && listed >= maxFiles) break;
  execFileSync('cp', ['-al', join(tree, e.name), join(listing, e.name)]);
  listed += e.isDirectory() ? countFiles(join(listing, e.name)) : 1;
}
console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (${cpus().length} cores)`);
console.log(`tree: ${tree}${maxFiles ? ` (first directories up to ${maxFiles} files)` : ''}: ${listed} files, listed by hard links in ${listing}`);

/** `edgerag chunk --stats` over the listing: files and chunks the CLI's own chunker finds. */
function cliCounts() {
  const r = spawnSyncText(cli, ['chunk', listing, '--stats']);
  const m = /(\d+) files?[^\d]+(\d+) chunks?/.exec(r);
  return m ? { files: Number(m[1]), chunks: Number(m[2]), line: r.split('\n').find((l) => /chunks/.test(l))?.trim() } : { files: NaN, chunks: NaN, line: r.slice(0, 300) };
}
function spawnSyncText(cmd, argv) {
  try {
    // Chunks go to /dev/null; the summary is on stderr.
    return execFileSync('bash', ['-c', `"$0" "$@" 2>&1 >/dev/null | grep -v '^skip' | tail -5`, cmd, ...argv], { maxBuffer: 1 << 28 }).toString();
  } catch (e) {
    return String(e.stdout ?? e.message);
  }
}

const embed = embedderKind === 'hash' ? await startHashEmbedder() : opt('--embed-url', null) ? { url: opt('--embed-url'), stop: async () => {} } : await startEmbedServer();
// LARGE_COPY_MB: the whole run with a deployment's in-memory copy budgets instead of the local 256 MB.
const copyMb = process.env.LARGE_COPY_MB;
const vars = {
  OPENAI_BASE_URL: embed.url,
  RETRY_BASE_DELAY_SECONDS: '1',
  ...(copyMb ? { LOCAL_INDEX_CACHE_MB: copyMb, KEYWORD_INDEX_CACHE_MB: copyMb } : {}),
};
// LARGE_WORKER_LOG=1: the worker's whole log on stderr as it runs (the harness keeps only its last
// 2 MB for `er.logs()`, BENCH_LOG and the summary below).
const log = Boolean(process.env.LARGE_WORKER_LOG);
let er = await startEdgerag(reuse ? { vars, persistDir: state, log } : { vars, log });
const QUERIES = ['parse the configuration file', 'error handling when the connection fails', 'serialize to json', 'iterator over the entries', 'unit tests for the parser', 'read bytes from a buffer', 'hash map lookup', 'spawn a thread and join'];

/** Searches one at a time until `stop()`: latencies and non-200 answers. */
function searchLoop() {
  const lat = [];
  const statuses = {};
  let running = true;
  const done = (async () => {
    let i = 0;
    while (running) {
      const t = performance.now();
      try {
        const r = await er.request('POST', '/v1/search', { body: { owner: 'bench', name: 'large', rawQuery: QUERIES[i++ % QUERIES.length], profile: 'balanced' } });
        const ms = performance.now() - t;
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 200) lat.push(ms);
      } catch (e) {
        // No answer at all (the connection closed): counted, and the run goes on.
        statuses[`failed: ${e.cause?.code ?? e.message}`] = (statuses[`failed: ${e.cause?.code ?? e.message}`] ?? 0) + 1;
      }
      await new Promise((res) => setTimeout(res, 2000));
    }
  })();
  return { stop: async () => { running = false; await done; return { lat, statuses }; } };
}
const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))];
};

async function indexWithCli() {
  const t0 = performance.now();
  const r = await new Promise((resolve) => {
    const child = spawn(cli, ['index', listing, '--server', er.url, '--repo', repo, '--token', er.token, '--timeout', '7200']);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
  const ms = performance.now() - t0;
  if (r.code !== 0) throw new Error(`edgerag index failed (${r.code}): ${r.out.slice(-2000)}`);
  return { ms, out: r.out.trim().split('\n').filter((l) => !/^\s*$/.test(l)).slice(-2).join(' | ') };
}

function d1Bytes() {
  let n = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (/\.sqlite(-wal)?$/.test(e.name)) n += statSync(join(d, e.name)).size;
    }
  };
  walk(join(er.persistDir, 'v3', 'd1'));
  return n;
}

async function step(name, before) {
  if (before) before();
  const expected = cliCounts();
  const loop = searchesDuring ? searchLoop() : { stop: async () => ({ lat: [], statuses: {} }) };
  const indexed = await indexWithCli();
  const during = await loop.stop();
  const status = (await er.request('GET', `/v1/repos/${repo}/status`)).body;
  const after = [];
  const afterStatuses = {};
  for (let i = 0; i < 12; i++) {
    const t = performance.now();
    try {
      const r = await er.request('POST', '/v1/search', { body: { owner: 'bench', name: 'large', rawQuery: QUERIES[i % QUERIES.length], profile: 'balanced' } });
      afterStatuses[r.status] = (afterStatuses[r.status] ?? 0) + 1;
      if (r.status === 200) after.push(performance.now() - t);
    } catch (e) {
      afterStatuses[`failed: ${e.cause?.code ?? e.message}`] = (afterStatuses[`failed: ${e.cause?.code ?? e.message}`] ?? 0) + 1;
    }
  }
  const row = {
    step: name,
    readyS: Number(s(indexed.ms)),
    status: status.status,
    files: status.repo?.fileCount,
    chunks: status.repo?.chunkCount,
    cliFiles: expected.files,
    cliChunks: expected.chunks,
    d1MB: Number((d1Bytes() / 1e6).toFixed(1)),
    searchesDuring: { n: during.lat.length, p50: Math.round(pct(during.lat, 50)), p95: Math.round(pct(during.lat, 95)), statuses: during.statuses },
    searchesAfter: { n: after.length, p50: Math.round(pct(after, 50)), p95: Math.round(pct(after, 95)), statuses: afterStatuses },
    job: status.job ? { status: status.job.status, files: status.job.files, warnings: status.job.warnings?.length ?? 0, lastError: status.job.lastError } : null,
    cli: indexed.out,
  };
  console.log(`[${label}] ${name}: ${JSON.stringify(row)}`);
  return row;
}

/**
 * A job's end alone in a new isolate: the worker restarted on the same state, `rel` changed
 * through the API, no search meanwhile. Wasm memory never shrinks, so in the isolate that ran the
 * whole index every stage's memory figure is the largest of all so far; here the index stage's
 * figure is the job's end's own (its code-graph resolution reads the whole namespace's graph).
 */
async function jobEndInANewIsolate(rel, content) {
  const dir = er.persistDir;
  await er.kill();
  // LARGE_END_COPY_MB=16: the in-memory copy budgets of a deployment (the local environment's
  // are 256 MB, wrangler.toml) for this step, so that its memory is the one production would see.
  const copies = process.env.LARGE_END_COPY_MB;
  const endVars = copies ? { ...vars, LOCAL_INDEX_CACHE_MB: copies, KEYWORD_INDEX_CACHE_MB: copies } : vars;
  er = await startEdgerag({ persistDir: dir, vars: endVars, log });
  const t0 = performance.now();
  const job = await er.indexFiles(repo, [{ path: rel, content }], { timeoutMs: 3_600_000, quietMs: 3_600_000 });
  const readyS = Number(s(performance.now() - t0));
  // The job is READY before its end's resolution runs (in the same invocation): wait for both.
  let resolved = null;
  let index = null;
  for (let waited = 0; waited < 1_800_000 && !(resolved && index); waited += 1000) {
    await new Promise((res) => setTimeout(res, 1000));
    const line = er.logs().split('\n').findLast((l) => /"graph_resol(ved|ution_failed)"/.test(l));
    resolved = line ? JSON.parse(line.slice(line.indexOf('{'))) : null;
    index = ((await er.ledger()).stages ?? []).find((st) => st.stage === 'edgerag-index')?.max ?? null;
  }
  // The end's messages: each resolution message logs one line, each message handing on another.
  const lines = (event) => er.logs().split('\n').filter((l) => l.includes(`"${event}"`)).map((l) => JSON.parse(l.slice(l.indexOf('{'))));
  const resolutions = [...lines('graph_resolution_continued'), ...lines('graph_resolved')].map((l) => Number(l.statements));
  const messages = lines('job_end_handed_on').length + 1;
  return { readyS, status: job.status, index, resolved, messages, resolutionStatements: resolutions };
}

const rows = [];
let ledger;
let workerErrors = 0;
let newIsolate = null;
let logs = '';
try {
  if (!reuse) rows.push(await step('first index'));
  if (edits && !endOnly && !reuse) {
    // One file changed: a comment appended (the hard link replaced by a file of its own).
    const files = [];
    const find = (d) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (files.length) return;
        if (e.isDirectory()) find(join(d, e.name));
        else if (/\.(rs|js|ts|py|c|h)$/.test(e.name)) files.push(join(d, e.name));
      }
    };
    find(listing);
    rows.push(await step(`one file changed (${files[0].slice(listing.length + 1)})`, () => {
      const text = readFileSync(files[0], 'utf8');
      unlinkSync(files[0]);
      writeFileSync(files[0], `${text}\n// changed by the large-repository bench\n`);
    }));
    // A directory deleted: the largest top-level directory but one (its links only).
    const dirs = readdirSync(listing, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => ({ name: e.name, n: countFiles(join(listing, e.name)) })).sort((a, b) => b.n - a.n);
    const gone = dirs[1] ?? dirs[0];
    rows.push(await step(`directory deleted (${gone.name}, ${gone.n} files)`, () => rmSync(join(listing, gone.name), { recursive: true, force: true })));
  }
  ledger = await er.ledger();
  workerErrors = er.logs().split('\n').filter((l) => /"level":"error"/.test(l)).length;
  logs = er.logs();
  if (edits) {
    const [file] = readdirSync(listing, { withFileTypes: true, recursive: true }).filter((e) => e.isFile() && /\.(rs|js|ts|py|c|h)$/.test(e.name));
    const path = join(file.parentPath ?? file.path, file.name);
    newIsolate = await jobEndInANewIsolate(path.slice(listing.length + 1), `${readFileSync(path, 'utf8')}\n// changed again, in a new isolate (${new Date().toISOString()})\n`);
    console.log(`[${label}] a job's end in a new isolate: ${JSON.stringify(newIsolate)}`);
  }
} finally {
  // BENCH_LOG=file keeps the worker's log (both isolates').
  logs += er.logs() === logs ? '' : er.logs();
  if (process.env.BENCH_LOG) writeFileSync(process.env.BENCH_LOG, logs || er.logs());
  const dir = er.persistDir;
  await er.stop();
  if (state && !reuse) execFileSync('mv', [dir, state]);
  else if (newIsolate && !reuse) rmSync(dir, { recursive: true, force: true });
  await embed.stop();
  rmSync(work, { recursive: true, force: true });
}

console.log(`\n## ${label}\n`);
console.log('| step | upload → READY | files (CLI) | chunks (CLI) | D1 | searches during: n, p50 / p95 ms, statuses | after: p50 / p95 ms | goals |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) {
  const countsMatch = r.chunks === r.cliChunks;
  const ok = r.status === 'SUCCEEDED' && !r.job?.lastError;
  console.log(`| ${r.step} | ${r.readyS} s (${r.status}) | ${r.files} (${r.cliFiles}) | ${r.chunks} (${r.cliChunks}) | ${r.d1MB} MB | ${r.searchesDuring.n}, ${r.searchesDuring.p50} / ${r.searchesDuring.p95}, ${JSON.stringify(r.searchesDuring.statuses)} | ${r.searchesAfter.p50} / ${r.searchesAfter.p95} ${JSON.stringify(r.searchesAfter.statuses)} | chunks = CLI: ${countsMatch ? 'met' : 'NOT MET'}; job SUCCEEDED, no error: ${ok ? 'met' : 'NOT MET'}; search p95 ≤ 120 ms: ${r.searchesAfter.p95 <= 120 ? 'met' : 'NOT MET'} |`);
}
console.log(`\nworker log lines at level error: ${workerErrors} (goal 0: ${workerErrors === 0 ? 'met' : 'NOT MET'})`);
console.log('\nledger maxima per stage (goal: every figure within its budget in src/limits.json; the harness fails the run otherwise):\n');
const limits = JSON.parse(readFileSync(join(ROOT, 'src', 'limits.json'), 'utf8')).limits.filter((l) => l.figure);
console.log(`| kind | stage | invocations | ${limits.map((l) => l.figure).join(' | ')} |`);
console.log(`| --- | --- | --- | ${limits.map(() => '---').join(' | ')} |`);
for (const st of ledger?.stages ?? []) {
  if (st.kind === 'test') continue;
  console.log(`| ${st.kind} | ${st.stage} | ${st.invocations} | ${limits.map((l) => `${st.max?.[l.figure] ?? 0}${(st.max?.[l.figure] ?? 0) > l.budget ? ' **over**' : ''}`).join(' | ')} |`);
}
console.log(`| budget | | | ${limits.map((l) => l.budget).join(' | ')} |`);
// Which invocations grew the wasm memory (the worker logs one `invocation_memory_grew` line per
// invocation whose own work grew it): bytes grown per stage, and the invocation that took the
// isolate past the memory budget with what was open beside it.
{
  const budget = limits.find((l) => l.figure === 'memoryBytes')?.budget ?? Infinity;
  const grew = logs.split('\n').filter((l) => l.includes('"invocation_memory_grew"')).map((l) => JSON.parse(l.slice(l.indexOf('{'))));
  const perStage = {};
  for (const g of grew) {
    const key = `${g.kind} ${g.stage}`;
    perStage[key] = perStage[key] ?? { invocations: 0, grownMB: 0, largestMB: 0 };
    perStage[key].invocations += 1;
    perStage[key].grownMB += Number(g.grownByItself) / 1e6;
    perStage[key].largestMB = Math.max(perStage[key].largestMB, Number(g.grownByItself) / 1e6);
  }
  console.log('\nwasm memory grown by each stage\'s own work (MB; every isolate of the run):');
  for (const [k, v] of Object.entries(perStage)) console.log(`  ${k}: ${v.invocations} invocations grew it by ${v.grownMB.toFixed(1)} MB in all, at most ${v.largestMB.toFixed(1)} MB`);
  const crossed = grew.filter((g) => Number(g.memoryAtEnd) > budget && Number(g.memoryAtEnd) - Number(g.grownByItself) <= budget);
  for (const g of crossed) console.log(`  past the budget: ${g.kind} ${g.stage}: ${g.memoryAtStart} → ${g.memoryAtEnd} B, grown by itself ${g.grownByItself} B, ${g.d1Statements} statements, ${g.wallMs} ms; open beside it: ${g.openBeside || 'nothing'}`);
}
if (newIsolate) {
  const memory = newIsolate.index?.memoryBytes ?? NaN;
  const budget = limits.find((l) => l.figure === 'memoryBytes')?.budget ?? NaN;
  const r = newIsolate.resolved ?? {};
  console.log(`\na job's end in a new isolate (one file changed through the API, no search): ${newIsolate.readyS} s to ${newIsolate.status}; its index stage: memoryBytes ${memory} (budget ${budget}: ${memory <= budget ? 'met' : 'NOT MET'}), d1Statements ${newIsolate.index?.d1Statements}, wallMs ${newIsolate.index?.wallMs}; the end in ${newIsolate.messages} messages (the resolution's statements per message: ${newIsolate.resolutionStatements?.join(', ')}); the resolution: ${r.files} file graphs, ${r.pages} pages, ${r.definitionPages} pages of definitions per message, ${r.ranksWritten} ranks written, wasm memory ${r.memoryBefore} → ${r.memoryAfter} B, ${r.ms} ms`);
}
if (process.env.BENCH_OUT) appendFileSync(process.env.BENCH_OUT, `${JSON.stringify({ label, tree, maxFiles, rows, ledger, newIsolate })}\n`);
console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
