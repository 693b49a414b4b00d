// The one-command deploy (scripts/deploy/deploy.mjs) against a fake `wrangler` on PATH that keeps
// a fake account and records every call: a first run creates everything, a second creates nothing,
// a run that fails half-way resumes, --destroy deletes only after the typed name, and the lists the
// script keeps (embedding models, Vectorize metadata) agree with the worker's sources.
//
//   node --test tests/deploy/
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { deployConfig, desiredResources, METADATA_INDEXES, WORKERS_AI_MODELS } from '../../scripts/deploy/config.mjs';
import { main, parseOptions, UsageError } from '../../scripts/deploy/deploy.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');

let work;
let n = 0;
before(() => {
  work = mkdtempSync(join(tmpdir(), 'edgerag-deploy-test-'));
  const bin = join(work, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'wrangler'), `#!/bin/sh\nexec "${process.execPath}" "${join(HERE, 'fake-wrangler.mjs')}" "$@"\n`);
  chmodSync(join(bin, 'wrangler'), 0o755);
  process.env.PATH = `${bin}:${process.env.PATH}`;
  // A stand-in for the release build in build/worker.
  mkdirSync(join(work, 'build'));
  writeFileSync(join(work, 'build', 'shim.mjs'), 'export default {};\n');
  writeFileSync(join(work, 'build', '.edgerag-build'), 'opt=1 grammars=1 hooks=0 0123abcd\n');
});
after(() => rmSync(work, { recursive: true, force: true }));

