// Answer quality end to end through the worker (driven by scripts/bench/answers.sh): public
// repositories at a snapshot commit (scripts/bench/answers.repos.json; their git mirrors are read
// in place, never copied into ours) are indexed with `edgerag index` into the local worker in
// workerd (local D1 + Queues, the local MiniLM embedder), then asked two kinds of questions through
// `POST /v1/search` (scripts/bench/answers-questions.mjs makes them):
//
// - doc sentence → function: R@1 / R@5 / R@10 / MRR@10 of the first match overlapping the
//   function's lines;
// - change description → file: Acc@1 / Acc@5 / Acc@10 / MRR of the changed file among the
//   distinct files of the answer, in order.
//
// The same questions go through plain baselines in the same run: BM25 over whole files, 100-line
// windows with BM25, and 100-line windows with dense (the same embedder) + BM25 (RRF). Reported
// per split (the development set that is looked at, the held-out set that is reported) and per
// language, with the tokens of each answer (snippet characters / 4, neighbours included), search
// latency and the goals; written to target/bench-answers/results.{md,json} and the misses of each
// run to target/bench-answers/misses.jsonl.
//
//   node scripts/bench/answers.mjs --mirrors DIR [--split dev|heldout|all] [--kind doc|change]
//        [--profile balanced] [--body '{"json": "merged into every search request"}'] [--fresh]
//        [--profiles '{"profiles": {"balanced": {...}}}'  (the worker's SEARCH_PROFILES)]
//        [--no-baselines] [--label NAME] [--out DIR (default target/bench-answers: trees, the worker's
//        state, embeddings of the baselines, results)] [--dump FILE (every answer, one JSON line each,
//        with the candidates as ranked before the topK cut, to study a ranking change offline)]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT, TOKEN, applyMigrations, startEdgerag } from '../../tests/e2e/harness.mjs';
import { changeQuestions, checkout, docQuestions, hash } from './answers-questions.mjs';
import { Bm25, sourceFiles } from './bm25.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const flag = (name) => args.includes(name);
const mirrors = opt('--mirrors', process.env.EDGERAG_BENCH_MIRRORS);
if (!mirrors) {
  console.error('usage: answers.mjs --mirrors DIR (a folder holding owner+name/repo or owner/name git mirrors)');
  process.exit(2);
}
const split = opt('--split', 'all');
const kinds = opt('--kind', 'doc,change').split(',');
const profile = opt('--profile', 'balanced');
const extraBody = JSON.parse(opt('--body', '{}'));
// A profile configuration for the worker (its SEARCH_PROFILES var), to try settings without a build.
const profilesVar = opt('--profiles', null);
const label = opt('--label', profile);
// How deep a doc question's target is looked for among the matches (10 for the scores; more to see
// where a miss sits with a profile that returns more matches).
const depth = Number(opt('--depth', '10'));
const baselines = !flag('--no-baselines');
const dumpFile = opt('--dump', null);
if (dumpFile) writeFileSync(dumpFile, '');
const embedUrl = opt('--embed-url', process.env.EMBED_URL ?? 'http://127.0.0.1:8788/v1');
const OUT = opt('--out', join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'bench-answers'));
const STATE = join(OUT, 'state');
const cli = opt('--cli', join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'cli', 'edgerag'));

const GOALS = {
  doc: [['R@5', 0.84], ['MRR@10', 0.68]],
  change: [['Acc@1', 0.58], ['Acc@5', 0.86]],
};
const TOKEN_GOAL = 2500;

const corpus = JSON.parse(readFileSync(join(ROOT, 'scripts', 'bench', 'answers.repos.json'), 'utf8')).repos.filter(
  (r) => split === 'all' || r.split === split,
);

function mirrorOf(repo) {
  for (const dir of [join(mirrors, repo.replace('/', '+'), 'repo'), join(mirrors, repo.replace('/', '+')), join(mirrors, repo), join(mirrors, `${repo}.git`)]) {
    if (existsSync(join(dir, 'HEAD')) || existsSync(join(dir, '.git'))) return existsSync(join(dir, '.git')) ? join(dir, '.git') : dir;
  }
  throw new Error(`no git mirror of ${repo} under ${mirrors}`);
}

// ---------------------------------------------------------------------------------------------
// Questions and trees
// ---------------------------------------------------------------------------------------------

