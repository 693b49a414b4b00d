// Tests of the documentation checks themselves (run by the `docs` test step): the link checker
// finds a missing page and a missing anchor and passes a sound book; the HTTP API generator's
// check fails on a stale page, and so does the limits table's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function book(pages) {
  const dir = mkdtempSync(join(tmpdir(), 'edgerag-book-'));
  for (const [path, body] of Object.entries(pages)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), `<html><body><nav><a href="nowhere.html">chrome</a></nav><main>${body}</main></body></html>`);
  }
  return dir;
}

const checkLinks = (dir) => spawnSync(process.execPath, [join(here, 'check-links.mjs'), dir], { encoding: 'utf8' });

test('a sound book passes: pages, anchors, external links and mdBook chrome are not errors', () => {
  const dir = book({
    'index.html': '<h1 id="top">x</h1><a href="guide/a.html#usage">a</a><a href="#top">top</a><a href="https://example.com/x#y">ext</a>',
    'guide/a.html': '<h2 id="usage">Usage</h2><a href="../index.html">back</a><img src="../index.html">',
  });
  const r = checkLinks(dir);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /4 internal links, none broken/);
});

test('a link to a page that does not exist fails, naming the page and the target', () => {
  const dir = book({ 'index.html': '<a href="guide/missing.html">m</a>' });
  const r = checkLinks(dir);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /index\.html: guide\/missing\.html — no such page/);
});

test('a link to an anchor that does not exist fails', () => {
  const dir = book({
    'index.html': '<a href="a.html#nope">m</a><a href="#gone">n</a>',
    'a.html': '<h2 id="yes">Yes</h2>',
  });
  const r = checkLinks(dir);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /a\.html#nope — no anchor #nope/);
  assert.match(r.stderr, /#gone — no anchor #gone in index\.html/);
  assert.match(r.stderr, /2 broken of 2 internal links/);
});

test('without a built book the check fails instead of passing vacuously', () => {
  const r = checkLinks(mkdtempSync(join(tmpdir(), 'edgerag-empty-')));
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no built book/);
});

test('the HTTP API page is fresh, and its check notices an edit', () => {
  const page = join(here, '..', '..', 'docs', 'reference', 'http-api.md');
  const generator = join(here, 'http-api.mjs');
  const ok = spawnSync(process.execPath, [generator, '--check'], { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  const original = readFileSync(page, 'utf8');
  try {
    writeFileSync(page, original.replace('## Routes', '## Routes (edited by hand)'));
    const stale = spawnSync(process.execPath, [generator, '--check'], { encoding: 'utf8' });
    assert.equal(stale.status, 1);
    assert.match(stale.stderr, /http-api\.md is stale/);
  } finally {
    writeFileSync(page, original);
  }
});

test('the limits table is fresh, and its check notices an edit', () => {
  const page = join(here, '..', '..', 'docs', 'operations', 'limits.md');
  const generator = join(here, 'limits.mjs');
  const ok = spawnSync(process.execPath, [generator, '--check'], { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  const original = readFileSync(page, 'utf8');
  assert.match(original, /\| D1 \| queries per invocation \| 1,000 \| 50 \| 500 \|/);
  try {
    writeFileSync(page, original.replace('| D1 | queries per invocation | 1,000 |', '| D1 | queries per invocation | 2,000 |'));
    const stale = spawnSync(process.execPath, [generator, '--check'], { encoding: 'utf8' });
    assert.equal(stale.status, 1);
    assert.match(stale.stderr, /limits\.md is stale/);
  } finally {
    writeFileSync(page, original);
  }
});
