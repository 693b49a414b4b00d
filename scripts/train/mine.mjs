// Mines training pairs for the local embedder from the public repositories in
// scripts/train/corpus.repos.json (git mirrors read in place; nothing of them is copied into this
// repository). Two kinds of pairs, made the way the answer-quality benchmark makes its questions
// (scripts/bench/answers-questions.mjs: its sentence, subject and path rules are imported, not
// copied), so that what is trained on is what is measured:
//
// - doc: the first sentence of a function's doc comment → that function's code, the doc comment
//   left out (the benchmark blanks it in the indexed copy) — and left out of the negatives too;
// - change: a real commit subject (and, beside it, the body's first paragraph) → a window of the one
//   source file the commit changed, around the first changed lines, as the file was after it.
//
// Each pair has hard negatives: for doc pairs, other functions of the same file (siblings) and
// BM25's best-scoring functions elsewhere in the tree; for change pairs, BM25's best-scoring windows
// of other files of the snapshot and a window of a file in the same folder. Passages are written as
// the indexer gives them to the embedder (crates/core/src/text.rs `embedding_text`: "path
// (language)", then "kind Parent.name", then the code).
//
// Reproducible: repositories in manifest order, files in path order, every choice by a seeded hash;
// at most --doc-cap doc and --change-cap change pairs per repository (so that no repository
// dominates) and at most 6 change pairs per file (as the benchmark). Output (never committed):
// OUT/{train,dev}.jsonl and OUT/stats.json.
//
//   node scripts/train/mine.mjs --mirrors DIR [--out target/train/data] [--seed 13]
//        [--doc-cap 300] [--change-cap 200] [--negatives 4] [--only owner/name,...]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { LANGUAGES as BENCH_LANGUAGES, cleanSubject, docFunctions, firstSentence, isAuxiliary, namesFile } from '../bench/answers-questions.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const mirrors = opt('--mirrors', process.env.EDGERAG_TRAIN_MIRRORS);
if (!mirrors) {
  console.error('usage: mine.mjs --mirrors DIR (a folder holding owner+name/repo git mirrors)');
  process.exit(2);
}
const OUT = opt('--out', join(ROOT, 'target', 'train', 'data'));
const SEED = opt('--seed', '13');
const DOC_CAP = Number(opt('--doc-cap', '300'));
const CHANGE_CAP = Number(opt('--change-cap', '200'));
const NEGATIVES = Number(opt('--negatives', '4'));
const ONLY = opt('--only', null)?.split(',');
const MAX_FILE_BYTES = 300_000;
const MAX_PASSAGE_LINES = 60;
const MAX_PASSAGE_CHARS = 2400;
const WINDOW = 40;

// ---------------------------------------------------------------------------------------------
// The manifest, and the rule that keeps the benchmarks out of it
// ---------------------------------------------------------------------------------------------

const manifest = JSON.parse(readFileSync(join(ROOT, 'scripts', 'train', 'corpus.repos.json'), 'utf8'));
const bench = JSON.parse(readFileSync(join(ROOT, 'scripts', 'bench', 'answers.repos.json'), 'utf8')).repos.map((r) => r.repo);
const SWE_BENCH_LITE = [
  'django/django', 'sympy/sympy', 'scikit-learn/scikit-learn', 'matplotlib/matplotlib', 'sphinx-doc/sphinx',
  'astropy/astropy', 'pydata/xarray', 'pytest-dev/pytest', 'psf/requests', 'pallets/flask', 'mwaskom/seaborn',
  'pylint-dev/pylint',
];
const excludedOwners = new Set([...manifest.excluded_owners, ...bench, ...SWE_BENCH_LITE].map((r) => r.split('/')[0].toLowerCase()));
for (const r of manifest.repos) {
  if (excludedOwners.has(r.repo.split('/')[0].toLowerCase())) throw new Error(`${r.repo}: an owner of a benchmark repository`);
}
if (new Set(manifest.repos.map((r) => r.repo.toLowerCase())).size !== manifest.repos.length) throw new Error('a repository twice');

// ---------------------------------------------------------------------------------------------
// Languages: the benchmark's six as it reads them, and the chunker's other code languages
// ---------------------------------------------------------------------------------------------