const sets = [];
for (const r of corpus) {
  const gitDir = mirrorOf(r.repo);
  const base = join(OUT, 'trees', `${r.repo.replace('/', '+')}@${r.commit.slice(0, 12)}`);
  checkout(gitDir, r.commit, join(base, 'tree'));
  const slug = r.repo.replace('/', '-').toLowerCase().replace(/[^a-z0-9-]/g, '-');
  if (kinds.includes('doc')) {
    const d = docQuestions(join(base, 'tree'), join(base, 'doc'));
    sets.push({ ...r, kind: 'doc', dir: join(base, 'doc'), name: `${slug}-doc`, questions: d.questions, available: d.available });
  }
  if (kinds.includes('change')) {
    const c = changeQuestions(gitDir, r.commit);
    sets.push({ ...r, kind: 'change', dir: join(base, 'tree'), name: slug, questions: c.questions, available: c.available });
  }
}
for (const s of sets) console.log(`${s.repo} (${s.split}) ${s.kind}: ${s.questions.length} questions (${s.available} found)`);

// ---------------------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------------------

/** 1-based rank of the first answer item that is the target, or 0. */
function rankOf(items, isTarget) {
  const i = items.findIndex(isTarget);
  return i < 0 ? 0 : i + 1;
}

function summarize(kind, rows) {
  const n = rows.length || 1;
  const at = (k) => rows.filter((r) => r.rank > 0 && r.rank <= k).length / n;
  const mrr = (cut) => rows.reduce((s, r) => s + (r.rank > 0 && r.rank <= cut ? 1 / r.rank : 0), 0) / n;
  const m =
    kind === 'doc'
      ? { 'R@1': at(1), 'R@5': at(5), 'R@10': at(10), 'MRR@10': mrr(10) }
      : { 'Acc@1': at(1), 'Acc@5': at(5), 'Acc@10': at(10), MRR: mrr(Infinity) };
  m.n = rows.length;
  const tokens = rows.map((r) => r.tokens).filter((t) => t != null);
  if (tokens.length) m.tokens = tokens.reduce((a, b) => a + b, 0) / tokens.length;
  const files = rows.map((r) => r.files).filter((t) => t != null);
  if (files.length) m.files = files.reduce((a, b) => a + b, 0) / files.length;
  return m;
}

const fmt = (m, keys) => keys.map((k) => (m[k] ?? 0).toFixed(3)).join(' / ');
const KEYS = { doc: ['R@1', 'R@5', 'R@10', 'MRR@10'], change: ['Acc@1', 'Acc@5', 'Acc@10', 'MRR'] };

// ---------------------------------------------------------------------------------------------
// Plain baselines (in process, over the same trees)
// ---------------------------------------------------------------------------------------------

function windows(files, size = 100) {
  const out = [];
  for (const f of files) {
    const lines = f.text.split('\n');
    for (let s = 0; s < lines.length; s += size) {
      out.push({ path: f.path, start: s + 1, end: Math.min(lines.length, s + size), text: `${f.path}\n${lines.slice(s, s + size).join('\n')}` });
    }
  }
  return out;
}

