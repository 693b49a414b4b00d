// One command to deploy edgerag to a Cloudflare account, and one to remove it (run through
// scripts/deploy.sh). Provisions through wrangler, idempotently — every resource is looked up
// before it is created, so a second run creates nothing and a run that failed half-way resumes:
//
//   1. D1: `wrangler d1 list --json`; `wrangler d1 create NAME` for each database of D1_BINDINGS
//      that is missing; then `wrangler d1 migrations apply BINDING --remote` (applies only what
//      is not applied yet).
//   2. Queues: `wrangler queues info NAME` (fails with `Queue "NAME" does not exist.` when
//      missing); `wrangler queues create NAME`.
//   3. Vectorize: `wrangler vectorize list --json`; `wrangler vectorize create NAME --dimensions=D
//      --metric=cosine` (D = the embedder's dimensions; an existing index with other dimensions is
//      an error); `wrangler vectorize list-metadata-index NAME --json`;
//      `wrangler vectorize create-metadata-index NAME --property-name=P --type=string` per missing
//      property.
//   4. The release build (scripts/build-worker.sh, the plan's grammars).
//   5. Secrets: `wrangler secret list` (JSON); an API_TOKEN is generated when absent, uploaded with
//      the deploy (`wrangler deploy --secrets-file`) and printed once.
//   6. `wrangler deploy`.
//
// Every command gets `--config` of the generated configuration ($EDGERAG_STATE/deploy/NAME/
// wrangler.json): wrangler.toml's production part with the resources' names and ids, never an
// edit of wrangler.toml. `--dry-run` prints the commands and runs `wrangler deploy --dry-run` on
// the real bundle; `--destroy` deletes the deployment after the user types its name.
import { spawn } from 'node:child_process';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { deployConfig, deployConfigPath, desiredResources, PLANS, publicReadsWarning } from './config.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const USAGE = `usage: scripts/deploy.sh [options]