/** A fresh fake account and state folder. */
function account() {
  const dir = join(work, `account-${++n}`);
  mkdirSync(dir);
  return {
    dir,
    state: join(dir, 'fake-account.json'),
    stateDir: join(dir, 'edgerag-state'),
    account() {
      return JSON.parse(readFileSync(this.state, 'utf8'));
    },
    calls() {
      return existsSync(`${this.state}.calls`)
        ? readFileSync(`${this.state}.calls`, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
        : [];
    },
  };
}

/** Runs the deploy with these arguments against the fake account; returns its report, its
 * output, and the wrangler calls it made. */
async function deploy(acct, argv, { fail, answer } = {}) {
  process.env.FAKE_WRANGLER_STATE = acct.state;
  if (fail) process.env.FAKE_WRANGLER_FAIL = fail;
  else delete process.env.FAKE_WRANGLER_FAIL;
  const before = acct.calls().length;
  const lines = [];
  const asked = [];
  let report;
  let error;
  try {
    report = await main(parseOptions(['--no-build', ...argv]), {
      out: (l) => lines.push(l),
      ask: async (q) => {
        asked.push(q);
        return answer;
      },
      stateDir: acct.stateDir,
      buildDir: join(work, 'build'),
    });
  } catch (e) {
    error = e;
  }
  const calls = acct.calls().slice(before);
  return { report, error, output: lines.join('\n'), calls, asked };
}

const creates = (calls) => calls.filter((c) => c.includes('create') || c.includes('create-metadata-index')).map((c) => c.slice(0, 3).join(' '));
const QUEUES = ['edgerag-fetch', 'edgerag-chunk', 'edgerag-embed', 'edgerag-index', 'edgerag-dlq'];

describe('deploy against a fake wrangler', () => {
  test('a first run creates every resource, migrates, deploys and prints a generated API token once', async () => {
    const acct = account();
    const { report, error, output, calls } = await deploy(acct, []);
    assert.equal(error, undefined);
    assert.deepEqual(creates(calls).sort(), [
      'd1 create edgerag',
      ...QUEUES.map((q) => `queues create ${q}`),
      'vectorize create edgerag',
      'vectorize create-metadata-index edgerag',
      'vectorize create-metadata-index edgerag',
    ].sort());
    const vc = calls.find((c) => c[1] === 'create' && c[0] === 'vectorize');
    assert.ok(vc.includes('--dimensions=1024') && vc.includes('--metric=cosine'), vc.join(' '));
    const props = calls.filter((c) => c[1] === 'create-metadata-index').map((c) => c.find((a) => a.startsWith('--property-name=')));
    assert.deepEqual(props.sort(), ['--property-name=language', '--property-name=path']);
    assert.ok(calls.some((c) => c.join(' ').startsWith('d1 migrations apply DB --remote')));
    // Every call names the generated configuration; none edits wrangler.toml.
    for (const c of calls) assert.equal(c[c.indexOf('--config') + 1], report.configPath, c.join(' '));
    const acc = acct.account();
    const cfg = JSON.parse(readFileSync(report.configPath, 'utf8'));
    assert.equal(cfg.d1_databases[0].database_id, acc.d1[0].uuid);
    assert.equal(cfg.env, undefined, 'one environment: nothing for wrangler to warn about');
    assert.equal(cfg.vars.EMBED_DIMS, '1024');
    assert.equal(cfg.limits.cpu_ms, 300000);
    assert.deepEqual(acc.d1[0].migrations, ['0001_init.sql']);
    // The token: generated, uploaded with the deploy, printed once.
    assert.match(report.token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(acc.workers.edgerag.secrets.API_TOKEN, report.token);
    assert.equal(output.split(report.token).length - 1, 1);
    const deployCall = calls.find((c) => c[0] === 'deploy');
    assert.ok(deployCall.includes('--secrets-file'));
    assert.ok(!existsSync(deployCall[deployCall.indexOf('--secrets-file') + 1]), 'the secrets file is removed after the deploy');
  });

  test('an existing GitHub App\'s id and key are stored as secrets, never in the generated configuration', async () => {
    const acct = account();
    const dir = mkdtempSync(join(tmpdir(), 'edgerag-app-key-'));
    const keyFile = join(dir, 'app.private-key.pem');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }));
    const { report, error, output } = await deploy(acct, ['--github-app-id', '123456', '--github-app-key', keyFile]);
    assert.equal(error, undefined);
    const secrets = acct.account().workers.edgerag.secrets;
    assert.equal(secrets.GITHUB_APP_ID, '123456');
    assert.match(secrets.GITHUB_APP_PRIVATE_KEY, /^-----BEGIN PRIVATE KEY-----/);
    assert.match(report.webhookSecret, /^[0-9a-f]{64}$/);
    assert.equal(secrets.GITHUB_APP_WEBHOOK_SECRET, report.webhookSecret);
    assert.equal(output.split(report.webhookSecret).length - 1, 1, 'the webhook secret is printed once');
    const generated = readFileSync(report.configPath, 'utf8');
    assert.doesNotMatch(generated, /GITHUB_APP|PRIVATE KEY|123456/);
    // Again with the same options: the key is uploaded again, the webhook secret kept.
    const again = await deploy(acct, ['--github-app-id', '123456', '--github-app-key', keyFile]);
    assert.equal(again.report.webhookSecret, undefined);
    assert.equal(acct.account().workers.edgerag.secrets.GITHUB_APP_WEBHOOK_SECRET, report.webhookSecret);
    assert.throws(() => parseOptions(['--github-app-id', '1']), (e) => e instanceof UsageError && /go together/.test(e.message));
    rmSync(dir, { recursive: true, force: true });
  });

  test('a second run creates nothing and sets no secret', async () => {
    const acct = account();
    await deploy(acct, []);
    const first = acct.account();
    const { report, error, calls, output } = await deploy(acct, []);
    assert.equal(error, undefined);
    assert.deepEqual(creates(calls), []);
    assert.deepEqual(report.created, []);
    assert.equal(report.token, undefined);
    assert.ok(!calls.find((c) => c[0] === 'deploy').includes('--secrets-file'));
    const second = acct.account();
    assert.deepEqual(second.d1.map((d) => [d.name, d.uuid]), first.d1.map((d) => [d.name, d.uuid]));
    assert.deepEqual(second.queues, first.queues);
    assert.deepEqual(second.vectorize, first.vectorize);
    assert.equal(second.workers.edgerag.secrets.API_TOKEN, first.workers.edgerag.secrets.API_TOKEN);
    assert.match(output, /Nothing to create/);
  });

  test('a run that fails half-way resumes: the next run creates only what is missing', async () => {
    const acct = account();
    const broken = await deploy(acct, [], { fail: 'vectorize create edgerag' });
    assert.match(broken.error.message, /vectorize create edgerag .*failed \(exit 1\)[\s\S]*Internal error/);
    assert.ok(!broken.calls.some((c) => c[0] === 'deploy'), 'no deploy after a failed step');
    assert.equal(acct.account().vectorize.length, 0);
    const resumed = await deploy(acct, []);
    assert.equal(resumed.error, undefined);
    assert.deepEqual(creates(resumed.calls).sort(), [
      'vectorize create edgerag',
      'vectorize create-metadata-index edgerag',
      'vectorize create-metadata-index edgerag',
    ]);
    const acc = acct.account();
    assert.equal(acc.d1.length, 1);
    assert.deepEqual(acc.queues.map((q) => q.name).sort(), [...QUEUES].sort());
    assert.ok(acc.workers.edgerag.secrets.API_TOKEN);
  });

  test('a failure after a database was created keeps its id for the next run', async () => {
    const acct = account();
    const broken = await deploy(acct, [], { fail: 'queues create edgerag-embed' });
    assert.ok(broken.error);
    const uuid = acct.account().d1[0].uuid;
    const resumed = await deploy(acct, []);
    assert.equal(resumed.error, undefined);
    assert.deepEqual(creates(resumed.calls).filter((c) => c.startsWith('d1')), []);
    assert.deepEqual(creates(resumed.calls).filter((c) => c.startsWith('queues')), ['queues create edgerag-embed', 'queues create edgerag-index', 'queues create edgerag-dlq']);
    assert.equal(JSON.parse(readFileSync(resumed.report.configPath, 'utf8')).d1_databases[0].database_id, uuid);
  });

  test('every database of --d1-bindings is created and migrated, and the worker is told', async () => {
    const acct = account();
    const { report, error, calls } = await deploy(acct, ['--d1-bindings', 'DB,DB_2', '--name', 'team-a']);
    assert.equal(error, undefined);
    assert.deepEqual(acct.account().d1.map((d) => d.name), ['team-a', 'team-a-db-2']);
    assert.deepEqual(calls.filter((c) => c[1] === 'migrations').map((c) => c[3]), ['DB', 'DB_2']);
    const cfg = JSON.parse(readFileSync(report.configPath, 'utf8'));
    assert.equal(cfg.vars.D1_BINDINGS, 'DB,DB_2');
    assert.equal(cfg.name, 'team-a');
    assert.deepEqual(cfg.queues.producers.map((p) => p.queue), QUEUES.map((q) => q.replace('edgerag', 'team-a')));
    assert.ok(cfg.queues.consumers.every((c) => !c.dead_letter_queue || c.dead_letter_queue === 'team-a-dlq'));
  });

  test('an existing Vectorize index of other dimensions is a clear error, before any deploy', async () => {
    const acct = account();
    await deploy(acct, ['--embed-model', '@cf/baai/bge-small-en-v1.5']);
    const { error, calls } = await deploy(acct, []);
    assert.match(error.message, /exists with 384 dimensions .*@cf\/baai\/bge-m3 needs 1024/);
    assert.ok(!calls.some((c) => c[0] === 'deploy'));
  });

  test('--destroy deletes nothing without the typed name, then everything with it', async () => {
    const acct = account();
    const { report } = await deploy(acct, []);
    const refused = await deploy(acct, ['--destroy'], { answer: 'edgerg' });
    assert.equal(refused.report.confirmed, false);
    assert.match(refused.asked[0], /Type the deployment's name \(edgerag\)/);
    assert.ok(!refused.calls.some((c) => c.includes('delete')), 'nothing deleted');
    const done = await deploy(acct, ['--destroy'], { answer: 'edgerag\n' });
    assert.equal(done.error, undefined);
    assert.deepEqual(done.report.deleted.sort(), ['d1:edgerag', 'vectorize:edgerag', 'worker:edgerag', ...QUEUES.map((q) => `queue:${q}`)].sort());
    const acc = acct.account();
    assert.deepEqual([acc.d1, acc.queues, acc.vectorize, acc.workers], [[], [], [], {}]);
    assert.ok(!existsSync(report.configPath), 'the generated configuration goes too');
    // Again: nothing left, nothing to delete, no error.
    const again = await deploy(acct, ['--destroy'], { answer: 'edgerag' });
    assert.equal(again.error, undefined);
    assert.deepEqual(again.report.deleted, []);
  });

  test('--dry-run prints every command, calls the account for nothing and checks the bundle', async () => {
    const acct = account();
    const { report, error, output, calls } = await deploy(acct, ['--dry-run']);
    assert.equal(error, undefined);
    assert.deepEqual(calls.map((c) => c.slice(0, 2).join(' ')), ['deploy --dry-run']);
    for (const expected of [
      'wrangler d1 list --json',
      'wrangler d1 create edgerag --update-config=false',
      'wrangler d1 migrations apply DB --remote',
      ...QUEUES.flatMap((q) => [`wrangler queues info ${q}`, `wrangler queues create ${q}`]),
      'wrangler vectorize create edgerag --dimensions=1024 --metric=cosine',
      'wrangler vectorize create-metadata-index edgerag --property-name=path --type=string',
      'wrangler vectorize create-metadata-index edgerag --property-name=language --type=string',
      'wrangler secret list --format json',
      'wrangler deploy --config',
    ]) {
      assert.ok(output.includes(expected), `dry run prints: ${expected}`);
    }
    assert.equal(report.dryRun.bytes, 23456 * 1024);
    assert.equal(existsSync(acct.state) ? acct.account().d1.length : 0, 0);
  });

  test('--dry-run fails on any wrangler warning, and on a bundle over the plan’s limit', async () => {
    const acct = account();
    process.env.FAKE_WRANGLER_WARN = 'Multiple environments are defined in the Wrangler configuration file';
    const warned = await deploy(acct, ['--dry-run']).finally(() => delete process.env.FAKE_WRANGLER_WARN);
    assert.match(warned.error?.message ?? '', /warned:\n▲ \[WARNING\] Multiple environments/);
    process.env.FAKE_WRANGLER_UPLOAD_KIB = String(64 * 1024 + 1);
    const big = await deploy(acct, ['--dry-run', '--plan', 'free']).finally(() => delete process.env.FAKE_WRANGLER_UPLOAD_KIB);
    assert.match(big.error?.message ?? '', /the bundle is 64\.00 MiB, over the free plan's 64\.00 MiB/);
    const fits = await deploy(acct, ['--dry-run', '--plan', 'free']);
    assert.equal(fits.error, undefined);
  });
});

describe('the deploy configuration', () => {
  const raw = {
    name: 'edgerag',
    main: 'build/worker/shim.mjs',
    assets: { directory: 'public', binding: 'ASSETS' },
    d1_databases: [{ binding: 'DB', database_name: 'edgerag', database_id: 'x', migrations_dir: 'migrations' }],
    queues: {
      producers: [{ binding: 'FETCH_QUEUE', queue: 'edgerag-fetch' }],
      consumers: [{ queue: 'edgerag-fetch', max_batch_size: 10, dead_letter_queue: 'edgerag-dlq' }, { queue: 'edgerag-dlq', max_batch_size: 10 }],
    },
    vectorize: [{ binding: 'VECTORIZE', index_name: 'edgerag' }],
    limits: { cpu_ms: 300000 },
    vars: { EMBED_MODEL: '@cf/baai/bge-m3', EMBED_DIMS: '1024' },
    env: { local: { name: 'edgerag-local' } },
  };

  test('the free plan builds fewer grammars, sets no CPU limit and takes one message per invocation', () => {
    const desired = desiredResources(raw, { plan: 'free' });
    assert.equal(desired.languages, 'ts,js,python,go');
    const cfg = deployConfig(raw, desired, { ids: {}, sourceDir: '/repo', outDir: '/repo/.edgerag/deploy/edgerag' });
    assert.equal(cfg.limits, undefined);
    assert.ok(cfg.queues.consumers.every((c) => c.max_batch_size === 1));
    assert.equal(cfg.main, '../../../build/worker/shim.mjs');
    assert.equal(cfg.assets.directory, '../../../public');
    assert.equal(cfg.d1_databases[0].migrations_dir, '../../../migrations');
    const paid = deployConfig(raw, desiredResources(raw, { plan: 'paid' }), { ids: {}, sourceDir: '/r', outDir: '/r/o' });
    assert.equal(paid.limits.cpu_ms, 300000);
    assert.equal(paid.vars.PUBLIC_READS, 'false', 'private unless asked');
    const pub = deployConfig(raw, desiredResources(raw, { plan: 'paid', public: true }), { ids: {}, sourceDir: '/r', outDir: '/r/o' });
    assert.equal(pub.vars.PUBLIC_READS, 'true');
    const priv = deployConfig(raw, desiredResources(raw, { plan: 'paid', private: true }), { ids: {}, sourceDir: '/r', outDir: '/r/o' });
    assert.equal(priv.vars.PUBLIC_READS, 'false');
    assert.equal(paid.queues.consumers[0].max_batch_size, 10);
  });

  test('a deployment is private unless asked; public ones are warned on every deploy, and an upgrade keeps its setting', async () => {
    const acct = account();
    const fresh = await deploy(acct, []);
    assert.equal(fresh.error, undefined);
    assert.equal(fresh.report.publicReads, false);
    assert.equal(JSON.parse(readFileSync(fresh.report.configPath, 'utf8')).vars.PUBLIC_READS, 'false');
    assert.match(fresh.output, /private: every read needs a key/);
    assert.doesNotMatch(fresh.output, /WARNING/);

    const opened = await deploy(acct, ['--public']);
    assert.equal(opened.report.publicReads, true);
    assert.match(opened.output, /WARNING: 'edgerag' is public \(you passed --public\): anyone who knows its URL can search and read every indexed repository/);
    // An upgrade without flags keeps the deployment public, and says so again.
    const upgraded = await deploy(acct, []);
    assert.equal(upgraded.report.publicReads, true);
    assert.equal(JSON.parse(readFileSync(upgraded.report.configPath, 'utf8')).vars.PUBLIC_READS, 'true');
    assert.match(upgraded.output, /WARNING: 'edgerag' is public \(this deployment was public before/);
    const closed = await deploy(acct, ['--private']);
    assert.equal(closed.report.publicReads, false);
    assert.doesNotMatch(closed.output, /WARNING/);
    assert.equal((await deploy(acct, [])).report.publicReads, false);
    // The dry run shows the same.
    const dry = await deploy(account(), ['--dry-run']);
    assert.equal(dry.report.publicReads, false);
    assert.match(dry.output, /private: every read needs a key/);
  });

  test('bad options are refused with the reason', () => {
    assert.throws(() => parseOptions(['--public', '--private']), (e) => e instanceof UsageError && /contradict/.test(e.message));
    assert.throws(() => parseOptions(['--plan', 'pro']), (e) => e instanceof UsageError && /free or paid/.test(e.message));
    assert.throws(() => parseOptions(['--frobnicate']), UsageError);
    assert.throws(() => desiredResources(raw, { plan: 'paid', embedModel: 'text-embedding-3-small' }), /not a Workers AI embedding model edgerag knows: @cf\/baai\/bge-m3/);
    assert.throws(() => desiredResources(raw, { plan: 'paid', name: 'My_Worker' }), /lowercase letters, digits and dashes/);
    assert.throws(() => desiredResources(raw, { plan: 'paid', d1Bindings: 'DB,2nd' }), /'2nd' is not a binding name/);
  });

  test('the embedding models agree with the worker’s model table', () => {
    const rust = readFileSync(join(ROOT, 'crates/core/src/embed/model_specs.rs'), 'utf8');
    const table = rust.slice(rust.indexOf('WORKERS_AI_MODELS'), rust.indexOf('LOCAL_MINILM'));
    const models = Object.fromEntries([...table.matchAll(/name: "([^"]+)",[\s\S]*?dims: (\d+),/g)].map((m) => [m[1], Number(m[2])]));
    assert.ok(Object.keys(models).length >= 3, 'read the table');
    assert.deepEqual(models, WORKERS_AI_MODELS);
  });

  test('the metadata indexes are the fields the worker filters Vectorize on', () => {
    const rust = readFileSync(join(ROOT, 'crates/core/src/vector/vectorize.rs'), 'utf8');
    const filter = rust.slice(rust.indexOf('pub fn translate_filter'), rust.indexOf('#[cfg(test)]'));
    const fields = [...filter.matchAll(/obj\.insert\("(\w+)"/g)].map((m) => m[1]);
    assert.deepEqual(fields.sort(), METADATA_INDEXES.map((m) => m.property).sort());
  });
});
