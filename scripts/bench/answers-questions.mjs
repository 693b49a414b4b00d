// Questions for the answer-quality benchmark (scripts/bench/answers.sh), made at run time from
// public repositories' git history and trees (nothing of them is committed here):
//
// - doc sentence → function: a function or method with a doc comment; the comment is blanked in
//   the indexed copy (line numbers kept) and its first sentence is the question; the target is the
//   definition's lines.
// - change description → file: a commit that changed exactly one source file (tests, docs,
//   examples and build files may change beside it), whose subject is a real description (at least
//   five words once conventional-commit prefixes, PR / issue numbers and backticks are removed; no
//   merge, bump, release, revert, typo, format or lint commits; the subject does not name the
//   file); at most six questions per file. The tree is indexed at the snapshot commit.
//
// Every choice is deterministic (sorted, then sampled by a hash of the question), so the same
// mirrors and snapshot commits give the same questions on every machine.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, basename, extname } from 'node:path';

export const LANGUAGES = {
  python: ['.py'],
  go: ['.go'],
  rust: ['.rs'],
  javascript: ['.js', '.mjs', '.cjs', '.jsx'],
  typescript: ['.ts', '.tsx', '.mts', '.cts'],
  java: ['.java'],
};
const SOURCE_EXT = new Set(Object.values(LANGUAGES).flat());
export const languageOf = (path) => Object.entries(LANGUAGES).find(([, exts]) => exts.includes(extname(path)))?.[0];

/** Tests, examples, docs, benches, fixtures, vendored and generated code: not a change's target. */
export function isAuxiliary(path) {
  const p = `/${path.toLowerCase()}`;
  const name = basename(p);
  return (
    /\/(tests?|__tests__|spec|specs|testing|testdata|test_data|fixtures?|_?examples?|docs?|benches|benchmarks?|scripts|vendor|third_party|node_modules|dist|build|\.github)\//.test(p) ||
    /^test_|_test\.|\.test\.|\.spec\.|tests?\.[a-z]+$|^conftest\.py$|test\.java$|^setup\.py$/.test(name) ||
    name.endsWith('.d.ts') ||
    name.endsWith('.min.js')
  );
}

export const isSource = (path) => SOURCE_EXT.has(extname(path)) && !isAuxiliary(path);

export const hash = (s) => createHash('sha256').update(s).digest('hex');

/** Deterministic sample of at most `n` items (ordered by a hash of `key(item)`). */
export function sample(items, n, key) {
  return [...items].sort((a, b) => (hash(key(a)) < hash(key(b)) ? -1 : 1)).slice(0, n);
}

const git = (gitDir, args, opts = {}) =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8', maxBuffer: 1 << 30, ...opts });

/** A marker beside a written tree (not in it: the tree is indexed as it is). */
const done = (dir) => `${dir}.complete`;

