// The SWE-bench Lite file-localization protocol of LocAgent (Chen et al., "LocAgent: Graph-Guided
// LLM Agents for Code Localization", arXiv 2503.09089, Table 4; its evaluation/eval_metric.py),
// used by scripts/bench/swebench.mjs:
//
// - the 274 instances of SWE-bench Lite's 300 that have function-level ground truth (the 26 below
//   are left out, as LocAgent's evaluation leaves them out);
// - gold files = the files the golden patch edits;
// - Acc@k: the first k distinct files of the answer hold every gold file (LocAgent's acc_at_k
//   counts the gold files among the first k predictions against min(k, gold files), so with more
//   gold files than k the first k must all be gold).

/** The instances LocAgent's evaluation leaves out of SWE-bench Lite (300 → 274). */
export const EXCLUDED = new Set([
  ...['10914', '11049', '11099', '11564', '11964', '12915', '13220', '14411', '14915', '15213', '15400', '15902'].map((n) => `django__django-${n}`),
  'matplotlib__matplotlib-25332',
  'pytest-dev__pytest-5227',
  'scikit-learn__scikit-learn-13439',
  ...['11400', '12171', '15308', '15345', '16106', '17022', '17655', '19487', '20590', '21055', '21614'].map((n) => `sympy__sympy-${n}`),
]);

/** The files a unified diff (git format) edits, in order of appearance, each once. */
export function patchFiles(patch) {
  const out = [];
  for (const line of patch.split('\n')) {
    // `diff --git a/P b/Q`: Q is the file after the change (P for a deleted file, which has /dev/null as +++).
    const m = /^diff --git a\/(.+?) b\/(.+)$/.exec(line);
    if (m && !out.includes(m[2])) out.push(m[2]);
  }
  if (out.length) return out;
  // A diff without `diff --git` headers: the `+++ b/…` lines.
  for (const line of patch.split('\n')) {
    const m = /^\+\+\+ b\/(\S+)/.exec(line);
    if (m && !out.includes(m[1])) out.push(m[1]);
  }
  return out;
}

/** Distinct items in first-seen order. */
export const distinct = (items) => [...new Set(items)];

/** LocAgent's hit at k: the gold files among the first k distinct files number min(k, |gold|). */
export function hitAt(files, gold, k) {
  const top = distinct(files).slice(0, k);
  const found = top.filter((f) => gold.includes(f)).length;
  return gold.length > 0 && found === Math.min(k, gold.length);
}

/** 1-based rank of each gold file among the distinct files of the answer (0: not there). */
export function goldRanks(files, gold) {
  const d = distinct(files);
  return gold.map((g) => d.indexOf(g) + 1);
}

/** The smallest k at which every gold file is in the first k distinct files (0: never). */
export function allGoldRank(files, gold) {
  const ranks = goldRanks(files, gold);
  return ranks.length && ranks.every((r) => r > 0) ? Math.max(...ranks) : 0;
}

export const KS = [1, 3, 5, 10];

/** Acc@1/3/5/10 (and mean tokens where rows carry them) of rows `{ files, gold, tokens? }`. */
export function accuracy(rows) {
  const n = rows.length || 1;
  const m = { n: rows.length };
  for (const k of KS) m[`Acc@${k}`] = rows.filter((r) => hitAt(r.files, r.gold, k)).length / n;
  const tokens = rows.map((r) => r.tokens).filter((t) => t != null);
  if (tokens.length) m.tokens = tokens.reduce((a, b) => a + b, 0) / tokens.length;
  return m;
}

/**
 * How the problem statement names a gold file: 'path' (its path, or the path's tail from the
 * package directory on, e.g. `seaborn/_core/scales.py` inside a traceback's absolute path),
 * 'name' (only its file name, e.g. `scales.py`), or null.
 */
export function namedIn(statement, file) {
  const parts = file.split('/');
  for (let i = 0; i < parts.length - 1; i++) {
    if (statement.includes(parts.slice(i).join('/'))) return 'path';
  }
  const name = parts.at(-1);
  // The bare file name, not as part of a longer name (`test_scales.py` does not name `scales.py`).
  const re = new RegExp(`(^|[^A-Za-z0-9_])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
  return re.test(statement) ? 'name' : null;
}

/** A coarse kind of an answer's file, to see what crowds the answers. */
export function fileKind(path) {
  const p = `/${path.toLowerCase()}`;
  const name = p.slice(p.lastIndexOf('/') + 1);
  if (/\/(tests?|testing)\/|\/test_[^/]*$|_tests?\.py$|\/conftest\.py$/.test(p)) return 'test';
  if (/\.(po|pot|mo)$/.test(name) || /\/locale\//.test(p)) return 'translation';
  if (/^(changes|changelog|news|history|authors)([.-]|$)/.test(name) || /\/(changelog|changes)(\.d)?\//.test(p)) return 'changelog';
  if (/\/(docs?|doc_src)\//.test(p) || /\.(rst|md|txt)$/.test(name)) return 'docs';
  if (/\/(examples?|galleries|tutorials?|benchmarks?|asv_bench)\//.test(p)) return 'example';
  if (/\.py[iw]?$/.test(name)) return 'source';
  return 'other';
}