const LANGUAGES = {
  ...BENCH_LANGUAGES,
  c: ['.c', '.h'],
  cpp: ['.cc', '.cpp', '.cxx', '.hpp', '.hh', '.hxx'],
  csharp: ['.cs'],
  ruby: ['.rb'],
  php: ['.php'],
  kotlin: ['.kt', '.kts'],
  swift: ['.swift'],
  scala: ['.scala', '.sc'],
  shell: ['.sh', '.bash'],
};
const BY_EXT = new Map(Object.entries(LANGUAGES).flatMap(([lang, exts]) => exts.map((e) => [e, lang])));
function languageOf(path, repoLanguage) {
  const ext = extname(path).toLowerCase();
  if (ext === '.h' && repoLanguage === 'cpp') return 'cpp';
  return BY_EXT.get(ext);
}
const isGenerated = (path) => /(^|\/)(node_modules|dist|build|out|target|generated|gen|bower_components)\//i.test(path) || /\.min\.|\.bundle\.|\.pb\.|_pb2\.py$|\.generated\./i.test(path);
const isSource = (path, repoLanguage) => Boolean(languageOf(path, repoLanguage)) && !isAuxiliary(path) && !isGenerated(path);

const hash = (s) => createHash('sha256').update(`${SEED}\0${s}`).digest('hex');
const sample = (items, n, key) => [...items].sort((a, b) => (hash(key(a)) < hash(key(b)) ? -1 : 1)).slice(0, n);

// ---------------------------------------------------------------------------------------------
// git
// ---------------------------------------------------------------------------------------------

function mirrorOf(repo) {
  for (const dir of [join(mirrors, repo.replace('/', '+'), 'repo'), join(mirrors, repo.replace('/', '+')), join(mirrors, repo)]) {
    if (existsSync(join(dir, '.git'))) return join(dir, '.git');
    if (existsSync(join(dir, 'HEAD'))) return dir;
  }
  return null;
}
const git = (gitDir, a, opts = {}) => execFileSync('git', ['--git-dir', gitDir, ...a], { encoding: 'utf8', maxBuffer: 1 << 30, ...opts });

/** Blobs by id, read in one `git cat-file --batch`. */
function readBlobs(gitDir, ids) {
  const out = new Map();
  if (!ids.length) return out;
  const buf = execFileSync('git', ['--git-dir', gitDir, 'cat-file', '--batch'], { input: ids.join('\n') + '\n', maxBuffer: 2 ** 31 });
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(10, pos);
    const [id, type, size] = buf.subarray(pos, nl).toString('utf8').split(' ');
    if (type === 'missing' || size === undefined) {
      pos = nl + 1;
      continue;
    }
    const n = Number(size);
    out.set(id, buf.subarray(nl + 1, nl + 1 + n));
    pos = nl + 1 + n + 1;
  }
  return out;
}

/** The snapshot's source texts (path order): [{ path, language, text, aux }]. */
function readTree(gitDir, commit, repoLanguage) {
  const rows = git(gitDir, ['ls-tree', '-r', '-l', commit])
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [meta, path] = l.split('\t');
      const [, type, id, size] = meta.split(/\s+/);
      return { type, id, size: Number(size), path };
    })
    .filter((r) => r.type === 'blob' && r.size > 0 && r.size <= MAX_FILE_BYTES && languageOf(r.path, repoLanguage) && !isGenerated(r.path))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const blobs = readBlobs(gitDir, [...new Set(rows.map((r) => r.id))]);
  const files = [];
  for (const r of rows) {
    const b = blobs.get(r.id);
    if (!b || b.includes(0)) continue;
    const text = b.toString('utf8');
    if (text.split('\n').some((l) => l.length > 1000)) continue; // minified or data
    files.push({ path: r.path, language: languageOf(r.path, repoLanguage), text, aux: isAuxiliary(r.path) });
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Doc comments → functions in the chunker's other languages (the benchmark's six use its own code)
// ---------------------------------------------------------------------------------------------

const indentOf = (l) => l.length - l.trimStart().length;