/** Write the snapshot's tree to `dir` (once; a marker beside it says it is whole). */
export function checkout(gitDir, commit, dir) {
  if (existsSync(done(dir))) return;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = execFileSync('git', ['--git-dir', gitDir, 'archive', '--format=tar', commit], { maxBuffer: 2 ** 31 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  writeFileSync(done(dir), commit);
}

export function listFiles(dir, prefix = '') {
  const out = [];
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    if (name === '.git') continue;
    const rel = prefix ? `${prefix}/${name}` : name;
    const st = statSync(join(dir, rel));
    if (st.isDirectory()) out.push(...listFiles(dir, rel));
    else if (st.isFile()) out.push(rel);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Change description → file
// ---------------------------------------------------------------------------------------------

const SKIP_SUBJECT =
  /\b(merge|merged|bump|bumps|bumped|release|released|releasing|revert|reverts|reverted|typos?|format|formatting|formatted|fmt|rustfmt|gofmt|prettier|lint|linter|linting|clippy|eslint|changelog|version)\b/i;

/** The subject as a question, or null when it is not a real description of the change. */
export function cleanSubject(subject) {
  let s = subject.trim();
  s = s.replace(/^\[[^\]]*\]\s*/, ''); // [component]
  s = s.replace(/^[a-z][a-z0-9_-]*(\([^)]*\))?!?:\s*/i, ''); // feat(x): / fix: / docs!:
  s = s.replace(/\(\s*(#|gh-)\d+\s*\)/gi, ' ').replace(/\b(closes|fixes|fixed|resolves)?\s*(#|gh-)\d+\b/gi, ' ');
  s = s.replace(/`/g, '').replace(/\s+/g, ' ').trim();
  if (SKIP_SUBJECT.test(subject)) return null;
  if (s.split(' ').filter((w) => /[a-z]/i.test(w)).length < 5) return null;
  return s;
}

/** Whether the subject names the file (its name, or its stem as a word). */
export function namesFile(subject, path) {
  const lower = subject.toLowerCase();
  const name = basename(path).toLowerCase();
  const stem = name.slice(0, name.length - extname(name).length);
  if (lower.includes(name)) return true;
  if (stem.length < 3) return false;
  const esc = stem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^a-z0-9_])${esc}([^a-z0-9_]|$)`).test(lower);
}

export function changeQuestions(gitDir, commit, { perFile = 6, limit = 80 } = {}) {
  const atSnapshot = new Set(git(gitDir, ['ls-tree', '-r', '--name-only', commit]).split('\n').filter(Boolean));
  const log = git(gitDir, ['log', '--no-merges', '--format=%x00%H%x01%s', '--name-only', commit]);
  const found = [];
  for (const entry of log.split('\0').slice(1)) {
    const [head, ...rest] = entry.split('\n');
    const [sha, subject] = head.split('\x01');
    const files = rest.map((l) => l.trim()).filter(Boolean);
    const sources = files.filter(isSource);
    if (sources.length !== 1) continue;
    const [path] = sources;
    if (!atSnapshot.has(path)) continue;
    const question = cleanSubject(subject);
    if (!question || namesFile(question, path)) continue;
    found.push({ kind: 'change', id: sha.slice(0, 12), question, path, language: languageOf(path) });
  }
  // At most `perFile` questions per file (a hash-ordered choice), then a hash-ordered sample.
  const perPath = new Map();
  const capped = sample(found, found.length, (q) => q.id).filter((q) => {
    const n = perPath.get(q.path) ?? 0;
    perPath.set(q.path, n + 1);
    return n < perFile;
  });
  return { available: found.length, questions: sample(capped, limit, (q) => q.id) };
}

// ---------------------------------------------------------------------------------------------
// Doc sentence → function
// ---------------------------------------------------------------------------------------------

/** The first sentence of a doc comment's first paragraph (markup kept as written), or null. */
export function firstSentence(lines) {
  const para = [];
  for (const raw of lines) {
    const l = raw.trim();
    if (!l) {
      if (para.length) break;
      continue;
    }
    if (/^[@:#]|^\.\. |^(Args|Arguments|Returns|Raises|Parameters|Example|Examples|Note):?$/.test(l)) break;
    para.push(l);
  }
  const text = para.join(' ').replace(/\s+/g, ' ').trim();
  const m = text.match(/^(.+?[.!?])(\s|$)/);
  const s = (m ? m[1] : text).trim();
  const words = s.split(' ').filter((w) => /[a-z]/i.test(w));
  if (words.length < 4 || words.length > 60) return null;
  if (/^(deprecated|todo|fixme|see |copyright|license|safety)/i.test(s)) return null;
  return s;
}

const indentOf = (l) => l.length - l.trimStart().length;

/** Line index of the `}` closing a definition opened at `start` (formatter layout: same indent). */
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

const RUST_FN = /^\s*(pub(\([^)]*\))?\s+)?((const|async|unsafe|extern\s+"[^"]*")\s+)*fn\s+[A-Za-z_]/;
const GO_FN = /^func\s+(\([^)]*\)\s*)?[A-Za-z_]\w*\s*[([]/;
const JS_FN =
  /^\s*(export\s+)?(default\s+)?((public|private|protected|static|async|readonly|override|abstract|get|set)\s+)*(function\s*\*?\s*[A-Za-z_$][\w$]*\s*[<(]|[A-Za-z_$][\w$]*\s*(<[^>]*>)?\s*\([^)]*\)?\s*(:\s*[^{]+)?\{?\s*$|(const|let|var)\s+[A-Za-z_$][\w$]*\s*=\s*(async\s+)?(function|\([^)]*\)\s*(:\s*[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)|[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+\s*=\s*(async\s+)?function\b)/;
const JAVA_FN =
  /^\s*(@\w+\s+)*((public|private|protected|static|final|abstract|synchronized|native|default)\s+)*(<[^>]+>\s+)?[\w<>[\],.? ]+\s+[a-z_$][\w$]*\s*\(/;
const NOT_FN = /^\s*(if|for|while|switch|catch|return|else|new|throw|class|interface|enum|@interface|type|module)\b/;

/** Functions with doc comments in one file: `{ name?, start, end, docLines: [from, to], question }` (0-based). */
export function docFunctions(language, text) {
  const lines = text.split('\n');
  const out = [];
  const push = (docFrom, docTo, defLine, end, docText) => {
    const question = firstSentence(docText);
    if (question && end != null && end > defLine) out.push({ start: defLine, end, docLines: [docFrom, docTo], question });
  };
  if (language === 'python') {
    for (let i = 0; i < lines.length; i++) {
      if (!/^\s*(async\s+)?def\s+\w+\s*\(/.test(lines[i])) continue;
      const ind = indentOf(lines[i]);
      let sig = i;
      while (sig < lines.length && !/:\s*(#.*)?$/.test(lines[sig])) sig++;
      const d = sig + 1;
      if (d >= lines.length) continue;
      const m = lines[d].trim().match(/^[rRuU]?("""|''')/);
      if (!m) continue;
      const quote = m[1];
      const after = lines[d].trim().slice(m[0].length);
      let docTo = d;
      const doc = [];
      if (after.includes(quote)) doc.push(after.slice(0, after.indexOf(quote)));
      else {
        doc.push(after);
        docTo = d + 1;
        while (docTo < lines.length && !lines[docTo].includes(quote)) doc.push(lines[docTo++]);
        if (docTo >= lines.length) continue;
        doc.push(lines[docTo].slice(0, lines[docTo].indexOf(quote)));
      }
      let end = docTo;
      for (let k = docTo + 1; k < lines.length; k++) {
        if (lines[k].trim() && indentOf(lines[k]) <= ind) break;
        if (lines[k].trim()) end = k;
      }
      if (end === docTo) continue; // only a docstring: nothing left once it is blanked
      push(d, docTo, i, end, doc);
    }
    return out;
  }
  const isDef = { rust: (l) => RUST_FN.test(l), go: (l) => GO_FN.test(l), java: (l) => JAVA_FN.test(l) && !NOT_FN.test(l) }[language] ??
    ((l) => JS_FN.test(l) && !NOT_FN.test(l));
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i].trim();
    let docFrom = i;
    let docTo;
    let doc = [];
    if (language === 'rust' || language === 'go') {
      const marker = language === 'rust' ? /^\/\/\/(?!\/)/ : /^\/\/(?!\/)/;
      if (!marker.test(t) || (i > 0 && marker.test(lines[i - 1].trim()))) continue;
      docTo = i;
      while (docTo + 1 < lines.length && marker.test(lines[docTo + 1].trim())) docTo++;
      doc = lines.slice(i, docTo + 1).map((l) => l.trim().replace(marker, '').replace(/^\s/, ''));
    } else {
      if (!t.startsWith('/**')) continue;
      docTo = i;
      while (docTo < lines.length && !lines[docTo].includes('*/')) docTo++;
      if (docTo >= lines.length) continue;
      doc = lines
        .slice(i, docTo + 1)
        .map((l) => l.trim().replace(/^\/\*\*/, '').replace(/\*\/$/, '').replace(/^\*\s?/, '').trim());
    }
    let def = docTo + 1;
    if (language !== 'rust' && language !== 'go' && def < lines.length && !lines[def].trim()) def++; // `/** … */`, a blank line, the definition
    while (def < lines.length && /^\s*(#\[|@[A-Z]\w*(\(.*\))?\s*$)/.test(lines[def])) def++;
    if (def >= lines.length || !isDef(lines[def])) continue;
    if (language === 'go' && !/^\/\/\s*\w/.test(lines[docFrom].trim())) continue;
    push(docFrom, docTo, def, braceEnd(lines, def), doc);
    i = docTo;
  }
  return out;
}

/**
 * The doc-question copy of a snapshot: every source file with its doc comments blanked where a
 * question was taken from (line numbers kept), and the questions (sampled, at most `limit`).
 */
export function docQuestions(treeDir, outDir, { limit = 120 } = {}) {
  const all = [];
  const texts = new Map();
  for (const path of listFiles(treeDir)) {
    const language = languageOf(path);
    if (!language || isAuxiliary(path)) continue;
    const text = readFileSync(join(treeDir, path), 'utf8');
    texts.set(path, text);
    for (const f of docFunctions(language, text)) all.push({ ...f, path, language });
  }
  const chosen = sample(all, limit, (q) => `${q.path}:${q.start}`);
  const blank = new Map();
  for (const q of chosen) {
    const set = blank.get(q.path) ?? [];
    set.push(q.docLines);
    blank.set(q.path, set);
  }
  if (!existsSync(done(outDir))) {
    rmSync(outDir, { recursive: true, force: true });
    for (const path of listFiles(treeDir)) {
      const target = join(outDir, path);
      mkdirSync(dirname(target), { recursive: true });
      let content = readFileSync(join(treeDir, path));
      if (blank.has(path)) {
        const lines = content.toString('utf8').split('\n');
        for (const [from, to] of blank.get(path)) for (let k = from; k <= to; k++) lines[k] = '';
        content = lines.join('\n');
      }
      writeFileSync(target, content);
    }
    writeFileSync(done(outDir), 'doc copy');
  }
  const questions = chosen.map((q) => ({
    kind: 'doc',
    id: `${q.path}:${q.start + 1}`,
    question: q.question,
    path: q.path,
    language: q.language,
    startLine: q.start + 1,
    endLine: q.end + 1,
  }));
  return { available: all.length, questions };
}
