// Cold start of the worker in build/ (driven by scripts/bench/bundle.sh): starts edgerag in workerd
// with fresh local state and prints "<ms until /health answers> <first /v1/chunk ms> <warm ms>".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { applyMigrations, startEdgerag } from '../../tests/e2e/harness.mjs';

const body = {
  path: 'src/app.ts',
  content: 'export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport class Calc {\n  total = 0;\n  push(x: number) { this.total = add(this.total, x); }\n}\n',
};

async function chunkMs(er) {
  const t0 = performance.now();
  const r = await er.request('POST', '/v1/chunk', { body });
  const ms = performance.now() - t0;
  if (r.status !== 200) throw new Error(`/v1/chunk → ${r.status} ${r.text}`);
  return ms;
}

// Migrate first, so the timing covers only starting workerd and loading the module.
const dir = mkdtempSync(join(tmpdir(), 'edgerag-bundle-'));
await applyMigrations(dir);
const t0 = performance.now();
const er = await startEdgerag({ persistDir: dir });
const up = performance.now() - t0;
try {
  const first = await chunkMs(er);
  const warm = [];
  for (let i = 0; i < 5; i++) warm.push(await chunkMs(er));
  warm.sort((a, b) => a - b);
  console.log([up, first, warm[2]].map((x) => x.toFixed(0)).join(' '));
} finally {
  await er.stop();
  rmSync(dir, { recursive: true, force: true });
}
