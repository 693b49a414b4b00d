// The worker as built (build/worker), wrapped to count what Cloudflare bills: the cost benchmark
// (scripts/bench/costs.sh) runs this module in workerd instead of build/worker/shim.mjs. Nothing of
// the worker changes: its bindings are handed to it through proxies that count
//
// - D1: statements, and each statement's `rows_read` / `rows_written` from D1's result `meta`
//   (what D1 bills), apart for the local vector index's tables (local_vector*), which production
//   does not have (Vectorize holds the vectors there);
// - Queues: messages sent and their JSON size (Queues bills per 64 KB written, read, deleted);
// - invocations: HTTP requests (bar this module's own route and /health), queue batches and
//   their messages, scheduled runs.
//
// `GET /__costs` answers the counters so far (the benchmark reads them between its phases).
import { WorkerEntrypoint } from 'cloudflare:workers';

import Edgerag from '../../build/worker/shim.mjs';

const fresh = () => ({
  requests: 0,
  queueBatches: 0,
  queueMessagesDelivered: 0,
  scheduled: 0,
  d1: { statements: 0, rowsRead: 0, rowsWritten: 0 },
  // The local vector index's share (in production: Vectorize, not D1).
  d1LocalVectors: { statements: 0, rowsRead: 0, rowsWritten: 0 },
  queueSends: { messages: 0, bytes: 0, ops64k: 0 },
});
let counters = fresh();

const LOCAL_VECTORS = /\blocal_vector/i;

function count(sql, meta) {
  const into = LOCAL_VECTORS.test(sql) ? counters.d1LocalVectors : counters.d1;
  into.statements += 1;
  into.rowsRead += Number(meta?.rows_read ?? 0);
  into.rowsWritten += Number(meta?.rows_written ?? 0);
}

const RAW = Symbol('statement');
const SQL = Symbol('sql');

// The worker checks a binding's class name (`D1Database`, `WorkerQueue`), so the counting
// wrappers carry the same names.
class D1PreparedStatement {
  constructor(real, sql) {
    this[RAW] = real;
    this[SQL] = sql;
  }

  bind(...args) {
    return new D1PreparedStatement(this[RAW].bind(...args), this[SQL]);
  }

  async all() {
    const r = await this[RAW].all();
    count(this[SQL], r.meta);
    return r;
  }

  async run() {
    const r = await this[RAW].run();
    count(this[SQL], r.meta);
    return r;
  }

  // `first` returns no `meta`: run the statement with `all` (the same rows are read) and take its
  // first row, as `first` does.
  async first(column) {
    const r = await this[RAW].all();
    count(this[SQL], r.meta);
    const row = r.results?.[0];
    if (row === undefined) return null;
    return column === undefined ? row : (row[column] ?? null);
  }

  async raw(options) {
    const r = await this[RAW].all();
    count(this[SQL], r.meta);
    const rows = r.results ?? [];
    const values = rows.map((row) => Object.values(row));
    return options?.columnNames ? [Object.keys(rows[0] ?? {}), ...values] : values;
  }
}

class D1Database {
  constructor(real) {
    this.real = real;
  }

  prepare(sql) {
    return new D1PreparedStatement(this.real.prepare(sql), sql);
  }

  async batch(statements) {
    const results = await this.real.batch(statements.map((s) => s[RAW] ?? s));
    results.forEach((r, i) => count(statements[i][SQL] ?? '', r.meta));
    return results;
  }

  exec(sql) {
    return this.real.exec(sql);
  }
}

function sent(body) {
  // Queues counts a KB as 1,000 bytes and adds ≈ 100 bytes of metadata to each message.
  const bytes = new TextEncoder().encode(JSON.stringify(body ?? null)).length + 100;
  counters.queueSends.messages += 1;
  counters.queueSends.bytes += bytes;
  counters.queueSends.ops64k += Math.ceil(bytes / 64_000);
}

class WorkerQueue {
  constructor(real) {
    this.real = real;
  }

  send(body, options) {
    sent(body);
    return this.real.send(body, options);
  }

  sendBatch(messages, options) {
    for (const m of messages) sent(m.body);
    return this.real.sendBatch(messages, options);
  }
}

const wrapped = new WeakMap();
function countingEnv(env) {
  if (wrapped.has(env)) return wrapped.get(env);
  const cache = new Map();
  const proxy = new Proxy(env, {
    get(target, name) {
      const value = Reflect.get(target, name);
      if (typeof name !== 'string' || value === null || typeof value !== 'object') return value;
      if (!cache.has(name)) {
        const kind = value.constructor?.name;
        if (kind === 'D1Database' || kind === 'BetaDatabase') cache.set(name, new D1Database(value));
        else if (kind === 'WorkerQueue') cache.set(name, new WorkerQueue(value));
        else cache.set(name, value);
      }
      return cache.get(name);
    },
  });
  wrapped.set(env, proxy);
  return proxy;
}

export default class extends WorkerEntrypoint {
  inner() {
    return new Edgerag(this.ctx, countingEnv(this.env));
  }

  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/__costs') {
      const body = JSON.stringify(counters);
      if (request.method === 'DELETE') counters = fresh();
      return new Response(body, { headers: { 'content-type': 'application/json' } });
    }
    if (url.pathname !== '/health') counters.requests += 1;
    return this.inner().fetch(request);
  }

  async queue(batch) {
    counters.queueBatches += 1;
    counters.queueMessagesDelivered += batch.messages.length;
    return this.inner().queue(batch);
  }

  async scheduled(controller) {
    counters.scheduled += 1;
    return this.inner().scheduled(controller);
  }
}
