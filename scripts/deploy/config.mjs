// The deploy configuration, computed: what a deployment of edgerag is made of on Cloudflare (its
// D1 databases, queues, Vectorize index and metadata indexes, secrets) and the wrangler
// configuration that binds them, generated from the production (top-level) part of wrangler.toml
// with the ids of the account's resources filled in. Pure functions: no wrangler call, no file
// written (scripts/deploy/deploy.mjs does that).
import { isAbsolute, join, relative, resolve } from 'node:path';

/** What each plan changes. Worker size: since 2026-09-04 one limit on every plan, 64 MiB
 * uncompressed (https://developers.cloudflare.com/workers/platform/limits/#worker-size; changelog
 * https://developers.cloudflare.com/changelog/post/2026-09-04-increased-worker-size-limit/ — the
 * former 3 MB / 10 MB compressed limits are gone). CPU: the free plan's 10 ms per invocation is
 * fixed (`limits.cpu_ms` is a paid setting); the paid plan allows up to 5 minutes. */
export const PLANS = {
  paid: {
    // Every tree-sitter grammar (the build's default).
    languages: null,
    maxBundleBytes: 64 * 1024 * 1024,
    cpuMs: 300_000,
    // Consumer batch sizes as wrangler.toml has them.
    consumerBatch: null,
  },
  free: {
    // The grammars most repositories need; other files are chunked as text / lines. A smaller
    // module starts faster (the startup limit is 1 s on every plan) and every invocation of the
    // free plan has only 10 ms of CPU.
    languages: 'ts,js,python,go',
    maxBundleBytes: 64 * 1024 * 1024,
    cpuMs: null,
    // One message per invocation: the free plan's CPU and its 50 D1 queries per invocation.
    consumerBatch: 1,
  },
};

/** Workers AI embedding models edgerag knows (crates/core/src/embed/model_specs.rs; a test checks
 * that the two lists agree). */
export const WORKERS_AI_MODELS = {
  '@cf/baai/bge-m3': 1024,
  '@cf/baai/bge-base-en-v1.5': 768,
  '@cf/baai/bge-small-en-v1.5': 384,
  '@cf/baai/bge-large-en-v1.5': 1024,
  '@cf/qwen/qwen3-embedding-0.6b': 1024,
};

/** Metadata the worker filters on in Vectorize (crates/core/src/vector/vectorize.rs,
 * `translate_filter`); each needs a metadata index created before vectors are inserted. */
export const METADATA_INDEXES = [
  { property: 'path', type: 'string' },
  { property: 'language', type: 'string' },
];

/** Secrets the deploy generates when absent. */
export const GENERATED_SECRETS = ['API_TOKEN'];

/** The placeholder id a dry run uses for a database it has not looked up. */
export const PLACEHOLDER_ID = '00000000-0000-0000-0000-000000000000';

/** A resource name derived from the deployment's name: wrangler.toml names its resources after
 * its worker (`edgerag`, `edgerag-fetch`, …); a deployment called `team-a` gets `team-a`,
 * `team-a-fetch`, …. */
function rename(value, from, to) {
  if (value === from) return to;
  if (value.startsWith(`${from}-`)) return `${to}${value.slice(from.length)}`;
  return value;
}

/** The D1 database name of a binding: `DB` is the deployment's name, others add the binding. */
export function databaseName(name, binding) {
  return binding === 'DB' ? name : `${name}-${binding.toLowerCase().replaceAll('_', '-')}`;
}

/** `DB,DB_2` → ['DB', 'DB_2'] (the worker's own rule: trimmed, repeats dropped, `DB` first by
 * default). A binding name wrangler would refuse is an error here. */
export function parseD1Bindings(value) {
  const names = [];
  for (const n of (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(n)) {
      throw new Error(`--d1-bindings: '${n}' is not a binding name (letters, digits and _, not starting with a digit)`);
    }
    if (!names.includes(n)) names.push(n);
  }
  return names.length ? names : ['DB'];
}

/**
 * Whether anonymous callers may read (PUBLIC_READS). Private unless someone asked: `--public`, or
 * `PUBLIC_READS = "true"` written into wrangler.toml's production vars, or (an upgrade) the
 * deployment's previous configuration was public and neither `--public` nor `--private` is given.
 * @param opts { public, private, previous } — previous: the last generated configuration, if any
 */
export function readsArePublic(raw, opts) {
  if (opts.public && opts.private) throw new Error('--public and --private contradict each other: choose one');
  if (opts.public) return true;
  if (opts.private) return false;
  if (opts.previous?.vars?.PUBLIC_READS === 'true') return true;
  return raw.vars?.PUBLIC_READS === 'true';
}

/** Why a public deployment is printed a warning on every deploy: who can read what. */
export function publicReadsWarning(desired, opts) {
  if (!desired.publicReads) return null;
  const why = opts.public
    ? 'you passed --public'
    : opts.previous?.vars?.PUBLIC_READS === 'true'
      ? 'this deployment was public before (an upgrade keeps its setting; pass --private to close it)'
      : "wrangler.toml's [vars] sets PUBLIC_READS = \"true\"";
  return `WARNING: '${desired.name}' is public (${why}): anyone who knows its URL can search and read every indexed repository, private ones included, without a key.`;
}