Deploys edgerag to your Cloudflare account (log in first: \`wrangler login\`, or set
CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID). Safe to run again: it creates only what is missing.

  --plan free|paid        the account's Workers plan (default paid): grammars built and limits
  --name NAME             the worker's name; resources are named after it (default edgerag)
  --embed-model MODEL     Workers AI embedding model (default @cf/baai/bge-m3); sets the
                          Vectorize index's dimensions
  --d1-bindings DB,DB_2   D1 databases to spread repositories over (default DB)
  --languages a,b|all     grammars to build (default: the plan's)
  --account-id ID         the account, when your login has several
  --public                anyone who knows the URL may search and read every indexed repository
                          without a key (PUBLIC_READS=true; warned on every deploy)
  --private               close a deployment that was public (the default for a new one: every
                          read needs a key)
  --github-app-id ID      an existing GitHub App's id, with --github-app-key: the app's
  --github-app-key FILE   private key (the .pem GitHub gave). Both are stored as secrets, never in
                          the generated configuration; the app's webhook secret is generated on
                          the first run with them and printed once (paste it into the app)
  --no-build              deploy build/worker as it is (made by scripts/build-worker.sh)
  --dry-run               print every command, create nothing, and check the real bundle with
                          \`wrangler deploy --dry-run\` (no account needed)
  --destroy               delete the worker, its databases, queues and index (asks you to type
                          the name first; with --dry-run, only prints the commands)
  -h, --help              this text`;

export class UsageError extends Error {}

export function parseOptions(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        plan: { type: 'string', default: 'paid' },
        name: { type: 'string' },
        'embed-model': { type: 'string' },
        'd1-bindings': { type: 'string' },
        languages: { type: 'string' },
        'account-id': { type: 'string' },
        public: { type: 'boolean', default: false },
        private: { type: 'boolean', default: false },
        'github-app-id': { type: 'string' },
        'github-app-key': { type: 'string' },
        'no-build': { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
        destroy: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new UsageError(e.message);
  }
  if (!PLANS[values.plan]) throw new UsageError(`--plan must be free or paid, not '${values.plan}'`);
  if (values.public && values.private) throw new UsageError('--public and --private contradict each other: choose one');
  if ((values['github-app-id'] === undefined) !== (values['github-app-key'] === undefined)) {
    throw new UsageError('--github-app-id and --github-app-key go together');
  }
  if (values['github-app-id'] !== undefined && !/^\d+$/.test(values['github-app-id'])) {
    throw new UsageError(`--github-app-id must be the app's numeric id, not '${values['github-app-id']}'`);
  }
  const languages = values.languages === 'all' ? null : values.languages;
  return {
    plan: values.plan,
    name: values.name,
    embedModel: values['embed-model'],
    d1Bindings: values['d1-bindings'],
    languages: values.languages === undefined ? undefined : languages,
    accountId: values['account-id'],
    public: values.public,
    private: values.private,
    githubAppId: values['github-app-id'],
    githubAppKey: values['github-app-key'],
    build: !values['no-build'],
    dryRun: values['dry-run'],
    destroy: values.destroy,
    help: values.help,
  };
}

/** A failed wrangler command, with what it printed. */
export class CommandError extends Error {
  constructor(args, result) {
    const said = `${result.stderr}\n${result.stdout}`.trim().split('\n').slice(-12).join('\n');
    super(`wrangler ${args.join(' ')} failed (exit ${result.code}):\n${said}`);
    this.result = result;
  }
}

function run(cmd, args, { input, env, cwd, echo } = {}) {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd: cwd ?? ROOT, env: env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (echo) process.stdout.write(d);
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      if (echo) process.stderr.write(d);
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** Runs wrangler with the generated configuration, printing each command first; in a dry run the
 * account is never called: the command is printed and not run. */
class Wrangler {
  constructor({ configPath, dryRun, out }) {
    this.configPath = configPath;
    this.dryRun = dryRun;
    this.out = out;
  }

  line(args, note) {
    const shown = ['wrangler', ...args, '--config', this.configPath].map(quote).join(' ');
    this.out(`  $ ${shown}${note ? `   # ${note}` : ''}`);
  }

  /** Runs a command (or, in a dry run, only prints it and returns null). */
  async call(args, { note, allowFail = false, echo = false, env } = {}) {
    this.line(args, note);
    if (this.dryRun) return null;
    const result = await run('wrangler', [...args, '--config', this.configPath], { echo, env });
    if (result.code !== 0 && !allowFail) throw new CommandError(args, result);
    return result;
  }

  async json(args, opts) {
    const result = await this.call(args, opts);
    if (result === null) return null;
    return parseJsonOutput(args, result.stdout);
  }
}

function quote(s) {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}

/** The JSON wrangler printed (`--json`): the whole output, or from its first line that opens a
 * JSON value (a banner or notice can come first). */
export function parseJsonOutput(args, stdout) {
  const text = stdout.trim();
  const attempts = [text];
  const lines = text.split('\n');
  const start = lines.findIndex((l) => /^\s*[[{]/.test(l));
  if (start > 0) attempts.push(lines.slice(start).join('\n'));
  for (const a of attempts) {
    try {
      return JSON.parse(a);
    } catch {
      // try the next reading
    }
  }
  throw new Error(`wrangler ${args.join(' ')} printed no JSON:\n${text.slice(0, 500)}`);
}

/** wrangler.toml as wrangler reads it (no environment applied). */
export function readRawConfig(wranglerToml) {
  return import('wrangler').then((w) => w.experimental_readRawConfig({ config: wranglerToml }).rawConfig);
}

function writeConfig(path, cfg) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(cfg, null, 2)}\n`);
}

/** Deploys (or, with `destroy`, removes) one deployment. `out` receives every line meant for the
 * user; `ask` reads the typed confirmation. Returns what it did, for the tests. */
export async function main(opts, { out = console.log, ask = askLine, stateDir, wranglerToml, buildDir } = {}) {
  const state = stateDir ?? process.env.EDGERAG_STATE ?? join(ROOT, '.edgerag');
  const toml = wranglerToml ?? join(ROOT, 'wrangler.toml');
  const raw = await readRawConfig(toml);
  // The deployment's last generated configuration: an upgrade keeps what it chose (public reads).
  const earlierPath = deployConfigPath(state, opts.name ?? raw.name);
  const previous = existsSync(earlierPath) ? JSON.parse(readFileSync(earlierPath, 'utf8')) : undefined;
  const desired = desiredResources(raw, { ...opts, previous });
  const configPath = deployConfigPath(state, desired.name);
  const w = new Wrangler({ configPath, dryRun: opts.dryRun, out });
  const ids = {};
  const save = () =>
    writeConfig(configPath, deployConfig(raw, desired, { ids, sourceDir: dirname(toml), outDir: dirname(configPath), accountId: opts.accountId }));
  save();
  const report = { created: [], deleted: [], configPath };
  if (opts.destroy) return destroy({ desired, w, out, ask, opts, report, configPath });

  out(`${opts.dryRun ? 'Would deploy' : 'Deploying'} '${desired.name}' (${desired.plan} plan, ${desired.model}, ${desired.dims} dimensions, ${desired.publicReads ? 'PUBLIC reads' : 'private: every read needs a key'}); configuration: ${configPath}`);
  const warning = publicReadsWarning(desired, { ...opts, previous });
  if (warning) out(warning);

  // 1. D1 databases and their migrations.
  out('D1 databases');
  let listed = (await w.json(['d1', 'list', '--json'])) ?? [];
  const missingDbs = desired.databases.filter((db) => !listed.some((l) => l.name === db.name));
  for (const db of opts.dryRun ? desired.databases : missingDbs) {
    await w.call(['d1', 'create', db.name, '--update-config=false'], { note: opts.dryRun ? 'when absent' : undefined });
    if (!opts.dryRun) report.created.push(`d1:${db.name}`);
  }
  if (missingDbs.length && !opts.dryRun) listed = await w.json(['d1', 'list', '--json']);
  for (const db of desired.databases) {
    const found = listed.find((l) => l.name === db.name);
    if (found) ids[db.name] = found.uuid;
    else if (!opts.dryRun) throw new Error(`D1 database '${db.name}' was created but \`wrangler d1 list\` does not show it`);
  }
  save();
  for (const db of desired.databases) {
    await w.call(['d1', 'migrations', 'apply', db.binding, '--remote'], { echo: true });
  }

  // 2. Queues.
  out('Queues');
  for (const q of desired.queues) {
    const info = await w.call(['queues', 'info', q], { allowFail: true });
    if (info === null || info.code !== 0) {
      if (info && !/does not exist/.test(info.stderr + info.stdout)) throw new CommandError(['queues', 'info', q], info);
      await w.call(['queues', 'create', q], { note: opts.dryRun ? 'when absent' : undefined });
      if (!opts.dryRun) report.created.push(`queue:${q}`);
    }
  }

  // 3. Vectorize index and its metadata indexes.
  out('Vectorize');
  const v = desired.vectorize;
  const indexes = (await w.json(['vectorize', 'list', '--json'])) ?? [];
  const index = indexes.find((i) => i.name === v.name);
  if (index) {
    const dims = index.config?.dimensions;
    if (dims !== v.dims || (index.config?.metric && index.config.metric !== v.metric)) {
      throw new Error(
        `Vectorize index '${v.name}' exists with ${dims} dimensions (${index.config?.metric}); ${desired.model} needs ${v.dims} (${v.metric}). ` +
          `Deploy under another --name, or delete the index (its vectors are lost): wrangler vectorize delete ${v.name}`,
      );
    }
  } else {
    await w.call(['vectorize', 'create', v.name, `--dimensions=${v.dims}`, `--metric=${v.metric}`, '--update-config=false'], {
      note: opts.dryRun ? 'when absent' : undefined,
    });
    if (!opts.dryRun) report.created.push(`vectorize:${v.name}`);
  }
  const properties = (await w.json(['vectorize', 'list-metadata-index', v.name, '--json'])) ?? [];
  for (const m of desired.metadataIndexes) {
    if (properties.some((p) => p.propertyName === m.property)) continue;
    await w.call(['vectorize', 'create-metadata-index', v.name, `--property-name=${m.property}`, `--type=${m.type}`], {
      note: opts.dryRun ? 'when absent' : undefined,
    });
    if (!opts.dryRun) report.created.push(`metadata-index:${v.name}.${m.property}`);
  }

  // 4. The release build.
  await build(desired, opts, out, buildDir ?? join(ROOT, 'build', 'worker'));

  // 5. Secrets, then 6. the deploy.
  out('Secrets');
  let secretsFile = null;
  let token = null;
  let webhookSecret = null;
  // The GitHub App's key, as WebCrypto imports it (PKCS#8); read before anything is uploaded.
  const appKey = opts.githubAppKey ? createPrivateKey(readFileSync(opts.githubAppKey)).export({ type: 'pkcs8', format: 'pem' }) : null;
  const secrets = await w.call(['secret', 'list', '--format', 'json'], { allowFail: true });
  if (secrets !== null) {
    let names = [];
    if (secrets.code === 0) names = parseJsonOutput(['secret', 'list'], secrets.stdout).map((s) => s.name);
    else if (!/not found/i.test(secrets.stderr + secrets.stdout)) throw new CommandError(['secret', 'list'], secrets);
    const upload = {};
    if (!names.includes('API_TOKEN')) {
      token = randomBytes(32).toString('base64url');
      upload.API_TOKEN = token;
      report.created.push('secret:API_TOKEN');
    }
    if (appKey) {
      upload.GITHUB_APP_ID = opts.githubAppId;
      upload.GITHUB_APP_PRIVATE_KEY = appKey;
      if (!names.includes('GITHUB_APP_WEBHOOK_SECRET')) {
        webhookSecret = randomBytes(32).toString('hex');
        upload.GITHUB_APP_WEBHOOK_SECRET = webhookSecret;
        report.created.push('secret:GITHUB_APP_WEBHOOK_SECRET');
      }
    }
    if (Object.keys(upload).length) {
      const dir = mkdtempSync(join(tmpdir(), 'edgerag-secrets-'));
      secretsFile = join(dir, 'secrets.json');
      writeFileSync(secretsFile, JSON.stringify(upload), { mode: 0o600 });
    }
  } else {
    out('  (API_TOKEN is generated when the list has none, and uploaded with the deploy: --secrets-file)');
    if (appKey) out('  (GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY are uploaded with the deploy; GITHUB_APP_WEBHOOK_SECRET is generated when absent)');
  }

  out('Deploy');
  if (opts.dryRun) {
    w.line(['deploy'], 'what a real run does');
    report.dryRun = await dryRunDeploy(desired, configPath, out);
    report.publicReads = desired.publicReads;
    return report;
  }
  try {
    const env = { ...process.env };
    delete env.API_TOKEN;
    await w.call(['deploy', ...(secretsFile ? ['--secrets-file', secretsFile] : [])], { echo: true, env });
  } finally {
    if (secretsFile) rmSync(dirname(secretsFile), { recursive: true, force: true });
  }
  if (token) {
    out('');
    out('API_TOKEN (shown this once; it is needed for writes — keep it in your password manager):');
    out(`  ${token}`);
    report.token = token;
  }
  if (webhookSecret) {
    out('');
    out('GITHUB_APP_WEBHOOK_SECRET (shown this once): paste it into the GitHub App\'s webhook settings,');
    out(`with the webhook URL <the worker's URL>/v1/webhooks/github:`);
    out(`  ${webhookSecret}`);
    report.webhookSecret = webhookSecret;
  }
  out(report.created.length ? `Created: ${report.created.join(', ')}` : 'Nothing to create: every resource existed.');
  if (warning) out(warning);
  report.publicReads = desired.publicReads;
  return report;
}

async function build(desired, opts, out, buildDir) {
  out('Build');
  const args = [join(ROOT, 'scripts', 'build-worker.sh')];
  if (desired.languages) args.push('--languages', desired.languages);
  out(`  $ bash scripts/build-worker.sh${desired.languages ? ` --languages ${desired.languages}` : ''}${opts.build ? '' : '   # skipped: --no-build'}`);
  if (opts.build) {
    const result = await run('bash', args, { echo: true });
    if (result.code !== 0) throw new Error(`scripts/build-worker.sh failed (exit ${result.code})`);
  }
  const stamp = join(buildDir, '.edgerag-build');
  if (!existsSync(join(buildDir, 'shim.mjs'))) {
    throw new Error(`no worker build in ${buildDir}: run without --no-build (or scripts/build-worker.sh first)`);
  }
  const made = existsSync(stamp) ? readFileSync(stamp, 'utf8') : '';
  if (/hooks=1/.test(made) && !opts.dryRun) {
    throw new Error('build/worker was built with --test-hooks (the test-only /__test routes): run without --no-build, or scripts/build-worker.sh without --test-hooks');
  }
  const want = desired.languages ? `grammars=${desired.languages}` : 'grammars=1';
  if (!opts.build && made && !made.includes(want)) {
    out(`  note: build/worker was built with '${made.split(' ').slice(0, 3).join(' ')}', not the ${desired.plan} plan's ${want}`);
  }
}

/** `wrangler deploy --dry-run` on the bundle in build/worker with the generated configuration:
 * fails on any wrangler warning or error, and on a bundle over the plan's size limit. */
export async function dryRunDeploy(desired, configPath, out) {
  const outdir = mkdtempSync(join(tmpdir(), 'edgerag-dry-run-'));
  try {
    const args = ['deploy', '--dry-run', '--outdir', outdir, '--config', configPath];
    out(`  $ wrangler ${args.join(' ')}`);
    const result = await run('wrangler', args);
    // Without colours: wrangler can colour its output even into a pipe.
    const said = `${result.stdout}\n${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    if (result.code !== 0) throw new CommandError(args, result);
    const warnings = said.split('\n').filter((l) => /\[WARNING\]|\[ERROR\]/.test(l));
    if (warnings.length) throw new Error(`wrangler deploy --dry-run warned:\n${warnings.join('\n')}`);
    const m = said.match(/Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/);
    if (!m) throw new Error('wrangler deploy --dry-run printed no "Total Upload" size');
    const bytes = Math.round(Number(m[1]) * 1024);
    const gzip = Math.round(Number(m[2]) * 1024);
    const limit = desired.maxBundleBytes;
    const mib = (n) => (n / 1024 / 1024).toFixed(2);
    out(`Bundle: ${mib(bytes)} MiB (gzip ${mib(gzip)} MiB), limit ${mib(limit)} MiB uncompressed on the ${desired.plan} plan`);
    if (bytes > limit) throw new Error(`the bundle is ${mib(bytes)} MiB, over the ${desired.plan} plan's ${mib(limit)} MiB`);
    return { bytes, gzip, limit };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

async function destroy({ desired, w, out, ask, opts, report, configPath }) {
  out(`${opts.dryRun ? 'Would delete' : 'Deleting'} '${desired.name}': the worker, and every resource below that exists`);
  // What exists (a dry run lists nothing: it prints the commands).
  const dbs = (await w.json(['d1', 'list', '--json'])) ?? [];
  const existingDbs = opts.dryRun ? desired.databases : desired.databases.filter((db) => dbs.some((d) => d.name === db.name));
  const existingQueues = [];
  for (const q of desired.queues) {
    const info = await w.call(['queues', 'info', q], { allowFail: true });
    if (info === null || info.code === 0) existingQueues.push(q);
    else if (!/does not exist/.test(info.stderr + info.stdout)) throw new CommandError(['queues', 'info', q], info);
  }
  const indexes = (await w.json(['vectorize', 'list', '--json'])) ?? [];
  const index = opts.dryRun || indexes.some((i) => i.name === desired.vectorize.name) ? desired.vectorize.name : null;

  out(`  worker: ${desired.name}`);
  out(`  D1 databases (all their data): ${existingDbs.map((d) => d.name).join(', ') || 'none'}`);
  out(`  queues: ${existingQueues.join(', ') || 'none'}`);
  out(`  Vectorize index (all its vectors): ${index ?? 'none'}`);
  if (!opts.dryRun) {
    const typed = (await ask(`Type the deployment's name (${desired.name}) to delete it: `))?.trim();
    if (typed !== desired.name) {
      out('Not confirmed: nothing deleted.');
      report.confirmed = false;
      return report;
    }
  }
  report.confirmed = true;
  // The worker first: it is the queues' consumer.
  const del = await w.call(['delete', '--name', desired.name], { allowFail: true });
  if (del && del.code !== 0) {
    if (!/not found|does not exist|10007|10090/i.test(del.stderr + del.stdout)) throw new CommandError(['delete'], del);
    out(`  (no worker '${desired.name}' was deployed)`);
  } else if (del) report.deleted.push(`worker:${desired.name}`);
  for (const q of existingQueues) {
    await w.call(['queues', 'delete', q]);
    if (!opts.dryRun) report.deleted.push(`queue:${q}`);
  }
  if (index) {
    await w.call(['vectorize', 'delete', index, '--force']);
    if (!opts.dryRun) report.deleted.push(`vectorize:${index}`);
  }
  for (const db of existingDbs) {
    await w.call(['d1', 'delete', db.name, '--skip-confirmation']);
    if (!opts.dryRun) report.deleted.push(`d1:${db.name}`);
  }
  if (!opts.dryRun) {
    rmSync(dirname(configPath), { recursive: true, force: true });
    out(`Deleted: ${report.deleted.join(', ') || 'nothing (nothing existed)'}`);
  }
  return report;
}

function askLine(question) {
  return new Promise((done) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    let answered = false;
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      done(answer);
    });
    rl.on('close', () => {
      if (!answered) done(null);
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let opts;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (e) {
    console.error(`deploy: ${e.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log(USAGE);
    process.exit(0);
  }
  main(opts).catch((e) => {
    console.error(`\ndeploy: ${e.message}`);
    if (e instanceof CommandError && !opts.destroy) {
      console.error('Nothing that was created is undone: fix the cause and run the same command again to resume.');
    }
    process.exit(1);
  });
}
