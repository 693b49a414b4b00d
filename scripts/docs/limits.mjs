#!/usr/bin/env node
// Writes the table of Cloudflare's limits in docs/operations/limits.md (between the
// `<!-- limits:begin -->` and `<!-- limits:end -->` markers) from src/limits.json, the file the
// worker's ledger and the e2e suite read too.
//
//   node scripts/docs/limits.mjs           rewrite the table
//   node scripts/docs/limits.mjs --check   fail when the table is stale
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const LIMITS = join(root, 'src', 'limits.json');
const PAGE = join(root, 'docs', 'operations', 'limits.md');
const BEGIN = '<!-- limits:begin (generated from src/limits.json by scripts/docs/limits.mjs) -->';
const END = '<!-- limits:end -->';

/** `n` in the limit's unit, for people: 128 MB, 5 min, 1,000. */
export function human(n, unit) {
  const group = (x) => Math.round(x).toLocaleString('en-US');
  if (unit === 'bytes') {
    if (n >= 1e9 && n % 1e8 === 0) return `${n / 1e9} GB`;
    if (n >= 1e6 && n % 1e5 === 0) return `${n / 1e6} MB`;
    if (n >= 1048576 && n % 1048576 === 0) return `${n / 1048576} MiB`;
    if (n >= 1024 && n % 1024 === 0 && n % 1000 !== 0) return `${n / 1024} KiB`;
    if (n >= 1e3 && n % 100 === 0) return `${n / 1e3} KB`;
    return `${group(n)} B`;
  }
  if (unit === 'ms') {
    if (n >= 60_000 && n % 60_000 === 0) return `${n / 60_000} min`;
    if (n >= 1000 && n % 1000 === 0) return `${n / 1000} s`;
    return `${group(n)} ms`;
  }
  return group(n);
}

export function table(file) {
  const rows = [
    '| area | limit | Workers Paid | Workers Free | edgerag\'s budget | measured as | source |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const l of file.limits) {
    const budget = `${human(l.budget, l.unit)}${l.split ? ' (the limit: split at it)' : ''}`;
    const figure = l.figure ? `\`${l.figure}\`: ${l.how}` : l.how;
    const date = /^\d{4}-\d{2}-\d{2}$/.test(l.sourceDate) ? `updated ${l.sourceDate}` : l.sourceDate;
    rows.push(`| ${l.area} | ${l.what} | ${human(l.paid, l.unit)} | ${human(l.free, l.unit)} | ${budget} | ${figure} | [page](${l.source}) (${date}) |`);
  }
  return rows.join('\n');
}

function render(page, file) {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${PAGE} has no ${BEGIN} … ${END} block`);
  return `${page.slice(0, start + BEGIN.length)}\n${table(file)}\n${page.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = JSON.parse(readFileSync(LIMITS, 'utf8'));
  const page = readFileSync(PAGE, 'utf8');
  const fresh = render(page, file);
  if (process.argv.includes('--check')) {
    if (fresh !== page) {
      console.error('docs/operations/limits.md is stale: run node scripts/docs/limits.mjs');
      process.exit(1);
    }
  } else {
    writeFileSync(PAGE, fresh);
  }
}
