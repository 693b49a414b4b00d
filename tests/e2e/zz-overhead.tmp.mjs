import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, startEdgerag, startHashEmbedder } from './harness.mjs';
const FIX = join(ROOT, 'tests', 'e2e', 'fixtures', 'search-repo');
const files = [];
const walk = (d) => { for (const n of readdirSync(d).sort()) { const p = join(d, n); if (statSync(p).isDirectory()) walk(p); else files.push({ path: relative(FIX, p), content: readFileSync(p, 'utf8') }); } };
walk(FIX);
const embed = await startHashEmbedder();
const er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
try {
  const r = await er.request('POST', '/v1/repos/acme/shop/files', { body: { files } });
  await er.waitForJob(r.body.job.id);
  const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
  for (const [label, fn] of [
    ['health', () => er.request('GET', '/health')],
    ['404', () => er.request('GET', '/nope')],
    ['direct404', () => fetch(er.url + '/nope').then(r => r.text())],
    ['search', () => er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'shop', rawQuery: 'refresh the access token', profile: 'balanced', debug: true } })],
    ['search-nodebug', () => er.request('POST', '/v1/search', { body: { owner: 'acme', name: 'shop', rawQuery: 'refresh the access token', profile: 'balanced' } })],
  ]) {
    for (let i = 0; i < 20; i++) await fn();
    const lat = []; let tot = 0; const mods = new Map();
    for (let i = 0; i < 100; i++) { const t = performance.now(); const x = await fn(); lat.push(performance.now() - t); if (x.body?.debug) { tot += x.body.debug.totalMs; for (const { module, ms } of x.body.debug.timings) mods.set(module, (mods.get(module) ?? 0) + ms); } }
    console.log(label, 'p50', pct(lat, 50).toFixed(1), 'p95', pct(lat, 95).toFixed(1), 'worker mean', (tot / 100).toFixed(1), JSON.stringify([...mods].map(([m, v]) => [m, +(v / 100).toFixed(2)])));
  }
} finally { await er.stop(); await embed.stop(); }
