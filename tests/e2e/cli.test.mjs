// `edgerag index <dir>` and `edgerag status` against the worker in workerd: ignore rules, batches,
// incremental re-index (changed / new / deleted / unchanged), waiting for READY, auth errors.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';

import { cliBinary, startEdgerag, startHashEmbedder } from './harness.mjs';

let embed;
let er;
let cli;
let dir;
let stopWatch;

const write = (rel, content) => {
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), content);
};

// Asynchronous on purpose: the test embedder runs in this process and must keep answering.
function runCli(args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cli, args, { env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

const edgerag = (...args) => runCli(args, { EDGERAG_URL: er.url, EDGERAG_TOKEN: er.token });

const indexedPaths = async (repo) =>
  (await er.d1('SELECT path FROM files WHERE namespace = ? ORDER BY path', `repo:${repo}`)).map((r) => r.path);

before(async () => {
  cli = await cliBinary();
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url } });
  // The CLI waits for its jobs itself: play the cron for one that goes quiet, as waitForJob does.
  stopWatch = er.watchJobs();
  dir = mkdtempSync(join(tmpdir(), 'edgerag-cli-'));
  write('README.md', '# Project\n\nA small project.\n');
  write('src/main.go', 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n');
  write('src/util/strings.go', 'package util\n\nfunc Upper(s string) string {\n\treturn s\n}\n');
  write('docs/guide.md', '# Guide\n\nSteps.\n');
  write('logs/app.log', 'noise\n');
  write('.gitignore', 'logs/\n*.tmp\n');
  write('scratch.tmp', 'temp\n');
  write('node_modules/dep/index.js', 'module.exports = 1;\n');
  write('image.bin', Buffer.from([1, 2, 0, 3]));
  for (let i = 0; i < 30; i++) write(`many/file${String(i).padStart(2, '0')}.txt`, `file number ${i}\n`.repeat(200));
});

after(async () => {
  stopWatch?.();
  await er?.stop();
  await embed?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('index a directory, re-index what changed, report status', async () => {
  // Small batches so the upload takes several requests.
  let r = await edgerag('index', dir, '--repo', 'acme/cli', '--batch-bytes', '20000');
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /acme\/cli: READY — 35 files/);
  assert.match(r.out, /skipped locally: .*BINARY_FILE 1/);
  const first = await indexedPaths('acme/cli');
  assert.equal(first.length, 35);
  assert.ok(first.includes('.gitignore') && first.includes('src/util/strings.go'));
  assert.ok(!first.some((p) => p.startsWith('logs/') || p.endsWith('.tmp') || p.startsWith('node_modules/') || p === 'image.bin'));
  const jobs1 = (await er.d1("SELECT COUNT(*) AS n FROM repo_rag_index_job WHERE namespace = 'repo:acme/cli'"))[0].n;

  // Nothing changed: nothing is uploaded and no job is created.
  r = await edgerag('index', dir, '--repo', 'acme/cli');
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /READY — 35 files, \d+ chunks \(0 uploaded, 35 unchanged, 0 deleted/);
  assert.equal((await er.d1("SELECT COUNT(*) AS n FROM repo_rag_index_job WHERE namespace = 'repo:acme/cli'"))[0].n, jobs1);

  // One changed, one new, one deleted.
  write('README.md', '# Project\n\nA small project, now documented.\n');
  write('src/new.go', 'package main\n\nfunc New() {}\n');
  unlinkSync(join(dir, 'docs/guide.md'));
  r = await edgerag('index', dir, '--repo', 'acme/cli');
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /READY — 35 files, \d+ chunks \(2 uploaded, 33 unchanged, 1 deleted/);
  const second = await indexedPaths('acme/cli');
  assert.ok(second.includes('src/new.go') && !second.includes('docs/guide.md'));
  const readme = await er.d1("SELECT text FROM chunks WHERE namespace = 'repo:acme/cli' AND path = 'README.md'");
  assert.match(readme[0].text, /now documented/);

  r = await edgerag('status', 'acme/cli');
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /acme\/cli {2}READY \(READY\)/);
  assert.match(r.out, /files 35/);
  r = await edgerag('status');
  assert.match(r.out, /acme\/cli +READY +35/);
  r = await edgerag('status', 'acme/cli', '--json');
  assert.equal(JSON.parse(r.out).ready, true);
});

test('auth and usage errors', async () => {
  const r = await runCli(['index', dir, '--repo', 'acme/denied', '--server', er.url, '--token', 'wrong']);
  assert.equal(r.code, 1);
  assert.match(r.err, /401 UNAUTHORIZED/);
  assert.equal((await edgerag('index')).code, 2);
  assert.equal((await edgerag('index', dir, '--repo', 'no-slash')).code, 2);
  assert.equal((await edgerag('index', join(dir, 'README.md'))).code, 2);
  const down = await runCli(['status', '--server', 'http://127.0.0.1:9']);
  assert.equal(down.code, 1);
});