/**
 * What the deployment is made of.
 * @param raw the raw wrangler.toml (wrangler's `experimental_readRawConfig`)
 * @param opts { name, plan, embedModel, d1Bindings }
 */
export function desiredResources(raw, opts) {
  const plan = PLANS[opts.plan];
  if (!plan) throw new Error(`--plan must be one of ${Object.keys(PLANS).join(', ')}, not '${opts.plan}'`);
  const name = opts.name ?? raw.name;
  if (!/^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/.test(name)) {
    throw new Error(`--name '${name}': a worker name is lowercase letters, digits and dashes (at most 32 here, so every resource name stays short)`);
  }
  const model = opts.embedModel ?? raw.vars?.EMBED_MODEL ?? '@cf/baai/bge-m3';
  const dims = WORKERS_AI_MODELS[model];
  if (!dims) {
    throw new Error(`--embed-model '${model}' is not a Workers AI embedding model edgerag knows: ${Object.keys(WORKERS_AI_MODELS).join(', ')}`);
  }
  const bindings = parseD1Bindings(opts.d1Bindings ?? raw.vars?.D1_BINDINGS);
  const queues = [];
  for (const q of [...(raw.queues?.producers ?? []), ...(raw.queues?.consumers ?? [])]) {
    const renamed = rename(q.queue, raw.name, name);
    if (!queues.includes(renamed)) queues.push(renamed);
  }
  const vectorize = raw.vectorize?.[0];
  if (!vectorize) throw new Error('wrangler.toml declares no [[vectorize]] binding');
  return {
    name,
    plan: opts.plan,
    publicReads: readsArePublic(raw, opts),
    languages: opts.languages ?? plan.languages,
    maxBundleBytes: plan.maxBundleBytes,
    model,
    dims,
    databases: bindings.map((binding) => ({ binding, name: databaseName(name, binding) })),
    queues,
    vectorize: { binding: vectorize.binding, name: rename(vectorize.index_name, raw.name, name), dims, metric: 'cosine' },
    metadataIndexes: METADATA_INDEXES,
    secrets: GENERATED_SECRETS,
  };
}

/** A path of wrangler.toml (relative to its folder) made relative to the generated file's folder. */
function moved(path, fromDir, toDir) {
  return isAbsolute(path) ? path : relative(toDir, resolve(fromDir, path)) || '.';
}

/**
 * The generated wrangler configuration (JSON): the top level of wrangler.toml (no `env`, so
 * wrangler has one environment and nothing to warn about) with the deployment's names, the
 * databases' ids, the plan's limits and the embedder's variables.
 * @param ids { [databaseName]: uuid }
 */
export function deployConfig(raw, desired, { ids, sourceDir, outDir, accountId }) {
  const { env: _environments, ...top } = structuredClone(raw);
  const cfg = top;
  cfg.name = desired.name;
  if (accountId) cfg.account_id = accountId;
  cfg.main = moved(cfg.main, sourceDir, outDir);
  if (cfg.assets?.directory) cfg.assets.directory = moved(cfg.assets.directory, sourceDir, outDir);
  const migrations = raw.d1_databases?.[0]?.migrations_dir ?? 'migrations';
  cfg.d1_databases = desired.databases.map((db) => ({
    binding: db.binding,
    database_name: db.name,
    database_id: ids[db.name] ?? PLACEHOLDER_ID,
    migrations_dir: moved(migrations, sourceDir, outDir),
  }));
  const plan = PLANS[desired.plan];
  cfg.queues = {
    producers: (raw.queues?.producers ?? []).map((p) => ({ ...p, queue: rename(p.queue, raw.name, desired.name) })),
    consumers: (raw.queues?.consumers ?? []).map((c) => {
      const out = { ...c, queue: rename(c.queue, raw.name, desired.name) };
      if (c.dead_letter_queue) out.dead_letter_queue = rename(c.dead_letter_queue, raw.name, desired.name);
      if (plan.consumerBatch) out.max_batch_size = Math.min(out.max_batch_size ?? plan.consumerBatch, plan.consumerBatch);
      return out;
    }),
  };
  cfg.vectorize = [{ binding: desired.vectorize.binding, index_name: desired.vectorize.name }];
  if (plan.cpuMs) cfg.limits = { ...(cfg.limits ?? {}), cpu_ms: plan.cpuMs };
  else delete cfg.limits;
  cfg.vars = { ...(cfg.vars ?? {}), EMBEDDER: 'workers-ai', EMBED_MODEL: desired.model, EMBED_DIMS: String(desired.dims) };
  cfg.vars.PUBLIC_READS = String(desired.publicReads);
  if (desired.databases.length > 1) cfg.vars.D1_BINDINGS = desired.databases.map((d) => d.binding).join(',');
  else delete cfg.vars.D1_BINDINGS;
  return cfg;
}

/** Where the generated configuration of a deployment is written. */
export function deployConfigPath(stateDir, name) {
  return join(stateDir, 'deploy', name, 'wrangler.json');
}
