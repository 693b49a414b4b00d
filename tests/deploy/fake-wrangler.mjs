#!/usr/bin/env node
// A stand-in for `wrangler` on PATH in the deploy tests: keeps a fake account in a JSON file
// ($FAKE_WRANGLER_STATE), appends every call to $FAKE_WRANGLER_STATE.calls (one JSON array of
// arguments a line) and answers the commands scripts/deploy/deploy.mjs uses the way wrangler 4
// does (the JSON of `--json`, the `✘ [ERROR] …` lines and exit status 1 of its errors).
// $FAKE_WRANGLER_WARN and $FAKE_WRANGLER_UPLOAD_KIB shape what `deploy --dry-run` prints.
// $FAKE_WRANGLER_FAIL (a string): the first call whose arguments joined by spaces contain it fails,
// as an API error would, once.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';

const statePath = process.env.FAKE_WRANGLER_STATE;
if (!statePath) {
  console.error('fake wrangler: FAKE_WRANGLER_STATE is not set');
  process.exit(2);
}
const argv = process.argv.slice(2);
appendFileSync(`${statePath}.calls`, `${JSON.stringify(argv)}\n`);

const state = existsSync(statePath)
  ? JSON.parse(readFileSync(statePath, 'utf8'))
  : { d1: [], queues: [], vectorize: [], workers: {}, failed: false, next: 1 };
const save = () => writeFileSync(statePath, JSON.stringify(state, null, 2));

function error(message) {
  console.error(`\n✘ [ERROR] ${message}\n`);
  save();
  process.exit(1);
}

const fail = process.env.FAKE_WRANGLER_FAIL;
if (fail && !state.failed && argv.join(' ').includes(fail)) {
  state.failed = true;
  error('A request to the Cloudflare API (/accounts/x) failed.\n\n  Internal error [code: 10000]');
}

// Options: --config PATH, --flag=value, --flag value (for the ones that take a value), booleans.
const takesValue = new Set(['--config', '--name', '--format', '--outdir', '--secrets-file', '--dimensions', '--metric', '--property-name', '--type']);
const flags = {};
const pos = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a.startsWith('--')) {
    const eq = a.indexOf('=');
    if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
    else if (takesValue.has(a)) flags[a.slice(2)] = argv[++i];
    else flags[a.slice(2)] = true;
  } else if (a === '-y') flags['skip-confirmation'] = true;
  else pos.push(a);
}
const config = flags.config ? JSON.parse(readFileSync(flags.config, 'utf8')) : {};
const banner = () => console.log('\n ⛅️ wrangler 4.156.2 (fake)\n───────────────────');
const uuid = () => `${String(state.next++).padStart(8, '0')}-0000-4000-8000-000000000000`;
const cmd = pos.slice(0, pos[0] === 'vectorize' || pos[0] === 'd1' || pos[0] === 'queues' || pos[0] === 'secret' ? 2 : 1).join(' ');