/** The benchmark's rule for a braced definition's end (same indent `}`), as in answers-questions.mjs. */
function braceEnd(lines, start) {
  const ind = indentOf(lines[start]);
  let sawOpen = false;
  for (let i = start; i < Math.min(lines.length, start + 600); i++) {
    if (lines[i].includes('{')) sawOpen = true;
    if (i === start) {
      if (/\{\s*\}\s*;?\s*$/.test(lines[i])) return i;
      continue;
    }
    if (!sawOpen) {
      if (i - start > 12) return null;
      continue;
    }
    if (lines[i].trim() && indentOf(lines[i]) === ind && /^\s*\}/.test(lines[i])) return i;
    if (lines[i].trim() && indentOf(lines[i]) < ind) return null;
  }
  return null;
}

/** Ruby: the `end` at the definition's indent. */
function rubyEnd(lines, start) {
  const ind = indentOf(lines[start]);
  if (/;\s*end\s*$/.test(lines[start])) return start;
  for (let i = start + 1; i < Math.min(lines.length, start + 600); i++) {
    if (!lines[i].trim()) continue;
    if (indentOf(lines[i]) === ind && /^\s*end\b/.test(lines[i])) return i;
    if (indentOf(lines[i]) < ind) return null;
  }
  return null;
}

const NOT_FN = /^\s*(if|for|while|switch|catch|return|else|new|throw|class|interface|enum|struct|union|typedef|namespace|using|module|case|do|sizeof|template\s*<[^>]*>\s*(class|struct))\b/;
const DEFS = {
  c: /^[A-Za-z_][\w\s*]*?\b[A-Za-z_]\w*\s*\([^;]*$/,
  cpp: /^\s*(template\s*<.*>\s*)?([\w:<>,*&~\s]+?\s+[*&]*)?~?[A-Za-z_][\w:~]*(<[^>]*>)?\s*\([^;]*$/,
  csharp: /^\s*(\[[^\]]*\]\s*)*((public|private|protected|internal|static|virtual|override|abstract|async|sealed|extern|unsafe|new|partial|readonly)\s+)+[\w<>[\],.?() ]*?[A-Za-z_]\w*\s*(<[^>]*>)?\s*\(/,
  php: /^\s*((public|private|protected|static|final|abstract)\s+)*function\s+&?\w+\s*\(/,
  kotlin: /^\s*(@\w+(\(.*\))?\s+)*((public|private|protected|internal|override|open|suspend|inline|operator|infix|tailrec|abstract|actual|expect|final|external)\s+)*fun\s+(<[^>]*>\s*)?([\w.<>?, ]+\.)?`?\w+`?\s*\(/,
  scala: /^\s*((override|private|protected|final|implicit|inline|transparent|private\[\w+\]|protected\[\w+\])\s+)*def\s+[\w$]+/,
  swift: /^\s*(@\w+(\(.*\))?\s+)*((public|private|fileprivate|internal|open|static|class|final|override|mutating|nonmutating|convenience|required|package)\s+)*(func\s+[\w$]+|init[?!]?\s*[(<]|subscript\s*[(<])/,
  ruby: /^\s*def\s+(self\.)?[\w?!=\[\]<>+*%-]+/,
  shell: /^\s*(function\s+[\w:.-]+(\s*\(\s*\))?|[\w:.-]+\s*\(\s*\))\s*\{?\s*$/,
};

/** `{ start, end, docLines, question }` (0-based) for the languages the benchmark does not read. */
function docFunctionsExtra(language, text) {
  const lines = text.split('\n');
  const isDef = DEFS[language];
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i].trim();
    let docTo;
    let doc;
    if (t.startsWith('/**') && language !== 'ruby' && language !== 'shell') {
      docTo = i;
      while (docTo < lines.length && !lines[docTo].includes('*/')) docTo++;
      if (docTo >= lines.length) continue;
      doc = lines.slice(i, docTo + 1).map((l) => l.trim().replace(/^\/\*\*/, '').replace(/\*\/$/, '').replace(/^\*\s?/, '').trim());
    } else {
      const marker = language === 'ruby' || language === 'shell' ? /^#(?![!#{])/ : /^\/\/\/(?!\/)/;
      if (!marker.test(t) || (i > 0 && marker.test(lines[i - 1].trim()))) continue;
      docTo = i;
      while (docTo + 1 < lines.length && marker.test(lines[docTo + 1].trim())) docTo++;
      doc = lines.slice(i, docTo + 1).map((l) => l.trim().replace(marker, '').replace(/^\s/, ''));
    }
    doc = doc.map((l) => l.replace(/^[*=#/-]{3,}\s*/, '').replace(/\s*[*=#/-]{3,}$/, ''));
    if (language === 'csharp' || language === 'swift') {
      // XML doc: the summary's text; `- Parameter` / `<param>` lines end it.
      const joined = doc.join('\n');
      const m = joined.match(/<summary>([\s\S]*?)<\/summary>/);
      doc = (m ? m[1] : joined)
        .replace(/<see\s+(c?ref|langword)="(?:[A-Z]:)?([^"]+)"\s*\/>/g, '$2')
        .replace(/<\/?(c|code|para|b|i|paramref)[^>]*>/g, '')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => !/^<\/?\w+/.test(l));
      doc = doc.slice(0, Math.max(0, doc.findIndex((l) => /^- (Parameter|Returns|Throws)/i.test(l))) || doc.length);
    }
    let def = docTo + 1;
    while (def < lines.length && /^\s*(@[\w.]+(\(.*\))?\s*$|\[[\w.]+(\(.*\))?\]\s*$|template\s*<.*>\s*$)/.test(lines[def])) def++;
    if (def >= lines.length || !isDef.test(lines[def]) || NOT_FN.test(lines[def])) continue;
    // An expression body (`fun f() = x`, `def f: Int = x`) has no braces to end it: left out.
    if ((language === 'kotlin' || language === 'scala') && !lines[def].includes('{') && /=\s*\S/.test(lines[def].replace(/[=!<>]=|=>/g, ''))) continue;
    if ((language === 'c' || language === 'cpp') && /^\s*#/.test(lines[def])) continue;
    const end = language === 'ruby' ? rubyEnd(lines, def) : braceEnd(lines, def);
    const question = firstSentence(doc);
    if (question && end != null && end > def) out.push({ start: def, end, docLines: [i, docTo], question });
    i = docTo;
  }
  return out;
}

const functionsOf = (language, text) => (BENCH_LANGUAGES[language] ? docFunctions(language, text) : docFunctionsExtra(language, text));

// ---------------------------------------------------------------------------------------------
// Passages as the embedder sees a chunk
// ---------------------------------------------------------------------------------------------

const NAME_RES = [
  /\b(?:def|fn|func|fun|function|sub)\s+(?:\([^)]*\)\s*)?(?:<[^>]*>\s*)?(?:[\w$]+(?:<[^>]*>)?\??\.)*`?([A-Za-z_$][\w$?!]*)/,
  /\b(init|subscript)\s*[(<]/,
  /([A-Za-z_$~][\w$]*)\s*(?:<[^>]*>)?\s*\(/,
];
function nameOf(line) {
  for (const re of NAME_RES) {
    const m = line.match(re);
    if (m) return m[1];
  }
  return null;
}
const PARENT_RE = /^\s*(?:(?:pub(?:\([^)]*\))?|export|public|private|protected|internal|abstract|final|sealed|open|data|static|partial|default|case)\s+)*(?:class|struct|interface|trait|object|enum|module|extension|protocol|record)\s+([A-Za-z_$][\w$]*)|^\s*impl\b(?:<[^>]*>)?\s*(?:[\w:<>, ]+\s+for\s+)?([A-Za-z_][\w]*)/;
function parentOf(lines, start, language) {
  if (language === 'go') return lines[start].match(/^func\s+\(\s*\w*\s*\*?\s*([A-Za-z_]\w*)/)?.[1] ?? null;
  const ind = indentOf(lines[start]);
  if (ind === 0) return null;
  for (let i = start - 1; i >= 0 && i >= start - 3000; i--) {
    if (!lines[i].trim() || indentOf(lines[i]) >= ind) continue;
    const m = lines[i].match(PARENT_RE);
    if (m) return m[1] ?? m[2];
  }
  return null;
}
function cap(lines) {
  let out = lines.slice(0, MAX_PASSAGE_LINES).join('\n');
  if (out.length > MAX_PASSAGE_CHARS) out = out.slice(0, MAX_PASSAGE_CHARS);
  return out;
}
/** A function chunk's embedding text; `withDoc` keeps its doc comment (negatives), else it is left out. */
function functionPassage(file, lines, f, withDoc) {
  const name = nameOf(lines[f.start]);
  const parent = parentOf(lines, f.start, file.language);
  const [d0, d1] = f.docLines;
  const body = [];
  const from = withDoc ? Math.min(d0, f.start) : f.start;
  for (let k = from; k <= f.end; k++) if (withDoc || k < d0 || k > d1) body.push(lines[k]);
  const head = `${file.path} (${file.language})\n` + (name ? `${parent ? 'code-method' : 'code-function'} ${parent ? `${parent}.` : ''}${name}\n` : '');
  return head + cap(body);
}
const windowPassage = (file, lines, from) => `${file.path} (${file.language})\n` + cap(lines.slice(from, from + WINDOW));

// ---------------------------------------------------------------------------------------------
// BM25 (identifiers split into their words, as the keyword search does)
// ---------------------------------------------------------------------------------------------

const STOP = new Set('the a an of to in and or for is are be it this that with on as by at from if not no use when into its can we all'.split(' '));
function terms(text) {
  const out = [];
  for (const tok of text.split(/[^A-Za-z0-9_]+/)) {
    if (!tok) continue;
    const parts = tok.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').split(/[_ ]+/);
    for (const p of parts) {
      const w = p.toLowerCase();
      if (w.length > 1 && !STOP.has(w)) out.push(w);
    }
    if (parts.length > 1) out.push(tok.toLowerCase());
  }
  return out;
}
class Bm25 {
  constructor(docs) {
    this.tf = docs.map((d) => {
      const m = new Map();
      for (const t of terms(d)) m.set(t, (m.get(t) ?? 0) + 1);
      return m;
    });
    this.len = this.tf.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
    this.avg = this.len.reduce((a, b) => a + b, 0) / Math.max(1, this.len.length);
    this.post = new Map();
    this.tf.forEach((m, i) => {
      for (const t of m.keys()) (this.post.get(t) ?? this.post.set(t, []).get(t)).push(i);
    });
  }
  search(query, k) {
    const N = this.tf.length;
    const score = new Map();
    for (const t of new Set(terms(query))) {
      const p = this.post.get(t);
      if (!p) continue;
      const idf = Math.log(1 + (N - p.length + 0.5) / (p.length + 0.5));
      for (const i of p) {
        const f = this.tf[i].get(t);
        score.set(i, (score.get(i) ?? 0) + (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * this.len[i]) / this.avg)));
      }
    }
    return [...score.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k).map(([i]) => i);
  }
}

// ---------------------------------------------------------------------------------------------
// Mining one repository
// ---------------------------------------------------------------------------------------------

function mineDoc(entry, files) {
  // Every documented function of the tree (tests too, as negatives); questions only from sources.
  const fns = [];
  for (const file of files) {
    const lines = file.text.split('\n');
    let found;
    try {
      found = functionsOf(file.language, file.text);
    } catch {
      continue;
    }
    // `passage` (with the doc comment) is what BM25 finds near misses by; `code` (without it) is
    // what a pair holds, for the positive and the negatives alike: were only the positive's
    // comment left out, "no doc comment" alone would tell it from its negatives, and a model
    // would learn that instead of the question — a shortcut the benchmark (which blanks only the
    // asked functions' comments) would reward and real code would not.
    for (const f of found) {
      fns.push({ ...f, file, passage: functionPassage(file, lines, f, true), code: functionPassage(file, lines, f, false) });
    }
  }
  const bm25 = new Bm25(fns.map((f) => f.passage));
  const byFile = new Map();
  fns.forEach((f, i) => (byFile.get(f.file.path) ?? byFile.set(f.file.path, []).get(f.file.path)).push(i));
  const candidates = fns.map((f, i) => i).filter((i) => !fns[i].file.aux);
  const chosen = sample(candidates, DOC_CAP, (i) => `${entry.repo}:${fns[i].file.path}:${fns[i].start}`);
  const pairs = [];
  for (const i of chosen) {
    const f = fns[i];
    const q = f.question.toLowerCase();
    const ok = (j) => j !== i && fns[j].question.toLowerCase() !== q;
    const siblings = sample((byFile.get(f.file.path) ?? []).filter(ok), Math.ceil(NEGATIVES / 2), (j) => `sib:${i}:${j}`);
    const near = bm25.search(f.question, 30).filter((j) => ok(j) && fns[j].file.path !== f.file.path && !siblings.includes(j));
    const negs = [...siblings.map((j) => ['sibling', j]), ...near.map((j) => ['bm25', j])].slice(0, NEGATIVES);
    if (!negs.length) continue;
    pairs.push({
      kind: 'doc',
      repo: entry.repo,
      language: f.file.language,
      split: entry.split,
      id: `${entry.repo}:${f.file.path}:${f.start + 1}`,
      query: f.question,
      positive: f.code,
      negatives: negs.map(([, j]) => fns[j].code),
      negative_kinds: negs.map(([k]) => k),
    });
  }
  return { available: candidates.length, pairs };
}

function cleanBody(body) {
  const para = [];
  for (const raw of body.split('\n')) {
    const l = raw.trim();
    if (!l) {
      if (para.length) break;
      continue;
    }
    if (/^(signed-off-by|co-authored-by|reviewed-by|change-id|cc|fixes|closes|see|refs?|pr-url):/i.test(l)) break;
    if (/^(\* |- )?(this reverts|cherry picked|merge)/i.test(l)) break;
    para.push(l);
  }
  const s = para.join(' ').replace(/`/g, '').replace(/\s+/g, ' ').trim();
  return s.length >= 20 ? s.slice(0, 600) : '';
}

function firstChangedLine(gitDir, sha, path) {
  let diff;
  try {
    diff = git(gitDir, ['show', '-U0', '--no-renames', '--format=', sha, '--', path], { stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
  const m = diff.match(/^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/m);
  return m ? Math.max(0, Number(m[1]) - 1) : null;
}

function mineChange(entry, gitDir, files) {
  const snapshot = new Map(files.map((f) => [f.path, f]));
  // --no-renames: a snapshot lacks blobs of 4 MiB and more, which rename detection would read.
  let log;
  try {
    log = git(gitDir, ['log', '--no-merges', '--no-renames', '--format=%x00%H%x01%s%x01%b%x02', '--name-only', entry.commit], { stdio: ['ignore', 'pipe', 'ignore'] });
  } catch (e) {
    console.error(`${entry.repo}: git log failed (${String(e.message).split('\n')[0]})`);
    return { available: 0, pairs: [] };
  }
  const found = [];
  for (const rec of log.split('\0').slice(1)) {
    const [head, rest = ''] = rec.split('\x02');
    const [sha, subject, body = ''] = head.split('\x01');
    const changed = rest.split('\n').map((l) => l.trim()).filter(Boolean);
    const sources = changed.filter((p) => isSource(p, entry.language));
    if (sources.length !== 1) continue;
    const [path] = sources;
    if (!snapshot.has(path)) continue;
    const question = cleanSubject(subject);
    if (!question || namesFile(question, path)) continue;
    const extra = cleanBody(body);
    found.push({ sha, question, body: extra && !namesFile(extra, path) ? extra : '', path });
  }
  // At most 6 per file (a hash-ordered choice), then at most CHANGE_CAP (hash order).
  const perPath = new Map();
  const capped = sample(found, found.length, (c) => c.sha).filter((c) => {
    const n = perPath.get(c.path) ?? 0;
    perPath.set(c.path, n + 1);
    return n < 6;
  });
  const chosen = sample(capped, CHANGE_CAP, (c) => `${entry.repo}:${c.sha}`);
  // Windows of the snapshot's files (tests too) for BM25's near misses.
  const wins = [];
  for (const file of files) {
    const lines = file.text.split('\n');
    for (let from = 0; from < lines.length; from += WINDOW) wins.push({ file, lines, from });
  }
  const bm25 = new Bm25(wins.map((w) => `${w.file.path}\n${w.lines.slice(w.from, w.from + WINDOW).join('\n')}`));
  const byDir = new Map();
  for (const f of files) if (!f.aux) (byDir.get(dirname(f.path)) ?? byDir.set(dirname(f.path), []).get(dirname(f.path))).push(f);
  const pairs = [];
  for (const c of chosen) {
    const at = firstChangedLine(gitDir, c.sha, c.path);
    if (at == null) continue;
    let text;
    try {
      text = git(gitDir, ['show', `${c.sha}:${c.path}`], { stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      continue;
    }
    const file = snapshot.get(c.path);
    const lines = text.split('\n');
    const from = Math.max(0, Math.min(at - 10, lines.length - WINDOW));
    const negs = [];
    const seenPaths = new Set([c.path]);
    const query = c.body ? `${c.question}\n${c.body}` : c.question;
    for (const i of bm25.search(query, 40)) {
      const w = wins[i];
      if (seenPaths.has(w.file.path)) continue;
      seenPaths.add(w.file.path);
      negs.push(['bm25', windowPassage(w.file, w.lines, w.from)]);
      if (negs.length >= NEGATIVES - 1) break;
    }
    const dirMates = sample((byDir.get(dirname(c.path)) ?? []).filter((f) => !seenPaths.has(f.path)), 1, (f) => `dir:${c.sha}:${f.path}`);
    for (const f of dirMates) {
      const fl = f.text.split('\n');
      const best = bm25.search(query, 400).map((i) => wins[i]).find((w) => w.file.path === f.path);
      negs.push(['folder', windowPassage(f, fl, best ? best.from : 0)]);
    }
    if (!negs.length) continue;
    pairs.push({
      kind: 'change',
      repo: entry.repo,
      language: file.language,
      split: entry.split,
      id: `${entry.repo}@${c.sha.slice(0, 12)}`,
      query: c.question,
      query_body: c.body,
      path: c.path,
      positive: windowPassage(file, lines, from),
      negatives: negs.map(([, p]) => p),
      negative_kinds: negs.map(([k]) => k),
    });
  }
  return { available: found.length, pairs };
}

// ---------------------------------------------------------------------------------------------

mkdirSync(OUT, { recursive: true });
for (const s of ['train', 'dev']) writeFileSync(join(OUT, `${s}.jsonl`), '');
const stats = { seed: SEED, doc_cap: DOC_CAP, change_cap: CHANGE_CAP, negatives: NEGATIVES, repos: [] };
for (const entry of manifest.repos) {
  if (ONLY && !ONLY.includes(entry.repo)) continue;
  const gitDir = mirrorOf(entry.repo);
  const row = { repo: entry.repo, language: entry.language, split: entry.split };
  if (!gitDir) {
    console.error(`${entry.repo}: no mirror under ${mirrors} (skipped)`);
    stats.repos.push({ ...row, missing: true });
    continue;
  }
  const t0 = Date.now();
  const files = readTree(gitDir, entry.commit, entry.language);
  const doc = mineDoc(entry, files);
  const change = mineChange(entry, gitDir, files);
  const lines = [...doc.pairs, ...change.pairs].map((p) => JSON.stringify(p) + '\n').join('');
  appendFileSync(join(OUT, `${entry.split}.jsonl`), lines);
  Object.assign(row, { files: files.length, doc_available: doc.available, doc: doc.pairs.length, change_available: change.available, change: change.pairs.length });
  stats.repos.push(row);
  console.error(`${entry.repo} (${entry.language}, ${entry.split}): ${files.length} files, doc ${doc.pairs.length}/${doc.available}, change ${change.pairs.length}/${change.available}, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
const sum = (k, s) => stats.repos.filter((r) => !s || r.split === s).reduce((a, r) => a + (r[k] ?? 0), 0);
stats.totals = Object.fromEntries(['train', 'dev'].map((s) => [s, { repos: stats.repos.filter((r) => r.split === s && !r.missing).length, doc: sum('doc', s), change: sum('change', s) }]));
stats.languages = [...new Set(stats.repos.filter((r) => !r.missing).map((r) => r.language))].sort();
writeFileSync(join(OUT, 'stats.json'), JSON.stringify(stats, null, 2) + '\n');
console.error(JSON.stringify(stats.totals), `${stats.languages.length} languages`);