const embedCache = new Map();
const cacheFile = join(OUT, 'embeddings.jsonl');
function loadEmbedCache() {
  if (!existsSync(cacheFile)) return;
  for (const line of readFileSync(cacheFile, 'utf8').split('\n')) {
    if (!line) continue;
    const [k, v] = JSON.parse(line);
    embedCache.set(k, v);
  }
}
async function embed(texts) {
  const keys = texts.map((t) => hash(t).slice(0, 32));
  const missing = [...new Set(keys.filter((k) => !embedCache.has(k)))];
  const byKey = new Map(keys.map((k, i) => [k, texts[i]]));
  for (let i = 0; i < missing.length; i += 64) {
    const batch = missing.slice(i, i + 64);
    const r = await fetch(`${embedUrl}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'all-MiniLM-L6-v2', input: batch.map((k) => byKey.get(k).slice(0, 4000)) }),
    });
    if (!r.ok) throw new Error(`embedding server: ${r.status} ${await r.text()}`);
    const body = await r.json();
    body.data.forEach((d, j) => {
      const v = d.embedding.map((x) => Math.round(x * 1e5) / 1e5);
      embedCache.set(batch[j], v);
      appendFileSync(cacheFile, `${JSON.stringify([batch[j], v])}\n`);
    });
  }
  return keys.map((k) => embedCache.get(k));
}
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);

function rrf(lists, k = 60) {
  const score = new Map();
  for (const list of lists) list.forEach((id, i) => score.set(id, (score.get(id) ?? 0) + 1 / (k + i + 1)));
  return [...score.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([id]) => id);
}

const distinctFiles = (paths) => [...new Set(paths)];

async function runBaselines(set) {
  const files = sourceFiles(set.dir);
  const wins = windows(files);
  const winBm25 = new Bm25(wins);
  const rows = { 'windows + BM25': [], 'windows, dense + BM25': [] };
  if (set.kind === 'change') rows['files + BM25'] = [];
  const fileBm25 = set.kind === 'change' ? new Bm25(files.map((f) => ({ ...f, text: `${f.path}\n${f.text}` }))) : null;
  let winVectors = null;
  try {
    winVectors = await embed(wins.map((w) => w.text));
  } catch (e) {
    console.log(`  dense baseline skipped: ${e.message}`);
  }
  const qVectors = winVectors ? await embed(set.questions.map((q) => q.question)) : null;
  set.questions.forEach((q, qi) => {
    const sparse = winBm25.search(q.question, 100);
    let dense = [];
    if (winVectors) {
      dense = winVectors.map((v, i) => [i, dot(v, qVectors[qi])]).sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 100).map(([i]) => i);
    }
    const variants = { 'windows + BM25': sparse, 'windows, dense + BM25': winVectors ? rrf([dense, sparse]) : null };
    for (const [name, ids] of Object.entries(variants)) {
      if (!ids) continue;
      const hits = ids.map((i) => wins[i]);
      const rank =
        set.kind === 'doc'
          ? rankOf(hits.slice(0, 10), (w) => w.path === q.path && w.start <= q.endLine && w.end >= q.startLine)
          : rankOf(distinctFiles(hits.map((w) => w.path)), (p) => p === q.path);
      rows[name].push({ rank });
    }
    if (fileBm25) rows['files + BM25'].push({ rank: rankOf(fileBm25.search(q.question, 100).map((i) => files[i].path), (p) => p === q.path) });
  });
  if (!winVectors) delete rows['windows, dense + BM25'];
  return rows;
}

// ---------------------------------------------------------------------------------------------
// edgerag, end to end
// ---------------------------------------------------------------------------------------------

mkdirSync(OUT, { recursive: true });
loadEmbedCache();
if (flag('--fresh')) rmSync(STATE, { recursive: true, force: true });
// New migrations reach a kept state too (applying them again changes nothing).
mkdirSync(STATE, { recursive: true });
await applyMigrations(STATE);
const vars = { OPENAI_BASE_URL: embedUrl, RETRY_BASE_DELAY_SECONDS: '1' };
if (profilesVar) vars.SEARCH_PROFILES = profilesVar;
const er = await startEdgerag({ persistDir: STATE, vars, log: flag('--log') });
const results = { label, profile, body: extraBody, date: new Date().toISOString(), sets: [] };
// Warnings of the responses (a profile configuration the worker refused shows here), printed once.
const warned = new Set();
const missesFile = join(OUT, 'misses.jsonl');
writeFileSync(missesFile, '');
try {
  for (const set of sets) {
    const t0 = performance.now();
    const out = execFileSync(cli, ['index', set.dir, '--repo', `bench/${set.name}`, '--server', er.url, '--token', TOKEN, '--json', '--timeout', '7200'], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const summary = JSON.parse(out.trim().split('\n').at(-1));
    console.log(`indexed bench/${set.name}: ${summary.fileCount} files, ${summary.chunkCount} chunks, ${summary.uploaded} uploaded (${((performance.now() - t0) / 1000).toFixed(1)} s)`);

    const rows = [];
    const latencies = [];
    for (const q of set.questions) {
      // A dump also keeps the candidates as ranked before the topK cut (`debug.ranking`).
      const body = { owner: 'bench', name: set.name, rawQuery: q.question, profile, ...(dumpFile ? { debug: true } : {}), ...extraBody };
      const s0 = performance.now();
      // A kept-alive socket the server closed while the CLI was indexing fails once: ask again.
      const r = await er.request('POST', '/v1/search', { body }).catch(() => er.request('POST', '/v1/search', { body }));
      latencies.push(performance.now() - s0);
      if (r.status !== 200) throw new Error(`search → ${r.status} ${r.text.slice(0, 300)}`);
      const matches = r.body.matches;
      for (const w of r.body.warnings ?? []) warned.add(w);
      const tokens = matches.reduce((s, m) => s + m.snippet.length, 0) / 4;
      const files = distinctFiles(matches.map((m) => m.path));
      const rank =
        set.kind === 'doc'
          ? rankOf(matches.slice(0, depth), (m) => m.path === q.path && m.startLine <= q.endLine && m.endLine >= q.startLine)
          : rankOf(files, (p) => p === q.path);
      rows.push({ rank, tokens, files: files.length, language: q.language });
      if (dumpFile) {
        const target = { path: q.path, startLine: q.startLine, endLine: q.endLine };
        const answer = matches.map((m) => ({ path: m.path, startLine: m.startLine, endLine: m.endLine, symbol: m.symbol, chunkType: m.metadata?.chunkType, neighborOf: m.metadata?.neighborOfSpanHash ?? null, score: m.score, chars: m.snippet.length }));
        appendFileSync(dumpFile, `${JSON.stringify({ kind: set.kind, split: set.split, repo: set.repo, tree: set.dir, language: q.language, question: q.question, target, rank, answer, ranking: r.body.debug?.ranking ?? [] })}\n`);
      }
      if (set.split === 'dev' && rank !== 1) {
        appendFileSync(
          missesFile,
          `${JSON.stringify({ kind: set.kind, repo: set.repo, question: q.question, target: q.startLine ? `${q.path}:${q.startLine}-${q.endLine}` : q.path, rank, answer: matches.map((m) => `${m.path}:${m.startLine}-${m.endLine} ${m.symbol ?? ''} ${m.score.toFixed(3)}`) })}\n`,
        );
      }
    }
    const base = baselines ? await runBaselines(set) : {};
    latencies.sort((a, b) => a - b);
    const p95 = latencies[Math.min(latencies.length - 1, Math.floor(0.95 * latencies.length))];
    results.sets.push({ repo: set.repo, split: set.split, kind: set.kind, chunks: summary.chunkCount, p95, rows, baselines: base, languages: [...new Set(set.questions.map((q) => q.language))] });
    const m = summarize(set.kind, rows);
    console.log(`  ${set.kind} ${set.repo}: edgerag ${fmt(m, KEYS[set.kind])}, ${m.tokens?.toFixed(0)} tokens, ${m.files?.toFixed(1)} files, p95 ${p95.toFixed(0)} ms`);
  }
} finally {
  await er.stop();
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const md = [`# Answer quality — ${label} (${results.date})`, '', `profile \`${profile}\`${Object.keys(extraBody).length ? `, request ${JSON.stringify(extraBody)}` : ''}`, ''];
const say = (line = '') => {
  console.log(line);
  md.push(line);
};
for (const kind of kinds) {
  for (const part of split === 'all' ? ['dev', 'heldout'] : [split]) {
    const chosen = results.sets.filter((s) => s.kind === kind && s.split === part);
    if (!chosen.length) continue;
    const all = chosen.flatMap((s) => s.rows);
    const title = kind === 'doc' ? 'doc sentence → function' : 'change description → file';
    say(`## ${title}, ${part === 'dev' ? 'development set' : 'held-out set'} (${all.length} questions, ${chosen.map((s) => s.repo).join(', ')})`);
    say('');
    say(`| system | ${KEYS[kind].join(' / ')} | tokens | files |`);
    say('| --- | --- | --- | --- |');
    const names = [...new Set(chosen.flatMap((s) => Object.keys(s.baselines)))];
    for (const name of names) say(`| ${name} | ${fmt(summarize(kind, chosen.flatMap((s) => s.baselines[name] ?? [])), KEYS[kind])} | | |`);
    const m = summarize(kind, all);
    say(`| edgerag \`${label}\` | ${fmt(m, KEYS[kind])} | ${m.tokens.toFixed(0)} | ${m.files.toFixed(1)} |`);
    for (const lang of [...new Set(all.map((r) => r.language))].sort()) {
      const lm = summarize(kind, all.filter((r) => r.language === lang));
      say(`| — ${lang} (${lm.n}) | ${fmt(lm, KEYS[kind])} | ${lm.tokens.toFixed(0)} | ${lm.files.toFixed(1)} |`);
    }
    say('');
    for (const [k, goal] of GOALS[kind]) say(`goal ${k} ≥ ${goal}: ${m[k].toFixed(3)} ${m[k] >= goal ? 'met' : 'NOT MET'}`);
    say(`goal tokens per answer ≤ ${TOKEN_GOAL}: ${m.tokens.toFixed(0)} ${m.tokens <= TOKEN_GOAL ? 'met' : 'NOT MET'}`);
    say(`search p95 per repository: ${chosen.map((s) => `${s.repo} ${s.p95.toFixed(0)} ms (${s.chunks} chunks)`).join(', ')}`);
    say('');
  }
}
writeFileSync(join(OUT, 'results.md'), `${md.join('\n')}\n`);
writeFileSync(join(OUT, 'results.json'), JSON.stringify(results));
for (const w of warned) console.log(`warning from the worker: ${w}`);
console.log(`written: ${join(OUT, 'results.md')}, ${join(OUT, 'results.json')}, misses of the development set: ${missesFile}`);
