#!/usr/bin/env node
// The configuration page (docs/reference/configuration.md) names every variable the worker is
// configured with: each key of a `[vars]` table in wrangler.toml (every environment) and each
// variable of the table at the top of src/config.rs. Exit status 1 listing the missing ones.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const page = readFileSync(join(root, 'docs', 'reference', 'configuration.md'), 'utf8');
const names = new Set();
let inVars = false;
for (const line of readFileSync(join(root, 'wrangler.toml'), 'utf8').split('\n')) {
  const table = line.match(/^\s*\[+([^\]]+)\]+/);
  if (table) inVars = /(^|\.)vars$/.test(table[1].trim());
  else if (inVars) {
    const key = line.match(/^\s*([A-Z][A-Z0-9_]*)\s*=/);
    if (key) names.add(key[1]);
  }
}
for (const m of readFileSync(join(root, 'src', 'config.rs'), 'utf8').matchAll(/^\/\/! \| `([A-Z][A-Z0-9_]*)`/gm)) names.add(m[1]);
const missing = [...names].filter((n) => !page.includes(`\`${n}\``)).sort();
if (missing.length) {
  console.error(`check-config: docs/reference/configuration.md does not describe ${missing.join(', ')}`);
  process.exit(1);
}
console.log(`check-config: docs/reference/configuration.md describes all ${names.size} variables`);