switch (cmd) {
  case 'd1 list':
    console.log(JSON.stringify(state.d1.map(({ uuid: u, name }) => ({ uuid: u, name, created_at: '2026-11-27T00:00:00.000Z', version: 'production', num_tables: 0, file_size: 0 })), null, 2));
    break;
  case 'd1 create': {
    const name = pos[2];
    banner();
    if (state.d1.some((d) => d.name === name)) error(`A database with that name already exists [code: 7502]`);
    const db = { uuid: uuid(), name, migrations: [] };
    state.d1.push(db);
    console.log(`✅ Successfully created DB '${name}' in region WEUR\nCreated your new D1 database.\n`);
    console.log(`To access your new D1 Database in your Worker, add the following snippet to your configuration file:\n{\n  "d1_databases": [\n    {\n      "binding": "${name}",\n      "database_name": "${name}",\n      "database_id": "${db.uuid}"\n    }\n  ]\n}`);
    break;
  }
  case 'd1 migrations': {
    if (pos[2] !== 'apply' || !flags.remote) error(`fake wrangler: unexpected d1 migrations ${pos.slice(2).join(' ')}`);
    const binding = config.d1_databases?.find((d) => d.binding === pos[3] || d.database_name === pos[3]);
    if (!binding) error(`Couldn't find a D1 DB with the name or binding '${pos[3]}' in your wrangler.json file.`);
    const db = state.d1.find((d) => d.uuid === binding.database_id);
    if (!db) error(`Couldn't find DB with ID ${binding.database_id}`);
    banner();
    const wanted = JSON.parse(process.env.FAKE_WRANGLER_MIGRATIONS ?? '["0001_init.sql"]');
    const todo = wanted.filter((m) => !db.migrations.includes(m));
    if (!todo.length) console.log('✅ No migrations to apply!');
    else {
      db.migrations.push(...todo);
      console.log(`Migrations to be applied:\n${todo.join('\n')}\n✅ Applied ${todo.length} migration(s)`);
    }
    break;
  }
  case 'd1 delete': {
    const i = state.d1.findIndex((d) => d.name === pos[2]);
    banner();
    if (i < 0) error(`Couldn't find DB with name '${pos[2]}'`);
    state.d1.splice(i, 1);
    console.log(`Deleted '${pos[2]}' successfully.`);
    break;
  }
  case 'queues info': {
    banner();
    const q = state.queues.find((x) => x.name === pos[2]);
    if (!q) error(`Queue "${pos[2]}" does not exist. To create it, run: wrangler queues create ${pos[2]}`);
    console.log(`Queue Name: ${q.name}\nQueue ID: ${q.id}\nCreated On: 2026-11-27T00:00:00Z\nLast Modified: 2026-11-27T00:00:00Z\nNumber of Producers: 0\nNumber of Consumers: 0`);
    break;
  }
  case 'queues create': {
    banner();
    if (state.queues.some((x) => x.name === pos[2])) error(`A request to the Cloudflare API failed.\n\n  Queue name is already taken [code: 11009]`);
    state.queues.push({ name: pos[2], id: uuid().replaceAll('-', '') });
    console.log(`🌀 Creating queue '${pos[2]}'\n✅ Created queue '${pos[2]}'`);
    break;
  }
  case 'queues delete': {
    const i = state.queues.findIndex((x) => x.name === pos[2]);
    if (i < 0) error(`Queue "${pos[2]}" does not exist. To create it, run: wrangler queues create ${pos[2]}`);
    state.queues.splice(i, 1);
    console.log(`Deleted queue ${pos[2]}.`);
    break;
  }
  case 'vectorize list':
    console.log(JSON.stringify(state.vectorize.map(({ name, dimensions, metric }) => ({ name, config: { dimensions, metric }, created_on: '2026-11-27', modified_on: '2026-11-27' })), null, 2));
    break;
  case 'vectorize create': {
    if (state.vectorize.some((x) => x.name === pos[2])) error(`A request to the Cloudflare API failed.\n\n  vectorize.index.duplicate_name [code: 3002]`);
    if (!flags.dimensions || !flags.metric) error('🚨 You must provide both dimensions and a metric, or a known model preset when creating an index.');
    state.vectorize.push({ name: pos[2], dimensions: Number(flags.dimensions), metric: flags.metric, metadata: [] });
    banner();
    console.log(`🚧 Creating index: '${pos[2]}'\n✅ Successfully created a new Vectorize index: '${pos[2]}'`);
    break;
  }
  case 'vectorize list-metadata-index': {
    const v = state.vectorize.find((x) => x.name === pos[2]);
    if (!v) error(`A request to the Cloudflare API failed.\n\n  vectorize.index.not_found [code: 3000]`);
    console.log(JSON.stringify(v.metadata.map((m) => ({ propertyName: m.propertyName, indexType: m.indexType })), null, 2));
    break;
  }
  case 'vectorize create-metadata-index': {
    const v = state.vectorize.find((x) => x.name === pos[2]);
    if (!v) error(`A request to the Cloudflare API failed.\n\n  vectorize.index.not_found [code: 3000]`);
    const prop = flags['property-name'] ?? flags.propertyName;
    if (v.metadata.some((m) => m.propertyName === prop)) error(`A request to the Cloudflare API failed.\n\n  metadata index already exists [code: 3005]`);
    v.metadata.push({ propertyName: prop, indexType: flags.type });
    banner();
    console.log(`📋 Creating metadata index...\n✅ Successfully enqueued metadata index creation request. Mutation changeset identifier: ${uuid()}.`);
    break;
  }
  case 'vectorize delete': {
    const i = state.vectorize.findIndex((x) => x.name === pos[2]);
    if (i < 0) error(`A request to the Cloudflare API failed.\n\n  vectorize.index.not_found [code: 3000]`);
    state.vectorize.splice(i, 1);
    console.log(`✅ Deleted index ${pos[2]}`);
    break;
  }
  case 'secret list': {
    const worker = state.workers[config.name];
    if (!worker) error(`Worker "${config.name}" not found.\n\nIf this is a new Worker, run \`wrangler deploy\` first to create it.`);
    console.log(JSON.stringify(Object.keys(worker.secrets).map((name) => ({ name, type: 'secret_text' })), null, '  '));
    break;
  }
  case 'deploy': {
    banner();
    if (flags['dry-run']) {
      // FAKE_WRANGLER_WARN: a warning as wrangler colours it; FAKE_WRANGLER_UPLOAD_KIB: the size.
      if (process.env.FAKE_WRANGLER_WARN) console.warn(`\x1b[33m▲ \x1b[43;33m[\x1b[43;30mWARNING\x1b[43;33m]\x1b[0m \x1b[1m${process.env.FAKE_WRANGLER_WARN}\x1b[0m`);
      const kib = Number(process.env.FAKE_WRANGLER_UPLOAD_KIB ?? 23456);
      console.log(`Total Upload: ${kib.toFixed(2)} KiB / gzip: ${(kib / 7).toFixed(2)} KiB\n--dry-run: exiting now.`);
      break;
    }
    for (const db of config.d1_databases ?? []) {
      if (!state.d1.some((d) => d.uuid === db.database_id)) error(`A request to the Cloudflare API failed.\n\n  D1 binding 'DB' references database '${db.database_id}' which was not found [code: 10021]`);
    }
    for (const c of config.queues?.consumers ?? []) {
      if (!state.queues.some((q) => q.name === c.queue)) error(`Queue "${c.queue}" does not exist. To create it, run: wrangler queues create ${c.queue}`);
    }
    const worker = (state.workers[config.name] ??= { secrets: {}, versions: 0 });
    worker.versions += 1;
    if (flags['secrets-file']) Object.assign(worker.secrets, JSON.parse(readFileSync(flags['secrets-file'], 'utf8')));
    console.log(`Total Upload: 23456.00 KiB / gzip: 3456.00 KiB\nUploaded ${config.name} (1.00 sec)\nDeployed ${config.name} triggers (0.50 sec)\n  https://${config.name}.example.workers.dev\nCurrent Version ID: ${uuid()}`);
    break;
  }
  case 'delete': {
    const name = flags.name ?? config.name;
    if (!state.workers[name]) error(`A request to the Cloudflare API failed.\n\n  This Worker does not exist on your account. [code: 10007]`);
    delete state.workers[name];
    console.log(`Successfully deleted ${name}`);
    break;
  }
  default:
    error(`fake wrangler: unknown command ${argv.join(' ')}`);
}
save();
