// The exact local vector index inside workerd (driven by scripts/bench/vector-index.sh).
import { readFileSync, readdirSync } from 'node:fs';
import { startEdgerag } from '../../tests/e2e/harness.mjs';

const sizes = process.env.BENCH_SIZES.split(/\s+/).filter(Boolean).map(Number);
const queries = Number(process.env.BENCH_QUERIES);
const dims = 384;
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };

/** Peak RSS (VmHWM, kB) of every workerd process on the machine started after `since`. */
function workerdPeakKb(pids) {
  let best = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('workerd') || pids.before.has(pid)) continue;
      const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/);
      if (m) best = Math.max(best, Number(m[1]));
    } catch { /* gone */ }
  }
  return best;
}
const before = new Set(readdirSync('/proc').filter((d) => /^\d+$/.test(d)));

const er = await startEdgerag({});
try {
  let loaded = 0;
  const ns = 'bench:vectors';
  for (const size of sizes) {
    const t0 = performance.now();
    while (loaded < size) {
      const count = Math.min(5000, size - loaded);
      const r = await er.request('POST', '/__test/vectors/load', { body: { namespace: ns, count, dims, seed: 42, start: loaded } });
      if (r.status !== 200) throw new Error(r.text);
      loaded += count;
    }
    const loadS = (performance.now() - t0) / 1000;
    const filters = [['no filter', {}], ['language + path prefix', { languages: ['rust', 'go'], pathPrefix: 'dir1' }]];
    // `cached`: the isolate's in-memory copy (the default); `scan`: LOCAL_INDEX_CACHE_MB=0, every
    // query scans D1 (fewer queries: it is slow).
    for (const [mode, cacheBytes, n] of [['cached', undefined, queries], ['scan', 0, Math.min(queries, 5)]]) {
      for (const [label, filter] of filters) {
        const http = [];
        const inner = [];
        let mem = 0;
        // The first query after a load rebuilds the copy (cached mode): timed apart.
        const first = await er.request('POST', '/__test/vectors/query', { body: { namespace: ns, dims, queries: 1, topK: 10, seed: 999, filter, cacheBytes } });
        if (first.status !== 200) throw new Error(first.text);
        for (let q = 0; q < n; q++) {
          const t = performance.now();
          const r = await er.request('POST', '/__test/vectors/query', { body: { namespace: ns, dims, queries: 1, topK: 10, seed: q + 1, filter, cacheBytes } });
          http.push(performance.now() - t);
          if (r.status !== 200) throw new Error(r.text);
          inner.push(...r.body.ms);
          mem = r.body.wasmMemoryBytes;
        }
        console.log(
          `${String(size).padStart(6)} vectors × ${dims}d, ${mode.padEnd(6)} ${label.padEnd(22)}: ` +
          `first ${first.body.ms[0].toFixed(0)} ms (${first.body.cache[0]}); ` +
          `worker p50 ${pct(inner, 50).toFixed(1)} ms, p95 ${pct(inner, 95).toFixed(1)} ms; ` +
          `HTTP p50 ${pct(http, 50).toFixed(1)} ms, p95 ${pct(http, 95).toFixed(1)} ms; ` +
          `wasm heap ${(mem / 1048576).toFixed(1)} MiB` + (label === 'no filter' && mode === 'cached' ? `; load ${loadS.toFixed(1)} s` : ''),
        );
      }
    }
    // A write of 100 vectors, then the next query: the copy is brought up to date with the rows
    // that changed (`refreshed`) instead of rebuilt from a scan of the namespace (the `first` above).
    const afterWrite = [];
    for (let w = 0; w < 5; w++) {
      const write = await er.request('POST', '/__test/vectors/load', { body: { namespace: ns, count: 100, dims, seed: 43, start: loaded } });
      if (write.status !== 200) throw new Error(write.text);
      loaded += 100;
      const r = await er.request('POST', '/__test/vectors/query', { body: { namespace: ns, dims, queries: 1, topK: 10, seed: 500 + w } });
      if (r.status !== 200) throw new Error(r.text);
      afterWrite.push({ ms: r.body.ms[0], path: r.body.cache[0] });
    }
    console.log(
      `${String(size).padStart(6)} vectors × ${dims}d, cached first query after a write of 100 vectors: ` +
      `p50 ${pct(afterWrite.map((a) => a.ms), 50).toFixed(1)} ms, max ${Math.max(...afterWrite.map((a) => a.ms)).toFixed(1)} ms ` +
      `(${[...new Set(afterWrite.map((a) => a.path))].join(', ')})`,
    );
    // Three queries of one search (a text model's paraphrases each get a vector search): one
    // `query_many` call (one pass over the copy, one read of the candidates) against three calls.
    for (const [label, together, calls] of [['3 queries, 3 calls', 1, 3], ['3 queries, 1 call', 3, 1]]) {
      const inner = [];
      for (let q = 0; q < queries; q++) {
        let ms = 0;
        for (let c = 0; c < calls; c++) {
          const r = await er.request('POST', '/__test/vectors/query', { body: { namespace: ns, dims, queries: 1, topK: 50, seed: 1000 * q + c + 1, together } });
          if (r.status !== 200) throw new Error(r.text);
          ms += r.body.ms[0];
        }
        inner.push(ms);
      }
      console.log(`${String(size).padStart(6)} vectors × ${dims}d, cached ${label.padEnd(22)}: worker p50 ${pct(inner, 50).toFixed(1)} ms, p95 ${pct(inner, 95).toFixed(1)} ms (top 50 each)`);
    }
  }
  console.log(`workerd peak RSS (VmHWM, all isolates + SQLite): ${(workerdPeakKb({ before }) / 1024).toFixed(0)} MiB`);
} finally {
  await er.stop();
}
